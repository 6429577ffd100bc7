#include "compare/server_process.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <thread>

namespace narad::compare {
namespace {

TEST(ProcParseTest, VmHwmIsReadInBytes) {
    // Rule: peak RSS comes from the VmHWM line, in kB.
    EXPECT_EQ(parse_vm_hwm_bytes("Name:\tx\nVmPeak:\t 900 kB\nVmHWM:\t    1234 kB\nVmRSS: 1 kB\n"),
              std::optional<uint64_t>(1234 * 1024));
    EXPECT_FALSE(parse_vm_hwm_bytes("Name:\tx\n").has_value());
}

TEST(ProcParseTest, StatCpuTicksSurviveACommandWithSpacesAndParentheses) {
    // Rule: utime + stime + cutime + cstime are counted from the last ')', whatever the command
    // name holds.
    const std::string stat =
        "4242 (my (odd) server) S 1 4242 4242 0 -1 4194560 500 0 0 0 170 30 5 7 20 0 9 0";
    EXPECT_EQ(parse_stat_cpu_ticks(stat), std::optional<uint64_t>(212));
    EXPECT_FALSE(parse_stat_cpu_ticks("4242 (x) S 1 2").has_value());
    EXPECT_FALSE(parse_stat_cpu_ticks("4242 (x) S 1 2 3 4 5 6 7 8 9 10 11 x 13").has_value());
    EXPECT_FALSE(parse_stat_cpu_ticks("garbage").has_value());
}

TEST(ProcParseTest, ParentPidAndDescendants) {
    // Rule: the parent pid is the second field after the last ')'; a tree holds the root and
    // every process whose ancestry leads to it, nothing else.
    EXPECT_EQ(parse_stat_ppid("77 (etcd (member)) S 42 77 77 0"), std::optional<pid_t>(42));
    EXPECT_FALSE(parse_stat_ppid("garbage").has_value());
    std::vector<std::pair<pid_t, pid_t>> parents{{42, 1}, {77, 42}, {78, 77}, {90, 1}, {91, 90}};
    EXPECT_EQ(descendants_of(42, parents), (std::vector<pid_t>{42, 77, 78}));
    EXPECT_EQ(descendants_of(90, parents), (std::vector<pid_t>{90, 91}));
}

TEST(ServerProcessTest, CostCountsTheProcessesItStarted) {
    // Rule: a server's peak RSS and CPU include its live children (Narad's etcd member): the tree
    // of a shell running two sleeps is the shell and both sleeps, and its RSS is more than the
    // shell's alone.
    char dir[] = "/tmp/narad-process-test-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    ServerProcess process;
    ProcessSpec spec;
    spec.executable = "sh";
    spec.args = {"-c", "sleep 60 & sleep 60 & wait"};
    spec.log_path = std::string(dir) + "/log";
    ASSERT_TRUE(process.start(spec).is_ok());
    std::vector<pid_t> tree;
    for (int i = 0; i < 500 && tree.size() < 3; ++i) {
        tree = process_tree(process.pid());
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(tree.size(), 3u);
    EXPECT_EQ(tree.front(), process.pid());
    auto shell_alone =
        parse_vm_hwm_bytes(read_text_file("/proc/" + std::to_string(process.pid()) + "/status"));
    ASSERT_TRUE(shell_alone.has_value());
    EXPECT_GT(process.peak_rss_bytes().value_or(0), *shell_alone);
    process.stop(5'000);
    std::filesystem::remove_all(dir);
}

TEST(FindExecutableTest, SearchesPathAndRejectsMissingFiles) {
    // Rule: a bare name is looked up in PATH; a path must be executable.
    auto sh = find_executable("sh");
    ASSERT_TRUE(sh.is_ok());
    EXPECT_TRUE(sh->ends_with("/sh"));
    EXPECT_FALSE(find_executable("no-such-binary-narad-compare").is_ok());
    EXPECT_FALSE(find_executable("/nonexistent/dir/tool").is_ok());
}

TEST(ServerProcessTest, StartReadsProcAndStopTerminates) {
    // Rule: a started process is running, has a peak RSS, and stop() ends it with SIGTERM.
    char dir[] = "/tmp/narad-process-test-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    ServerProcess process;
    ProcessSpec spec;
    spec.executable = "sleep";
    spec.args = {"60"};
    spec.log_path = std::string(dir) + "/log";
    ASSERT_TRUE(process.start(spec).is_ok());
    EXPECT_TRUE(process.running());
    EXPECT_GT(process.peak_rss_bytes().value_or(0), 0u);
    EXPECT_TRUE(process.cpu_seconds().has_value());
    process.stop(5'000);
    EXPECT_FALSE(process.running());
    EXPECT_EQ(process.exit_description(), "signal 15");
    std::filesystem::remove_all(dir);
}

TEST(ServerProcessTest, MissingExecutableFailsToStart) {
    // Rule: a system whose binary is absent fails at start with a message naming it.
    ServerProcess process;
    ProcessSpec spec;
    spec.executable = "no-such-server-narad-compare";
    spec.log_path = "/dev/null";
    auto status = process.start(spec);
    ASSERT_FALSE(status.is_ok());
    EXPECT_NE(status.message().find("no-such-server-narad-compare"), std::string::npos);
}

}  // namespace
}  // namespace narad::compare
