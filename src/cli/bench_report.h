// What `narad bench` prints: Go's lines on stderr, unchanged for a plain run ("producing N × SB
// with W workers...", "produce: ... latency p50=... p95=... p99=...", "consume: N msgs in ..."),
// followed by our extra lines (MB/s, p999, errors by status, ack outcomes, end-to-end latency),
// and with --json one machine-readable object on stdout. Pure functions of a finished run.
#pragma once

#include <cstdint>
#include <string>

#include "cli/bench_engine.h"
#include "cli/bench_workload.h"

namespace narad::cli::bench {

struct BenchReport {
    BenchConfig config;
    uint64_t payload_bytes = 0;
    bool timed_payload = false;
    OpResult produce;
    bool consumed = false;
    OpResult consume;  // ok = messages received; elapsed to the last consume or ack
    OpResult ack;
    uint64_t received_run = 0;
    uint64_t lapsed = 0;
    uint64_t ack_failed = 0;
    LatencySummary end_to_end;
};

// The lines printed before the run starts.
std::string format_start(const BenchConfig& config, uint64_t payload_bytes);
// The lines printed after it.
std::string format_result(const BenchReport& report);
// The --json object (one line).
std::string format_json(const BenchReport& report);

}  // namespace narad::cli::bench
