#include "storage/storage_metrics.h"

namespace narad::storage {

StorageMetrics& storage_metrics() {
    static StorageMetrics* instance = [] {
        auto& r = metrics::Registry::global();
        return new StorageMetrics{
            .fsync_seconds =
                r.histogram("narad_storage_fsync_duration_seconds",
                            "Time to fdatasync a partition log segment", metrics::latency_bounds())
                    .get(),
            .flush_seconds = r.histogram("narad_storage_flush_duration_seconds",
                                         "Time to write, sync and verify one commit group",
                                         metrics::latency_bounds())
                                 .get(),
            .flush_bytes = r.counter("narad_storage_flush_bytes_total",
                                     "Bytes written to partition logs by commits")
                               .get(),
            .open_logs =
                r.gauge("narad_open_partition_logs", "Partition logs open on this node").get(),
            .idle_logs_evicted = r.counter("narad_idle_logs_evicted_total",
                                           "Partition logs closed because they were idle")
                                     .get(),
            .retention_bytes_deleted = r.counter("narad_storage_retention_bytes_deleted_total",
                                                 "Segment bytes deleted by retention")
                                           .get(),
            .retention_messages_deleted =
                r.counter("narad_storage_retention_messages_deleted_total",
                          "Records deleted by retention")
                    .get(),
            .retention_run_seconds =
                r.histogram("narad_storage_retention_run_duration_seconds",
                            "Time of one retention pass over a log", metrics::latency_bounds())
                    .get(),
        };
    }();
    return *instance;
}

}  // namespace narad::storage
