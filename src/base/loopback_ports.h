// Ports on 127.0.0.1 for tests and benchmarks that start servers of their own. Every port handed
// out was free when chosen, lies below the kernel's ephemeral range (net.ipv4.ip_local_port_range,
// 32768 and up here), so no outgoing connection of another process takes it before the caller
// binds it, and is claimed against every other process that uses this helper: an flock on
// <tmp>/narad-test-port-<port>.lock, held until this process exits (the kernel drops it then, so a
// crashed run leaves nothing held). Without the claim, two test binaries run side by side
// (ctest -j) could both see a port free and start a server each on it. One process never hands
// out the same port twice. Thread-safe.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "base/assert.h"
#include "base/mutex.h"

namespace narad {

namespace loopback_ports_detail {

inline bool bindable(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    ::close(fd);
    return free;
}

// The file whose flock claims `port`.
inline std::string claim_path(uint16_t port) {
    return (std::filesystem::temp_directory_path() /
            ("narad-test-port-" + std::to_string(port) + ".lock"))
        .string();
}

// The descriptor stays open, and the lock held, until the process exits.
inline bool claim_across_processes(uint16_t port) {
    int fd = ::open(claim_path(port).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return false;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return false;
    }
    return true;
}

}  // namespace loopback_ports_detail

inline std::vector<uint16_t> unused_loopback_ports(size_t count) {
    constexpr uint32_t kFirst = 10'000;
    constexpr uint32_t kCount = 22'000;  // 10000-31999
    static Mutex mutex;
    static std::set<uint16_t> given GUARDED_BY(mutex);
    // Each process starts at its own place in the range, so side-by-side runs rarely meet.
    static uint32_t next GUARDED_BY(mutex) = static_cast<uint32_t>(::getpid()) * 331u % kCount;
    MutexLock lock(mutex);
    std::vector<uint16_t> ports;
    for (uint32_t tries = 0; ports.size() < count && tries < kCount; ++tries) {
        auto port = static_cast<uint16_t>(kFirst + next);
        next = (next + 1) % kCount;
        if (given.count(port) != 0) continue;
        if (loopback_ports_detail::bindable(port) &&
            loopback_ports_detail::claim_across_processes(port)) {
            given.insert(port);
            ports.push_back(port);
        }
    }
    NARAD_ASSERT(ports.size() == count, "unused_loopback_ports: no free port below 32000 left");
    return ports;
}

}  // namespace narad
