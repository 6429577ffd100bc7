#include "node/data_dir_metrics.h"

#include <vector>

namespace narad::node {

DataDirMetrics::DataDirMetrics(io::FileSystem& fs, Clock& clock, std::string data_dir,
                               meta::MetaStore& store, storage::LogManager& logs,
                               metrics::Registry& registry, Millis measure_interval)
    : fs_(fs),
      data_dir_(std::move(data_dir)),
      store_(store),
      logs_(logs),
      registry_(registry),
      topics_total_(registry.gauge("narad_topics_total", "Topics in the metastore.")),
      partitions_total_(
          registry.gauge("narad_partitions_total", "Partitions owned here with an open log.")),
      data_size_(registry.gauge("narad_data_dir_size_bytes", "Bytes under the data directory.")),
      data_available_(registry.gauge("narad_data_dir_available_bytes",
                                     "Free bytes on the data directory's disk.")),
      topic_bytes_(registry.gauge("narad_topic_bytes", "Bytes of a topic's segments.", {"topic"})),
      partition_bytes_(registry.gauge("narad_partition_size_bytes",
                                      "Bytes of a partition's segments.", {"topic", "partition"})),
      segments_(
          registry.gauge("narad_segments", "Segments of a partition.", {"topic", "partition"})),
      measuring_("narad-disk-usage", clock, measure_interval, [this] { measure(); }) {}

DataDirMetrics::~DataDirMetrics() { stop(); }

void DataDirMetrics::start() {
    if (collector_id_ == 0) collector_id_ = registry_.add_collector([this] { collect(); });
    measuring_.start();
    measuring_.run_now();
}

void DataDirMetrics::stop() {
    measuring_.stop();
    if (collector_id_ != 0) registry_.remove_collector(collector_id_);
    collector_id_ = 0;
}

void DataDirMetrics::measure() {
    auto space = fs_.space(data_dir_);
    available_bytes_ = space.is_ok() ? space->available_bytes : kUnknownSpace;
    uint64_t total = 0;
    std::vector<std::string> pending{data_dir_};
    while (!pending.empty()) {
        std::string directory = std::move(pending.back());
        pending.pop_back();
        auto names = fs_.list_directory(directory);
        if (!names.is_ok()) continue;
        for (const std::string& name : *names) {
            std::string path = io::join_path(directory, name);
            auto info = fs_.stat(path);
            if (!info.is_ok()) continue;
            if (info->is_directory) {
                pending.push_back(path);
            } else if (!name.ends_with(".tmp")) {
                total += info->size;
            }
        }
    }
    data_bytes_ = total;
}

void DataDirMetrics::collect() {
    meta::MetaSnapshot snapshot = store_.snapshot();
    topics_total_.get().set(static_cast<double>(snapshot->topics.size()));
    double open_partitions = 0;
    // Deleted topics' series go; the others are overwritten below.
    std::set<std::string> current;
    for (const auto& [name, topic] : snapshot->topics) current.insert(name);
    for (const std::string& gone : reported_topics_) {
        if (current.count(gone)) continue;
        topic_bytes_.remove({gone});
        partition_bytes_.remove_prefix({gone});
        segments_.remove_prefix({gone});
    }
    reported_topics_ = std::move(current);
    for (const auto& [name, topic] : snapshot->topics) {
        double bytes = 0;
        for (uint32_t p = 0; p < topic.partitions; ++p) {
            auto log = logs_.get_if_open(name, PartitionId(p));
            if (!log) continue;
            storage::LogStats stats = log->stats();
            ++open_partitions;
            bytes += static_cast<double>(stats.size_bytes);
            partition_bytes_.with({name, std::to_string(p)})
                .set(static_cast<double>(stats.size_bytes));
            segments_.with({name, std::to_string(p)}).set(stats.segments);
        }
        topic_bytes_.with({name}).set(bytes);
    }
    partitions_total_.get().set(open_partitions);
    // Measured by measure(): a scrape touches no disk.
    data_size_.get().set(static_cast<double>(data_bytes_.load()));
    if (uint64_t available = available_bytes_.load(); available != kUnknownSpace) {
        data_available_.get().set(static_cast<double>(available));
    }
}

}  // namespace narad::node
