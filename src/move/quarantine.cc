#include "move/quarantine.h"

#include <charconv>

#include "base/metrics.h"
#include "storage/frame_format.h"

namespace narad::move {
namespace {

struct QuarantineMetrics {
    metrics::Gauge& copies;
    metrics::Gauge& bytes;
};

QuarantineMetrics& quarantine_metrics() {
    auto& registry = metrics::Registry::global();
    static QuarantineMetrics instance{
        registry
            .gauge("narad_quarantined_copies",
                   "Partition copies this node set aside instead of deleting; each may hold the "
                   "only instance of some records and waits for an operator.")
            .get(),
        registry.gauge("narad_quarantined_bytes", "Bytes held by the quarantined copies.").get()};
    return instance;
}

// "p00003.quarantine-17..." -> 3; -1 when the name is not a partition's.
int64_t partition_of(std::string_view name) {
    if (name.size() < 6 || name[0] != 'p') return -1;
    int64_t partition = -1;
    auto [end, error] = std::from_chars(name.data() + 1, name.data() + 6, partition);
    return error == std::errc() && end == name.data() + 6 ? partition : -1;
}

}  // namespace

Result<std::string> set_aside(io::FileSystem& fs, Clock& clock, const std::string& path,
                              const std::string& wanted) {
    std::string target = wanted;
    if (fs.exists(target)) target = wanted + "-" + std::to_string(clock.wall_ms());
    NARAD_RETURN_IF_ERROR(fs.rename(path, target));
    NARAD_RETURN_IF_ERROR(fs.sync_directory(io::parent_path(target)));
    if (io::parent_path(target) != io::parent_path(path)) {
        NARAD_RETURN_IF_ERROR(fs.sync_directory(io::parent_path(path)));
    }
    return target;
}

bool holds_unexpired_records(io::FileSystem& fs, Clock& clock, const std::string& directory,
                             Millis retention) {
    auto names = fs.list_directory(directory);
    if (!names.is_ok()) return false;
    WallTime now = clock.wall_now();
    for (const std::string& name : *names) {
        if (!name.ends_with(storage::kLogSuffix)) continue;
        auto info = fs.stat(io::join_path(directory, name));
        if (!info.is_ok() || info->size == 0) continue;
        if (retention.count() == 0 || now - info->modified < retention) return true;
    }
    return false;
}

Status close_topic_partitions(io::FileSystem& fs, storage::LogManager& logs,
                              const std::string& topic) {
    auto names = fs.list_directory(logs.topic_directory(topic));
    if (!names.is_ok()) return Status::ok();
    for (const std::string& name : *names) {
        int64_t partition = partition_of(name);
        if (partition < 0 || name.size() != 6) continue;
        NARAD_RETURN_IF_ERROR(
            logs.close_partition(topic, PartitionId(static_cast<uint32_t>(partition))));
    }
    return Status::ok();
}

uint64_t directory_bytes(io::FileSystem& fs, const std::string& directory) {
    uint64_t total = 0;
    auto names = fs.list_directory(directory);
    if (!names.is_ok()) return 0;
    for (const std::string& name : *names) {
        std::string path = io::join_path(directory, name);
        auto info = fs.stat(path);
        if (!info.is_ok()) continue;
        if (!info->is_directory) {
            total += info->size;
            continue;
        }
        auto inner = fs.list_directory(path);
        if (!inner.is_ok()) continue;
        for (const std::string& file : *inner) {
            auto file_info = fs.stat(io::join_path(path, file));
            if (file_info.is_ok() && !file_info->is_directory) total += file_info->size;
        }
    }
    return total;
}

std::vector<QuarantinedCopy> list_quarantined(io::FileSystem& fs, const std::string& data_dir) {
    std::vector<QuarantinedCopy> copies;
    auto add = [&](std::string kind, std::string topic, int64_t partition, std::string path) {
        auto info = fs.stat(path);
        QuarantinedCopy copy{std::move(kind),
                             std::move(topic),
                             partition,
                             path,
                             directory_bytes(fs, path),
                             info.is_ok() ? info->modified : WallTime{}};
        copies.push_back(std::move(copy));
    };
    std::string moves = io::join_path(data_dir, ".moves");
    if (auto names = fs.list_directory(moves); names.is_ok()) {
        for (const std::string& name : *names) {
            size_t at = name.find(kQuarantineSuffix);
            if (at == std::string::npos) continue;
            std::string base = name.substr(0, at);  // <topic>-<N>
            size_t dash = base.rfind('-');
            int64_t partition = -1;
            if (dash != std::string::npos) {
                std::string_view digits = std::string_view(base).substr(dash + 1);
                std::from_chars(digits.data(), digits.data() + digits.size(), partition);
            }
            add("staging", dash == std::string::npos ? base : base.substr(0, dash), partition,
                io::join_path(moves, name));
        }
    }
    std::string topics = io::join_path(data_dir, "topics");
    if (auto names = fs.list_directory(topics); names.is_ok()) {
        for (const std::string& name : *names) {
            std::string path = io::join_path(topics, name);
            if (size_t at = name.find(kStaleIncarnationInfix); at != std::string::npos) {
                add("topic_incarnation", name.substr(0, at), -1, path);
                continue;
            }
            auto partitions = fs.list_directory(path);
            if (!partitions.is_ok()) continue;
            for (const std::string& partition : *partitions) {
                if (partition.find(kQuarantineSuffix) == std::string::npos) continue;
                add("partition", name, partition_of(partition), io::join_path(path, partition));
            }
        }
    }
    return copies;
}

void publish_quarantine_metrics(const std::vector<QuarantinedCopy>& copies) {
    uint64_t bytes = 0;
    for (const QuarantinedCopy& copy : copies) bytes += copy.bytes;
    QuarantineMetrics& metrics = quarantine_metrics();
    metrics.copies.set(static_cast<double>(copies.size()));
    metrics.bytes.set(static_cast<double>(bytes));
}

}  // namespace narad::move
