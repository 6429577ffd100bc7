// PartitionQueues: the consumer state of every partition this node has loaded, one PartitionQueue
// each, keyed by (topic, partition) and tagged with the topic incarnation it belongs to. A queue is
// loaded on first use from the partition's consumer.offset and registered with the
// OffsetCommitter, which persists it from then on; a dropped one is unregistered (optionally after
// one last write).
//
// It also counts, per partition, the messages retention deleted before they were acked, and fills
// the per-partition consume gauges at scrape time.
//
// Thread-safe: one mutex guards the table; each PartitionQueue has its own. Loading reads a small
// file, so it runs on a reader thread, never on an HTTP I/O thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/ids.h"
#include "base/mutex.h"
#include "base/status.h"
#include "io/file_system.h"
#include "meta/meta_store.h"
#include "queue/consume_metrics.h"
#include "queue/offset_committer.h"
#include "queue/partition_queue.h"
#include "storage/log_manager.h"
#include "storage/topic_directory.h"

namespace narad::queue {

// An offset of a loaded partition waiting for its dead letter (PartitionQueue::exhausted()).
struct ExhaustedMessage {
    std::string topic;
    IncarnationId incarnation;
    PartitionId partition;
    Exhausted exhausted;
    bool at_frontier = false;  // every offset below it is settled
};

// A leased offset to hand back (PartitionQueues::release).
struct HeldLease {
    PartitionId partition;
    Offset offset;
    LeaseId lease_id;
};

// The queue limits a topic's record sets.
QueueLimits limits_of(const meta::Topic& topic);

class PartitionQueues {
  public:
    PartitionQueues(io::FileSystem& fs, Clock& clock, meta::MetaStore& store,
                    storage::LogManager& logs, storage::TopicGuards& guards,
                    OffsetCommitter& committer);

    // The loaded queue of a partition of this incarnation, or null.
    std::shared_ptr<PartitionQueue> find(std::string_view topic, PartitionId partition,
                                         const IncarnationId& incarnation) const;
    // The queue of a partition, loading its persisted position on first use. Runs under the
    // topic's guard so it never registers state for a topic whose data is being purged; not_found
    // when `topic` is no longer the current incarnation.
    Result<std::shared_ptr<PartitionQueue>> load(const meta::Topic& topic, PartitionId partition);

    // Ends lapsed leases everywhere; the topics that had one, sorted, each once.
    std::vector<std::string> expire_leases();
    // Nacks leases a consume reserved but could not hand out; how many were handed back.
    size_t release(std::string_view topic, const std::vector<HeldLease>& leases);
    // Adds to a partition's count of messages retention deleted before they were acked.
    void count_dropped(std::string_view topic, PartitionId partition, uint64_t messages);

    std::vector<ExhaustedMessage> exhausted();
    // Settles one once its dead letter is durable; false when it no longer waits.
    bool settle_exhausted(const ExhaustedMessage& message);

    // Forgets every partition of the topic (its data is being deleted), without a last write.
    void drop_topic(std::string_view topic);
    // Forgets one partition, writing or discarding its last position as `last` says.
    void drop_partition(std::string_view topic, PartitionId partition, LastPosition last);
    // Applies changed topic limits to live queues.
    void apply_limits(const meta::MetaSnapshot& snapshot);

    std::optional<QueueStats> stats(std::string_view topic, PartitionId partition) const;
    std::optional<ConsumerPosition> position(std::string_view topic, PartitionId partition) const;
    // Sets the per-partition gauges of every loaded partition whose log is open.
    void report(ConsumeMetrics& metrics, WallTime now) const;

  private:
    struct Entry {
        std::shared_ptr<PartitionQueue> queue;
        IncarnationId incarnation;
        std::string offset_path;
        std::shared_ptr<std::atomic<uint64_t>> dropped;  // deleted by retention before acked
    };
    using Key = std::pair<std::string, uint32_t>;

    std::vector<std::pair<Key, Entry>> entries() const;

    io::FileSystem& fs_;
    Clock& clock_;
    meta::MetaStore& store_;
    storage::LogManager& logs_;
    storage::TopicGuards& guards_;
    OffsetCommitter& committer_;

    mutable Mutex mutex_;
    std::map<Key, Entry> queues_ GUARDED_BY(mutex_);
};

}  // namespace narad::queue
