// The consume side's Prometheus metrics, named and labelled as Narad's: counters updated as
// messages are handed out and settled, and per-partition gauges (lag, leases, acked-ahead, age of
// the oldest unacked message) filled at scrape time. Thread-safe (the metric types are atomic).
#pragma once

#include <string>

#include "base/clock.h"
#include "base/metrics.h"
#include "queue/partition_queue.h"
#include "storage/partition_log.h"

namespace narad::queue {

struct ConsumeMetrics {
    metrics::Family<metrics::Counter>& consumed;
    metrics::Family<metrics::Counter>& consumed_bytes;
    metrics::Family<metrics::Counter>& corrupt;
    metrics::Family<metrics::Counter>& empty;
    metrics::Family<metrics::Histogram>& wait;
    metrics::Family<metrics::Counter>& extended;
    metrics::Family<metrics::Counter>& nacked;
    metrics::Family<metrics::Counter>& ack_rejected;
    metrics::Family<metrics::Gauge>& lag;
    metrics::Family<metrics::Gauge>& dropped;
    metrics::Family<metrics::Gauge>& oldest_age;
    metrics::Family<metrics::Gauge>& in_flight;
    metrics::Family<metrics::Gauge>& acked_ahead;

    // Sets one partition's gauges from its queue and its open log.
    void report_partition(const std::string& topic, uint32_t partition, const QueueStats& stats,
                          const storage::PartitionLog& log, uint64_t dropped_messages,
                          WallTime now);
    // Drops a deleted topic's per-partition gauges.
    void remove_topic(const std::string& topic);
};

ConsumeMetrics& consume_metrics();

}  // namespace narad::queue
