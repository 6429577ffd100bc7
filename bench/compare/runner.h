// The run of `narad-compare`: for each workload, each system in turn — start its server in a
// fresh data directory, prepare, connect, warm up (discarded), run the measured phase, verify
// that every produced message was consumed and acked, read the server's peak RSS, stop it —
// and turn what the Flow counted into a RunRow. A system that fails to start or errors out gets
// a failed row and the run goes on. Every phase has a time limit; a watchdog thread aborts a
// phase that overstays it and, if that is not enough, kills the server so blocked client calls
// return. Workloads whose rate is a share of a system's max run after the others and use that
// system's own max from the referenced workload of the same run. Runs on the calling thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compare/driver.h"
#include "compare/report.h"
#include "compare/workload.h"

namespace narad::compare {

struct RunnerOptions {
    std::vector<std::string> systems;
    DriverEnv env;          // executable paths; data_dir is set per run
    std::string data_root;  // a fresh directory is made under it per run
    bool keep_data = false;
    int64_t warmup_timeout_ns = 60'000'000'000;
    int64_t drain_timeout_ns = 30'000'000'000;
    // How long past a phase's own limit the watchdog waits before aborting it, and then before
    // killing the server.
    int64_t watchdog_grace_ns = 15'000'000'000;
    std::function<void(const std::string&)> progress;  // one line at a time
};

// Workloads without ratePercentOfMax first, each group in the given order.
std::vector<Workload> order_workloads(std::vector<Workload> workloads);

// The messages/s a ratePercentOfMax workload is a share of, for `system`: the lower of produce
// and consume+ack msgs/s in the referenced workload's row; nullopt if that row is missing or
// failed.
std::optional<double> reference_rate(const std::vector<RunRow>& rows, const Workload& workload,
                                     const std::string& system);

class Runner {
  public:
    explicit Runner(RunnerOptions options) : options_(std::move(options)) {}

    // Runs every workload against every system; rows in run order.
    std::vector<RunRow> run(const std::vector<Workload>& workloads);

  private:
    RunRow run_one(const Workload& workload, const std::string& system,
                   const std::vector<RunRow>& done);
    void progress(const std::string& line) const;

    RunnerOptions options_;
};

}  // namespace narad::compare
