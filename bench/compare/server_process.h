// A server process started by `narad-compare` (narad, nats-server, redis-server): fork + exec
// with its output in a log file, killed by the kernel if the runner dies (PR_SET_PDEATHSIG), and
// stopped with SIGTERM, then SIGKILL after a grace period. Also what /proc says about it (peak
// RSS, CPU time) and the free loopback ports it is given. One owner thread starts and stops it;
// kill() and the /proc readers may be called from a watchdog thread meanwhile.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace narad::compare {

struct ProcessSpec {
    std::string executable;  // a path, or a name looked up in PATH
    std::vector<std::string> args;
    std::vector<std::pair<std::string, std::string>> env;  // added to this process's environment
    std::string log_path;                                  // stdout and stderr
};

class ServerProcess {
  public:
    ServerProcess() = default;
    ~ServerProcess();
    ServerProcess(const ServerProcess&) = delete;
    ServerProcess& operator=(const ServerProcess&) = delete;

    Status start(const ProcessSpec& spec);
    // Whether it is still running (reaps it if it exited).
    bool running();
    // SIGTERM, wait up to `grace_ms`, then SIGKILL. Idempotent.
    void stop(int64_t grace_ms);
    // SIGKILL now, from any thread (the watchdog); the owner still calls stop() to reap.
    void kill();
    pid_t pid() const { return pid_.load(); }
    // How it ended, once reaped: "exit 1", "signal 9".
    const std::string& exit_description() const { return exit_description_; }

    // What the server costs counts the processes it started too (Narad supervises its etcd
    // member; Redis forks to rewrite its AOF): both figures are over the server and its live
    // descendants (process_tree()).
    // The sum of their VmHWM (/proc/<pid>/status) in bytes: each one's peak, so an upper bound of
    // the peak of the sum.
    std::optional<uint64_t> peak_rss_bytes() const;
    // The sum of their utime + stime + cutime + cstime (/proc/<pid>/stat) in seconds: their own
    // CPU and that of the children they waited for.
    std::optional<double> cpu_seconds() const;
    // The last `bytes` of its log, for error messages.
    std::string log_tail(size_t bytes) const;

  private:
    void reap(bool block);

    std::atomic<pid_t> pid_{0};
    bool reaped_ = true;
    std::string exit_description_;
    std::string log_path_;
};

// The full path of `name` (searched in PATH unless it contains a '/'), or not_found.
Result<std::string> find_executable(const std::string& name);

// The whole text of a file (procfs included, whose sizes read 0); empty if it cannot be read.
std::string read_text_file(const std::string& path);

// `root` and every live descendant of it, found in /proc (root first).
std::vector<pid_t> process_tree(pid_t root);
// `root` and its descendants in a map of pid → parent pid (root first, then breadth first).
std::vector<pid_t> descendants_of(pid_t root, const std::vector<std::pair<pid_t, pid_t>>& parents);
// The parent pid in a /proc/<pid>/stat line.
std::optional<pid_t> parse_stat_ppid(const std::string& stat_text);

// Parsers of /proc text, exposed for tests: "VmHWM:  1234 kB" → bytes; the stat line → ticks of
// CPU (utime + stime + cutime + cstime).
std::optional<uint64_t> parse_vm_hwm_bytes(const std::string& status_text);
std::optional<uint64_t> parse_stat_cpu_ticks(const std::string& stat_text);

// CPU seconds this process (all threads) has used so far.
double self_cpu_seconds();

}  // namespace narad::compare
