#include "storage/storage_metrics.h"

namespace narad::storage {
namespace {

// Narad's buckets: STO for disk operations, the Prometheus defaults for retention runs.
std::vector<double> storage_bounds() {
    return {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1};
}
std::vector<double> default_bounds() { return {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}; }

metrics::Labels with_reason(const metrics::Labels& labels) {
    metrics::Labels out = labels;
    out.push_back("age");  // retention deletes by age only
    return out;
}

}  // namespace

StorageMetrics& storage_metrics() {
    static StorageMetrics* instance = [] {
        auto& r = metrics::Registry::global();
        const std::vector<std::string> partition = {"topic", "partition"};
        const std::vector<std::string> reason = {"topic", "partition", "reason"};
        return new StorageMetrics{
            .open_logs =
                r.gauge("narad_open_partition_logs", "Partition logs open on this node").get(),
            .idle_logs_evicted = r.counter("narad_idle_logs_evicted_total",
                                           "Partition logs closed because they were idle")
                                     .get(),
            .cold_retention_swept =
                r.counter("narad_cold_retention_swept_total",
                          "Closed partition logs opened by the cold retention walk to delete "
                          "expired segments")
                    .get(),
            .fsync_seconds = r.histogram("narad_storage_fsync_duration_seconds",
                                         "Time to fdatasync a partition log segment",
                                         storage_bounds(), partition),
            .flush_seconds = r.histogram("narad_storage_flush_duration_seconds",
                                         "Time to write, sync and verify one commit group",
                                         storage_bounds(), partition),
            .flush_bytes = r.counter("narad_storage_flush_bytes_total",
                                     "Bytes written to partition logs by commits", partition),
            .retention_bytes_deleted = r.counter("narad_storage_retention_bytes_deleted_total",
                                                 "Segment bytes deleted by retention", reason),
            .retention_messages_deleted =
                r.counter("narad_storage_retention_messages_deleted_total",
                          "Records deleted by retention", reason),
            .retention_run_seconds =
                r.histogram("narad_storage_retention_run_duration_seconds",
                            "Time of one retention pass over a log", default_bounds(), partition),
        };
    }();
    return *instance;
}

void StorageMetrics::remove_topic(const std::string& topic) {
    fsync_seconds.remove_prefix({topic});
    flush_seconds.remove_prefix({topic});
    flush_bytes.remove_prefix({topic});
    retention_bytes_deleted.remove_prefix({topic});
    retention_messages_deleted.remove_prefix({topic});
    retention_run_seconds.remove_prefix({topic});
}

LogMetrics::LogMetrics(const metrics::Labels& labels)
    : fsync_seconds(storage_metrics().fsync_seconds.with(labels)),
      flush_seconds(storage_metrics().flush_seconds.with(labels)),
      flush_bytes(storage_metrics().flush_bytes.with(labels)),
      retention_bytes_deleted(storage_metrics().retention_bytes_deleted.with(with_reason(labels))),
      retention_messages_deleted(
          storage_metrics().retention_messages_deleted.with(with_reason(labels))),
      retention_run_seconds(storage_metrics().retention_run_seconds.with(labels)) {}

}  // namespace narad::storage
