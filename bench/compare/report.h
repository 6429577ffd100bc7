// What `narad-compare` prints and writes: one row per (workload, system) with its durability,
// produce msgs/s and MB/s, end-to-end latency percentiles, consume+ack msgs/s, messages lost,
// the server's peak RSS and the client's CPU, plus Narad's ratio to each peer — for the batch
// routes (the like-for-like comparison with the peers' pipelined/async clients) and for the
// single-message routes. Also the limits table, the markdown section for docs/benchmarks.md and
// the CSV beside it. Pure functions of finished results; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compare/limits_probe.h"
#include "compare/workload.h"

namespace narad::compare {

struct RunRow {
    enum class Outcome { ok, failed, skipped };

    std::string workload;
    std::string system;
    std::string durability;  // the driver's full text
    Outcome outcome = Outcome::ok;
    std::string error;  // why it failed or was skipped
    std::vector<std::string> notes;

    double target_rate = 0;  // msgs/s asked for, 0 = max
    uint64_t produced = 0;   // produces the system acknowledged
    uint64_t produce_failed = 0;
    uint64_t acked = 0;  // unique messages consumed and acked
    uint64_t duplicates = 0;
    uint64_t lost = 0;  // produced but never acked
    double produce_msgs_per_s = 0;
    double produce_mb_per_s = 0;
    double consume_msgs_per_s = 0;  // acked unique messages per second
    uint64_t e2e_count = 0;
    int64_t e2e_p50_ns = 0;
    int64_t e2e_p99_ns = 0;
    int64_t e2e_p999_ns = 0;
    int64_t e2e_max_ns = 0;
    std::optional<uint64_t> server_peak_rss_bytes;
    double server_cpu_s = 0;
    double client_cpu_s = 0;
    double elapsed_s = 0;  // the measured phase, start to last ack

    bool ok() const { return outcome == Outcome::ok; }
};

// Narad's figure over a peer's. throughput: consume+ack msgs/s (> 1: Narad completes more
// messages per second); p99: end-to-end p99 latency (< 1: Narad's is lower). Empty when either
// row failed or the peer's figure is 0.
struct Ratio {
    std::optional<double> throughput;
    std::optional<double> p99;
};
Ratio compute_ratio(const RunRow& narad, const RunRow& peer);

// The row of `system` for `workload`, or nullptr.
const RunRow* find_row(const std::vector<RunRow>& rows, const std::string& workload,
                       const std::string& system);

// A short durability label for the table ("fsync per produce", ...); the system name if unknown.
std::string durability_label(const std::string& system);

struct ReportInput {
    std::string date;        // "2026-12-01 10:20 UTC"
    std::string command;     // how the run was started, e.g. "make bench" (may be empty)
    std::string invocation;  // narad-compare's own command line, exactly
    std::string commit;      // the commit of the code measured (may be empty)
    std::string machine;     // describe(MachineInfo)
    std::optional<LimitsResult> limits;
    std::vector<Workload> workloads;
    std::vector<RunRow> rows;
    double total_seconds = 0;
    double client_cpu_s = 0;  // over the whole run
};

std::string render_results_table(const std::vector<RunRow>& rows);
std::string render_limits_table(const LimitsResult& limits);
std::string render_workloads_table(const std::vector<Workload>& workloads);
// The generated section of docs/benchmarks.md (what goes between the markers).
std::string render_markdown(const ReportInput& input);
// One header line and one line per row, RFC 4180 quoting.
std::string render_csv(const std::vector<RunRow>& rows);

// Formatting helpers, exposed for tests: 90764.2 → "90,764"; 1.5e6 ns → "1.50".
std::string format_count(double value);
std::string format_ms(int64_t ns);
std::string format_ratio(std::optional<double> ratio);  // "1.23×" or "–"
std::string csv_field(const std::string& text);

}  // namespace narad::compare
