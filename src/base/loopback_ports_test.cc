#include "base/loopback_ports.h"

#include <gtest/gtest.h>

#include <set>

namespace narad {
namespace {

// Rule: the ports handed out are distinct, never handed out twice by one process, below the
// ephemeral range, bindable, and claimed: another open of a port's lock file cannot lock it.
TEST(LoopbackPortsTest, PortsAreDistinctFreeAndClaimed) {
    std::vector<uint16_t> first = unused_loopback_ports(4);
    std::vector<uint16_t> second = unused_loopback_ports(4);
    std::set<uint16_t> all(first.begin(), first.end());
    all.insert(second.begin(), second.end());
    EXPECT_EQ(all.size(), 8u) << "a port was handed out twice";
    for (uint16_t port : all) {
        EXPECT_GE(port, 10'000);
        EXPECT_LT(port, 32'000) << "inside the kernel's ephemeral range";
        EXPECT_TRUE(loopback_ports_detail::bindable(port)) << port;
        int fd = ::open(loopback_ports_detail::claim_path(port).c_str(), O_RDWR | O_CLOEXEC);
        ASSERT_GE(fd, 0) << "no lock file for port " << port;
        EXPECT_NE(::flock(fd, LOCK_EX | LOCK_NB), 0) << "port " << port << " is not claimed";
        ::close(fd);
    }
}

}  // namespace
}  // namespace narad
