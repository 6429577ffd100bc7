// DataDirMetrics: the gauges of what this node keeps, filled by a collector at each scrape: the
// metastore's topics, the partitions with an open log here with each one's bytes and segments (a
// deleted topic's series go), and the data directory's size and its disk's free bytes. The size
// and free bytes are measured every `measure_interval` on a thread of its own: a walk of a large
// data directory is not free, and a scrape (on an HTTP thread) must touch no disk.
//
// start()/stop() from one thread; measure() runs on the measuring thread (or a test's, with the
// measuring not started); the collector runs under the registry's render lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <set>
#include <string>

#include "base/metrics.h"
#include "base/periodic.h"
#include "io/file_system.h"
#include "meta/meta_store.h"
#include "storage/log_manager.h"

namespace narad::node {

class DataDirMetrics {
  public:
    // Measures every `measure_interval` of `clock`.
    DataDirMetrics(io::FileSystem& fs, Clock& clock, std::string data_dir, meta::MetaStore& store,
                   storage::LogManager& logs, metrics::Registry& registry,
                   Millis measure_interval = Millis(30'000));
    ~DataDirMetrics();  // stops

    // Adds the collector and starts measuring, with a first measure at once.
    void start();
    // Removes the collector and stops measuring.
    void stop();
    // Counts the bytes of the regular files under the data directory (temporary `.tmp` files
    // excluded) and reads the disk's free bytes, for the next scrapes.
    void measure();

  private:
    void collect();

    io::FileSystem& fs_;
    std::string data_dir_;
    meta::MetaStore& store_;
    storage::LogManager& logs_;
    metrics::Registry& registry_;
    metrics::Family<metrics::Gauge>& topics_total_;
    metrics::Family<metrics::Gauge>& partitions_total_;
    metrics::Family<metrics::Gauge>& data_size_;
    metrics::Family<metrics::Gauge>& data_available_;
    metrics::Family<metrics::Gauge>& topic_bytes_;
    metrics::Family<metrics::Gauge>& partition_bytes_;
    metrics::Family<metrics::Gauge>& segments_;
    static constexpr uint64_t kUnknownSpace = UINT64_MAX;
    std::atomic<uint64_t> data_bytes_{0};
    std::atomic<uint64_t> available_bytes_{kUnknownSpace};
    std::set<std::string> reported_topics_;  // only touched by the collector
    uint64_t collector_id_ = 0;
    PeriodicTask measuring_;  // last: stopped before the rest goes
};

}  // namespace narad::node
