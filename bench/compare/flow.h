// One phase (warm-up or measured) of one system in `narad-compare`: what every driver shares, so
// each system does exactly the same work and is counted the same way.
//
// - IdPayload: `narad bench`'s timed payload (cli/bench_payload.h: run id and send time) with a
//   16-hex-digit message id written over the filler right after the run id, so the consumer
//   can count unique messages and measure end-to-end latency.
// - Flow: hands message ids to producers (count or duration mode, open-loop pacing at a target
//   rate: id i is due i/rate seconds after the start), counts produce outcomes, records
//   end-to-end latency when a consumer receives a message, and counts a message as consumed only
//   once its ack succeeded (a bitmap of acked ids separates unique messages from redeliveries).
//   It also decides when consumers stop: every produced message acked, the drain timeout passed,
//   or the phase aborted (deadline or a watchdog).
//
// Thread-safety: every Flow method may be called from any driver thread at once (atomics, plus a
// mutex for the error counts); summaries are read once the driver has returned.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "cli/bench_engine.h"
#include "cli/bench_histogram.h"
#include "cli/bench_payload.h"

namespace narad::compare {

class IdPayload {
  public:
    static constexpr size_t kIdDigits = 16;
    static constexpr size_t kMinSize = cli::bench::BenchPayload::kMinTimedSize + kIdDigits;

    // `size` must be at least kMinSize; `run_id` has cli::bench::BenchPayload::kRunIdLength chars.
    IdPayload(uint64_t size, std::string run_id);

    std::string make(uint64_t id, int64_t sent_wall_ns) const;
    size_t size() const { return inner_.size(); }
    const std::string& run_id() const { return inner_.run_id(); }

    struct Parsed {
        uint64_t id = 0;
        int64_t sent_wall_ns = 0;
    };
    // The id and send time of one of this run's payloads; nullopt for anything else.
    std::optional<Parsed> parse(std::string_view payload) const;

  private:
    cli::bench::BenchPayload inner_;
    size_t id_position_ = 0;
};

struct FlowPlan {
    uint64_t count = 0;       // messages; 0 in duration mode
    int64_t duration_ns = 0;  // produce for this long; 0 in count mode
    double rate = 0;          // messages/s over all producers; 0 = as fast as possible
    uint64_t capacity = 0;    // most ids handed out (the bitmap's size); 0 = derived
    int64_t drain_timeout_ns = 30'000'000'000;  // after the producers finished
    int64_t timeout_ns = 180'000'000'000;       // the whole phase, from start()
};

// Ids the bitmap can track at most (8 MiB of bits).
inline constexpr uint64_t kFlowCapacityMax = uint64_t{1} << 26;

// The capacity a plan needs: count, or rate × duration, or kFlowCapacityMax.
uint64_t flow_capacity(const FlowPlan& plan);

// When consumers should stop (pure).
struct DrainInputs {
    bool aborted = false;
    bool producers_finished = false;
    uint64_t produced_ok = 0;
    uint64_t acked_unique = 0;
    int64_t now_ns = 0;
    int64_t producers_finished_at_ns = 0;
    int64_t drain_timeout_ns = 0;
};
bool consumers_should_stop(const DrainInputs& inputs);

class Flow {
  public:
    Flow(FlowPlan plan, const IdPayload& payload);
    Flow(const Flow&) = delete;
    Flow& operator=(const Flow&) = delete;

    // Starts the clock: pacing, rates and the deadline count from here.
    void start();
    int64_t start_ns() const { return start_ns_; }
    int64_t deadline_ns() const { return start_ns_ + plan_.timeout_ns; }
    const FlowPlan& plan() const { return plan_; }

    // ---- producers ----
    struct Claim {
        uint64_t first = 0;
        uint32_t count = 0;
    };
    // Up to `max` consecutive ids that are due now (sleeping until the next one is due when
    // paced); nullopt once the count or duration is done or the phase aborted.
    std::optional<Claim> claim(uint32_t max);
    // The payload of message `id`, stamped with the current wall time.
    std::string payload(uint64_t id) const;
    void produced(uint64_t messages, int64_t latency_ns);
    void produce_failed(uint64_t messages, std::string_view reason);
    // Called once, when every producer has finished and every outstanding produce was answered.
    void producers_finished();

    // ---- consumers ----
    // A consumer received `payload`: records end-to-end latency; the id if it is this run's.
    std::optional<uint64_t> received(std::string_view payload);
    // The ack of message `id` succeeded.
    void acked(uint64_t id);
    // Several acks in one answer (latency of the ack request, for the ack stats).
    void acks_answered(uint64_t messages, int64_t latency_ns);
    void ack_failed(uint64_t messages, std::string_view reason);
    void consume_failed(std::string_view reason);
    bool consumers_should_stop() const;

    // ---- control ----
    void abort(std::string_view reason);
    bool aborted() const { return aborted_.load(); }
    std::string abort_reason() const;

    // ---- results (once the driver returned) ----
    const cli::bench::OpStats& produce_stats() const { return produce_; }
    const cli::bench::OpStats& ack_stats() const { return acks_; }
    const cli::LatencyHistogram& end_to_end() const { return end_to_end_; }
    uint64_t produced_ok() const { return produce_.ok(); }
    uint64_t acked_unique() const { return acked_unique_.load(); }
    uint64_t duplicates() const { return duplicates_.load(); }
    uint64_t received_total() const { return received_.load(); }
    uint64_t foreign() const { return foreign_.load(); }
    int64_t last_ack_ns() const { return last_ack_ns_.load(); }
    std::map<std::string, uint64_t> consume_errors() const;

  private:
    bool ended(uint64_t next_id, int64_t now_ns) const;

    const FlowPlan plan_;
    const IdPayload& payload_;
    const uint64_t capacity_;
    const cli::bench::RatePacer pacer_;  // per message: id i is due i / rate s after the start
    int64_t start_ns_ = 0;
    std::atomic<uint64_t> next_id_{0};
    std::unique_ptr<std::atomic<uint64_t>[]> acked_bits_;
    std::atomic<uint64_t> acked_unique_{0};
    std::atomic<uint64_t> duplicates_{0};
    std::atomic<uint64_t> received_{0};
    std::atomic<uint64_t> foreign_{0};
    std::atomic<int64_t> last_ack_ns_{0};
    std::atomic<bool> producers_finished_{false};
    std::atomic<int64_t> producers_finished_at_ns_{0};
    std::atomic<bool> aborted_{false};
    cli::bench::OpStats produce_;
    cli::bench::OpStats acks_;
    cli::LatencyHistogram end_to_end_;
    mutable Mutex mutex_;
    std::string abort_reason_ GUARDED_BY(mutex_);
    std::map<std::string, uint64_t> consume_errors_ GUARDED_BY(mutex_);
};

}  // namespace narad::compare
