#include "compare/machine.h"

#include <gtest/gtest.h>

namespace narad::compare {
namespace {

TEST(MachineTest, CpuinfoGivesModelAndCount) {
    // Rule: the CPU count is the number of "processor" entries; the model is the first one's.
    MachineInfo info;
    parse_cpuinfo(
        "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n\n"
        "processor\t: 1\nmodel name\t: AMD EPYC 7B13\n",
        info);
    EXPECT_EQ(info.cpu_count, 2u);
    EXPECT_EQ(info.cpu_model, "AMD EPYC 7B13");
    MachineInfo none;
    parse_cpuinfo("", none);
    EXPECT_EQ(none.cpu_model, "unknown CPU");
}

TEST(MachineTest, MeminfoGivesTotalInBytes) {
    // Rule: MemTotal is in KiB.
    MachineInfo info;
    parse_meminfo("MemTotal:       24576000 kB\nMemFree: 1 kB\n", info);
    EXPECT_EQ(info.memory_bytes, uint64_t(24576000) * 1024);
}

TEST(MachineTest, OsReleasePrettyNameWithoutQuotes) {
    // Rule: PRETTY_NAME is taken without its quotes.
    EXPECT_EQ(parse_os_release("NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"),
              "Debian GNU/Linux 12 (bookworm)");
    EXPECT_EQ(parse_os_release("NAME=x\n"), "");
}

TEST(MachineTest, DescriptionNamesEverything) {
    // Rule: the description gives count, model, RAM, kernel and OS.
    MachineInfo info;
    info.cpu_count = 2;
    info.cpu_model = "AMD EPYC 7B13";
    info.memory_bytes = uint64_t(24) << 30;
    info.kernel = "Linux 6.1.0";
    info.os = "Debian GNU/Linux 12 (bookworm)";
    EXPECT_EQ(describe(info),
              "2 × AMD EPYC 7B13, 24.0 GiB RAM, Linux 6.1.0, Debian GNU/Linux 12 (bookworm)");
}

}  // namespace
}  // namespace narad::compare
