// A workload of `narad-compare`, read from a YAML file in the shape of the OpenMessaging
// Benchmark's workload files: OMB's key names where OMB has one (name, topics,
// partitionsPerTopic, messageSize, producersPerTopic, consumerPerSubscription, producerRate,
// testDurationMinutes, payloadFile, subscriptionsPerTopic, consumerBacklogSizeGB), plus
// testDurationSeconds and our own keys (batchSize, count, ratePercentOfMax, rateReference,
// warmupCount, timeoutSeconds, description). Unknown keys are errors, so a typo cannot silently
// fall back to a default. Parsing is a pure function of the text (yaml-cpp's exceptions stay
// inside); load_workload adds the file-system part. Value type, any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace narad::compare {

// Limits on what one workload may ask for.
inline constexpr uint32_t kPartitionsMax = 1024;
inline constexpr uint32_t kClientsMax = 256;  // producers, and consumers
inline constexpr uint32_t kBatchMax = 10'000;
inline constexpr uint64_t kMessageBytesMin = 64;  // room for run id, message id and send time
inline constexpr uint64_t kMessageBytesMax = 1'000'000;
inline constexpr uint64_t kCountMax = 100'000'000;
inline constexpr int64_t kDurationSecondsMax = 3600;
inline constexpr uint64_t kWarmupCountMax = 1'000'000;
inline constexpr int64_t kTimeoutSecondsMax = 3600;

struct Workload {
    std::string name;  // name
    std::string description;
    std::string source_path;        // the file it was read from ("" when parsed from text)
    uint32_t topics = 1;            // topics: only 1 is supported
    uint32_t subscriptions = 1;     // subscriptionsPerTopic: only 1 is supported
    uint32_t partitions = 1;        // partitionsPerTopic (Narad raises it to its minimum, 3)
    uint64_t message_bytes = 1024;  // messageSize
    bool message_bytes_set = false;
    uint32_t producers = 1;  // producersPerTopic: producer connections
    uint32_t consumers = 1;  // consumerPerSubscription: consumer connections
    // batchSize: messages per request (Narad batch routes) and per pipeline flush (Redis), and
    // each of their producers' window of unacknowledged messages. NATS runs as its own best
    // client does instead: a publish window of 1024 and pull requests of at least 500
    // (nats_driver.cc).
    uint32_t batch = 1;
    double producer_rate = 0;        // producerRate, messages/s over all producers; 0 = "max"
    double rate_percent_of_max = 0;  // ratePercentOfMax: a share of this system's own max
    std::string rate_reference;      // rateReference: the max-throughput workload it refers to
    uint64_t count = 0;              // count: messages (0 in duration mode)
    int64_t duration_ns = 0;         // testDurationSeconds / testDurationMinutes
    uint64_t warmup_count = 5'000;   // warmupCount: messages run first and discarded
    int64_t timeout_ns = 180'000'000'000;  // timeoutSeconds: limit on the measured phase
    std::string payload_file;              // payloadFile, resolved against the file's directory

    bool rate_limited() const { return producer_rate > 0 || rate_percent_of_max > 0; }
};

// Parses one workload. `base_dir` resolves a relative payloadFile ("" leaves it as written).
Result<Workload> parse_workload(std::string_view yaml_text, const std::string& base_dir = "");

// Reads and parses `path`. A payloadFile must exist and be at most kMessageBytesMax bytes; when
// messageSize is not given, the file's size is the message size. The file's bytes themselves are
// not sent: every payload must carry its run id, message id and send time (see flow.h).
Result<Workload> load_workload(const std::string& path);

// "count 100000" or "30 s", for tables.
std::string describe_amount(const Workload& workload);
// "max", "20000 msg/s" or "50% of max-throughput-1kb".
std::string describe_rate(const Workload& workload);

}  // namespace narad::compare
