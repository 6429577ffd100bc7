#include "queue/partition_queues.h"

#include <algorithm>

#include "base/log.h"
#include "queue/consumer_offset_file.h"

namespace narad::queue {

QueueLimits limits_of(const meta::Topic& topic) {
    QueueLimits limits;
    limits.visibility_timeout = Millis(topic.visibility_timeout_ms);
    limits.max_in_flight = static_cast<uint32_t>(topic.max_in_flight_per_partition);
    limits.max_acked_ahead = static_cast<uint32_t>(topic.max_acked_ahead_per_partition);
    limits.max_deliveries = static_cast<uint32_t>(std::max<int64_t>(topic.max_deliveries, 0));
    return limits;
}

PartitionQueues::PartitionQueues(io::FileSystem& fs, Clock& clock, meta::MetaStore& store,
                                 storage::LogManager& logs, storage::TopicGuards& guards,
                                 OffsetCommitter& committer)
    : fs_(fs), clock_(clock), store_(store), logs_(logs), guards_(guards), committer_(committer) {}

std::shared_ptr<PartitionQueue> PartitionQueues::find(std::string_view topic, PartitionId partition,
                                                      const IncarnationId& incarnation) const {
    MutexLock lock(mutex_);
    auto it = queues_.find({std::string(topic), partition.value()});
    if (it == queues_.end() || it->second.incarnation != incarnation) return nullptr;
    return it->second.queue;
}

Result<std::shared_ptr<PartitionQueue>> PartitionQueues::load(const meta::Topic& topic,
                                                              PartitionId partition) {
    if (auto queue = find(topic.name, partition, topic.incarnation)) return queue;
    auto guard = guards_.guard(topic.name);
    ReaderLock topic_lock(*guard);
    meta::MetaSnapshot current_view = store_.snapshot();
    const meta::Topic* current = current_view->find_topic(topic.name);
    if (current == nullptr || current->incarnation != topic.incarnation) {
        return Status(Errc::not_found, "topic not found");
    }
    std::string path =
        io::join_path(logs_.partition_directory(topic.name, partition), kConsumerOffsetFile);
    ConsumerPosition start;
    auto loaded = read_consumer_position(fs_, path);
    if (loaded.is_ok()) {
        start = std::move(*loaded);
    } else if (loaded.code() != Errc::not_found) {
        // A damaged position must not skip messages: start over from the beginning of the log
        // (at-least-once: everything is delivered again).
        NARAD_LOG_ERROR("consumer position {} unreadable ({}); redelivering from the start", path,
                        loaded.status().to_string());
    }
    MutexLock lock(mutex_);
    Key key{topic.name, partition.value()};
    auto it = queues_.find(key);
    if (it != queues_.end() && it->second.incarnation == topic.incarnation) {
        return it->second.queue;
    }
    Entry entry{std::make_shared<PartitionQueue>(clock_, std::move(start), limits_of(topic)),
                topic.incarnation, path, std::make_shared<std::atomic<uint64_t>>(0)};
    committer_.add(path, entry.queue);
    queues_[key] = entry;
    return entry.queue;
}

std::vector<std::pair<PartitionQueues::Key, PartitionQueues::Entry>> PartitionQueues::entries()
    const {
    MutexLock lock(mutex_);
    return {queues_.begin(), queues_.end()};
}

std::vector<std::string> PartitionQueues::expire_leases() {
    std::vector<std::string> topics;
    for (auto& [key, entry] : entries()) {
        if (entry.queue->expire_leases() > 0) topics.push_back(key.first);
    }
    std::sort(topics.begin(), topics.end());
    topics.erase(std::unique(topics.begin(), topics.end()), topics.end());
    return topics;
}

size_t PartitionQueues::release(std::string_view topic, const std::vector<HeldLease>& leases) {
    meta::MetaSnapshot record_view = store_.snapshot();
    const meta::Topic* record = record_view->find_topic(topic);
    if (record == nullptr) return 0;
    size_t released = 0;
    for (const HeldLease& lease : leases) {
        if (auto queue = find(topic, lease.partition, record->incarnation)) {
            if (queue->nack(lease.offset, lease.lease_id).is_ok()) ++released;
        }
    }
    return released;
}

void PartitionQueues::count_dropped(std::string_view topic, PartitionId partition,
                                    uint64_t messages) {
    MutexLock lock(mutex_);
    auto it = queues_.find({std::string(topic), partition.value()});
    if (it != queues_.end()) it->second.dropped->fetch_add(messages);
}

std::vector<ExhaustedMessage> PartitionQueues::exhausted() {
    std::vector<ExhaustedMessage> out;
    for (const auto& [key, entry] : entries()) {
        Offset frontier = entry.queue->stats().frontier;
        for (Exhausted& waiting : entry.queue->exhausted()) {
            bool at_frontier = waiting.offset == frontier;
            out.push_back({key.first, entry.incarnation, PartitionId(key.second),
                           std::move(waiting), at_frontier});
        }
    }
    return out;
}

bool PartitionQueues::settle_exhausted(const ExhaustedMessage& message) {
    std::shared_ptr<PartitionQueue> queue =
        find(message.topic, message.partition, message.incarnation);
    return queue && queue->settle_exhausted(message.exhausted.offset);
}

void PartitionQueues::drop_topic(std::string_view topic) {
    std::vector<std::string> paths;
    {
        MutexLock lock(mutex_);
        for (auto it = queues_.begin(); it != queues_.end();) {
            if (it->first.first == topic) {
                paths.push_back(it->second.offset_path);
                it = queues_.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (const auto& path : paths) committer_.remove(path, LastPosition::discard);
}

void PartitionQueues::drop_partition(std::string_view topic, PartitionId partition,
                                     LastPosition last) {
    std::string path;
    {
        MutexLock lock(mutex_);
        auto it = queues_.find({std::string(topic), partition.value()});
        if (it == queues_.end()) return;
        path = it->second.offset_path;
        queues_.erase(it);
    }
    committer_.remove(path, last);
}

void PartitionQueues::apply_limits(const meta::MetaSnapshot& snapshot) {
    MutexLock lock(mutex_);
    for (auto& [key, entry] : queues_) {
        const meta::Topic* topic = snapshot->find_topic(key.first);
        if (topic != nullptr && topic->incarnation == entry.incarnation) {
            entry.queue->set_limits(limits_of(*topic));
        }
    }
}

std::optional<QueueStats> PartitionQueues::stats(std::string_view topic,
                                                 PartitionId partition) const {
    MutexLock lock(mutex_);
    auto it = queues_.find({std::string(topic), partition.value()});
    if (it == queues_.end()) return std::nullopt;
    return it->second.queue->stats();
}

std::optional<ConsumerPosition> PartitionQueues::position(std::string_view topic,
                                                          PartitionId partition) const {
    MutexLock lock(mutex_);
    auto it = queues_.find({std::string(topic), partition.value()});
    if (it == queues_.end()) return std::nullopt;
    return it->second.queue->position();
}

void PartitionQueues::report(ConsumeMetrics& metrics, WallTime now) const {
    for (const auto& [key, entry] : entries()) {
        auto log = logs_.get_if_open(key.first, PartitionId(key.second));
        if (!log) continue;
        metrics.report_partition(key.first, key.second, entry.queue->stats(), *log,
                                 entry.dropped->load(), now);
    }
}

}  // namespace narad::queue
