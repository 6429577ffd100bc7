// The workload-independent part of `narad bench`, meant to be reused by other load tools (a
// `bench compare` against peer brokers): open-loop rate pacing, per-operation counters with a
// latency histogram and errors by status, result summaries, and running several connection
// stages (each a net::LoadClient with its own generator) side by side. OpStats may be updated
// from any client thread; summaries are taken once the stages have finished.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "cli/bench_histogram.h"
#include "net/load_client.h"

namespace narad::cli::bench {

// Monotonic time (latencies, pacing) and wall time (timestamps inside payloads), in ns.
int64_t mono_ns();
int64_t wall_ns();

// Open-loop pacing: at `messages_per_second` with `batch` messages per request, request k is due
// k * batch / rate seconds after the start, however late earlier answers came back. A rate of 0
// means as fast as possible.
class RatePacer {
  public:
    RatePacer(double messages_per_second, uint32_t batch);
    bool limited() const { return rate_ > 0; }
    // Offset of request `index` from the start of the run, in ns (0 when unlimited).
    int64_t due_offset_ns(uint64_t index) const;

  private:
    double rate_;
    uint32_t batch_;
};

// Counters of one operation (produce, consume, ack). Thread-safe.
class OpStats {
  public:
    // `messages` settled by one request that took `latency_ns`, answered at `at_ns` (mono).
    void success(uint64_t messages, int64_t latency_ns, int64_t at_ns);
    // `messages` that failed; `reason` is the HTTP status ("503") or "transport".
    void failure(uint64_t messages, std::string_view reason);
    // A request that came back empty-handed (a 204 poll): counted, not an error.
    void empty(int64_t latency_ns);

    uint64_t ok() const { return ok_.load(); }
    uint64_t failed() const { return failed_.load(); }
    uint64_t requests() const { return requests_.load(); }
    int64_t last_success_ns() const { return last_success_ns_.load(); }
    const LatencyHistogram& latency() const { return latency_; }
    std::map<std::string, uint64_t> errors() const;

  private:
    std::atomic<uint64_t> ok_{0};
    std::atomic<uint64_t> failed_{0};
    std::atomic<uint64_t> requests_{0};
    std::atomic<int64_t> last_success_ns_{0};
    LatencyHistogram latency_;
    mutable Mutex mutex_;
    std::map<std::string, uint64_t> errors_ GUARDED_BY(mutex_);
};

struct LatencySummary {
    uint64_t count = 0;
    int64_t p50_ns = 0;
    int64_t p95_ns = 0;
    int64_t p99_ns = 0;
    int64_t p999_ns = 0;
    int64_t max_ns = 0;
    double mean_ns = 0;

    static LatencySummary of(const LatencyHistogram& histogram);
};

struct OpResult {
    uint64_t ok = 0;
    uint64_t failed = 0;
    uint64_t requests = 0;
    int64_t elapsed_ns = 0;
    LatencySummary latency;
    std::map<std::string, uint64_t> errors;

    double messages_per_second() const;
    // Decimal megabytes (10^6 bytes) per second for messages of `message_bytes`.
    double megabytes_per_second(uint64_t message_bytes) const;
};

// Freezes `stats` into a result over [start_ns, end_ns] (mono).
OpResult summarize(const OpStats& stats, int64_t start_ns, int64_t end_ns);

// A group of connections driven by one generator on its own LoadClient.
struct Stage {
    std::string name;
    net::LoadOptions options;
    net::LoadClient::Generator generator;
    std::function<void()> on_finished;  // called once its connections have all closed
};

// Runs every stage concurrently, one thread each, and waits for all. The first failure (e.g. no
// connection could be made) is returned, prefixed with the stage name.
Status run_stages(std::vector<Stage> stages);

}  // namespace narad::cli::bench
