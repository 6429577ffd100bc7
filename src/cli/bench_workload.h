// The Narad traffic of `narad bench`: producers posting to /produce (or /produce/batch with
// --batch > 1) and, with --consume, consumers running consume → ack (or the batch routes) on
// separate connections at the same time, measuring end-to-end latency from the send time carried
// in each payload. Generators are called by net::LoadClient threads; each connection's generator
// and response callbacks run one at a time, and shared counters are atomic. The request and
// response shapes are pure functions, tested on their own.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/ack_retry.h"
#include "cli/bench_engine.h"
#include "cli/bench_payload.h"
#include "net/load_client.h"

namespace narad::cli::bench {

struct BenchConfig {
    std::string topic;
    int64_t count = 10'000;   // messages (ignored when duration_ns > 0)
    int64_t duration_ns = 0;  // produce for this long instead of `count` messages
    int64_t size = 256;
    uint32_t connections = 8;  // producer connections
    uint32_t consumers = 8;    // consumer connections (with consume)
    uint32_t batch = 1;
    double rate = 0;  // messages/s over all producers, 0 = as fast as possible
    int64_t keys = 0;
    int64_t partition = -1;  // >= 0: every message is pinned to this partition
    bool consume = false;
    uint32_t threads = 1;  // client threads per stage when not rate-limited
    int64_t drain_timeout_ns = 30'000'000'000;
    std::string consume_wait = "2s";
    AckRetryPolicy ack_policy;  // retries of failed acks (tests shrink the backoff)
};

// ---- Request and response shapes (pure) ----

// The key of message `index` with `keys` distinct keys ("" when keys == 0).
std::string message_key(uint64_t index, int64_t keys);
// /v1/topics/<t>/produce[?key=<k>][?partition=<n>] (partition when >= 0)
std::string produce_target(std::string_view topic, std::string_view key, int64_t partition = -1);
// {"messages":[{"payload":<p>,"key":"<k>"}, ...]} — payloads are JSON values embedded verbatim;
// with partition >= 0 each message carries "partition":<n>.
std::string produce_batch_body(const std::vector<std::string>& payloads,
                               const std::vector<std::string>& keys, int64_t partition = -1);
// "accepted" of a 202 batch answer.
std::optional<uint64_t> parse_accepted(std::string_view body);

// /v1/topics/<t>/consume?wait=<w>[&max=<n>] (max only for batches)
std::string consume_target(std::string_view topic, uint32_t batch, std::string_view wait);

struct Delivery {
    std::string payload;  // raw JSON text of "payload"
    std::string receipt_handle;
};
// The request shapes of a workload: one message per request, or Narad 3.1's batch routes.
enum class Shape { single, batch };
inline Shape shape_of(uint32_t batch) { return batch > 1 ? Shape::batch : Shape::single; }

// A single (200) or batch ({"messages":[...]}) consume answer; nullopt if unparsable.
std::optional<std::vector<Delivery>> parse_deliveries(std::string_view body, Shape shape);

std::string ack_target(std::string_view topic, std::string_view receipt_handle);
std::string ack_batch_target(std::string_view topic);
std::string ack_batch_body(const std::vector<std::string>& handles);
struct AckResult {
    std::string receipt_handle;
    int status = 0;
};
std::optional<std::vector<AckResult>> parse_ack_results(std::string_view body);

// When a consumer connection should close: never while producers run; afterwards once this
// run's messages have all been consumed, after two empty polls in a row (Go's rule), or when the
// drain timeout has passed.
struct DrainState {
    bool producers_done = false;
    uint64_t produced_ok = 0;
    uint64_t consumed_run = 0;
    int empty_polls = 0;  // consecutive, counted only once producers are done
    int64_t now_ns = 0;
    int64_t producers_done_at_ns = 0;
    int64_t drain_timeout_ns = 0;
};
bool should_stop_consuming(const DrainState& state);

// ---- The running workloads ----

class ProduceWorkload {
  public:
    ProduceWorkload(const BenchConfig& config, const BenchPayload& payload, int64_t start_ns);
    std::optional<net::LoadRequest> next(uint32_t connection);
    const OpStats& stats() const { return stats_; }

  private:
    const BenchConfig& config_;
    const BenchPayload& payload_;
    const int64_t start_ns_;
    const RatePacer pacer_;
    const uint64_t total_requests_;  // 0 in duration mode
    std::atomic<uint64_t> next_request_{0};
    OpStats stats_;
};

class ConsumeWorkload {
  public:
    ConsumeWorkload(const BenchConfig& config, const BenchPayload& payload, uint32_t connections);
    std::optional<net::LoadRequest> next(uint32_t connection);

    // Called when the producers have finished, with how many messages they got accepted.
    void producers_finished(uint64_t produced_ok);

    const OpStats& consume_stats() const { return consume_stats_; }
    const OpStats& ack_stats() const { return ack_stats_; }
    const LatencyHistogram& end_to_end() const { return end_to_end_; }
    uint64_t received() const { return received_.load(); }
    uint64_t received_run() const { return received_run_.load(); }
    uint64_t lapsed() const { return lapsed_.load(); }
    uint64_t ack_failed() const { return ack_failed_.load(); }

  private:
    struct PendingAck {
        std::vector<std::string> handles;
        int attempt = 1;
        int64_t not_before_ns = 0;
    };
    struct Connection {
        std::deque<PendingAck> acks;
        int empty_polls = 0;
    };

    net::LoadRequest ack_request(Connection& state, PendingAck ack);
    net::LoadRequest consume_request(Connection& state);
    void settle(Connection& state, PendingAck ack, const std::vector<int>& statuses,
                const std::vector<std::string>& reasons);

    const BenchConfig& config_;
    const BenchPayload& payload_;
    std::vector<Connection> connections_;  // each touched only by its own connection
    std::atomic<bool> producers_done_{false};
    std::atomic<uint64_t> produced_ok_{0};
    std::atomic<int64_t> producers_done_at_ns_{0};
    std::atomic<uint64_t> received_{0};
    std::atomic<uint64_t> received_run_{0};
    std::atomic<uint64_t> lapsed_{0};
    std::atomic<uint64_t> ack_failed_{0};
    OpStats consume_stats_;
    OpStats ack_stats_;
    LatencyHistogram end_to_end_;
};

}  // namespace narad::cli::bench
