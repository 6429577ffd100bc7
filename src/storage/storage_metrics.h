// The storage module's Prometheus metrics, registered once in the global registry; every log and
// the LogManager share them. Thread-safe (the metric types are atomic).
#pragma once

#include "base/metrics.h"

namespace narad::storage {

struct StorageMetrics {
    metrics::Histogram& fsync_seconds;             // narad_storage_fsync_duration_seconds
    metrics::Histogram& flush_seconds;             // narad_storage_flush_duration_seconds
    metrics::Counter& flush_bytes;                 // narad_storage_flush_bytes_total
    metrics::Gauge& open_logs;                     // narad_open_partition_logs
    metrics::Counter& idle_logs_evicted;           // narad_idle_logs_evicted_total
    metrics::Counter& retention_bytes_deleted;     // narad_storage_retention_bytes_deleted_total
    metrics::Counter& retention_messages_deleted;  // ..._retention_messages_deleted_total
    metrics::Histogram& retention_run_seconds;     // ..._retention_run_duration_seconds
};

StorageMetrics& storage_metrics();

}  // namespace narad::storage
