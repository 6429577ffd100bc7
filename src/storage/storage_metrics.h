// The storage module's Prometheus metrics, named and labelled as Narad's: node-wide gauges and
// counters, and per-partition families ({topic, partition}) from which each log takes its own
// children once, at open. Thread-safe (the metric types are atomic).
#pragma once

#include <string>

#include "base/metrics.h"

namespace narad::storage {

struct StorageMetrics {
    metrics::Gauge& open_logs;                           // narad_open_partition_logs
    metrics::Counter& idle_logs_evicted;                 // narad_idle_logs_evicted_total
    metrics::Counter& cold_retention_swept;              // narad_cold_retention_swept_total
    metrics::Family<metrics::Histogram>& fsync_seconds;  // narad_storage_fsync_duration_seconds
    metrics::Family<metrics::Histogram>& flush_seconds;  // narad_storage_flush_duration_seconds
    metrics::Family<metrics::Counter>& flush_bytes;      // narad_storage_flush_bytes_total
    metrics::Family<metrics::Counter>& retention_bytes_deleted;     // {topic, partition, reason}
    metrics::Family<metrics::Counter>& retention_messages_deleted;  // {topic, partition, reason}
    metrics::Family<metrics::Histogram>& retention_run_seconds;     // {topic, partition}

    // Drops every per-partition series of a deleted topic.
    void remove_topic(const std::string& topic);
};

StorageMetrics& storage_metrics();

// One partition log's children of the per-partition families.
struct LogMetrics {
    explicit LogMetrics(const metrics::Labels& topic_partition);
    metrics::Histogram& fsync_seconds;
    metrics::Histogram& flush_seconds;
    metrics::Counter& flush_bytes;
    metrics::Counter& retention_bytes_deleted;
    metrics::Counter& retention_messages_deleted;
    metrics::Histogram& retention_run_seconds;
};

}  // namespace narad::storage
