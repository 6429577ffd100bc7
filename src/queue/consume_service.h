// ConsumeService: the consume side of a node. It owns the PartitionQueue of every partition this
// node serves (loaded lazily from consumer.offset, registered with the OffsetCommitter), picks
// partitions for a topic-wide consume (rotating, so no partition starves), reads the leased records
// from the partition logs, and parks long-polls until a message can be delivered or their wait runs
// out.
//
// Waiters are woken when a partition's high watermark advances (on_append), when an offset is
// nacked or its lease lapses (a reaper checks every `reaper_interval`), and when an ack frees an
// in-flight slot. A corrupt record is skipped (and counted); records that retention deleted before
// they were consumed are skipped as dropped.
//
// Thread-safe. consume() never blocks on a wait: `done` runs later, on the thread that found the
// messages (a reader, when set_readers() gave the service its own; else a Scheduler thread).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "meta/meta_store.h"
#include "queue/offset_committer.h"
#include "queue/partition_queue.h"
#include "storage/log_manager.h"
#include "storage/topic_directory.h"

namespace narad::queue {

struct Delivery {
    PartitionId partition;
    Offset offset;
    std::string key;
    std::string value;
    int64_t timestamp_ms = 0;
    uint64_t lease_id = 0;  // 0 for a read-only replay
};

struct ConsumeRequest {
    std::string topic;
    std::optional<PartitionId> partition;  // only this partition
    uint32_t max = 1;                      // messages wanted (batch consume)
    Millis wait{0};                        // long-poll up to this long
};

enum class Settle { ack, extend, nack };

// An offset of a loaded partition waiting for its dead letter (PartitionQueue::exhausted()).
struct ExhaustedMessage {
    std::string topic;
    IncarnationId incarnation;
    PartitionId partition;
    Exhausted exhausted;
    bool at_frontier = false;  // every offset below it is settled
};

struct ConsumeOptions {
    Millis reaper_interval{100};
    // Bytes of keys and values one scan reserves (Narad 3.2: 4 MiB; the record that crosses the
    // bound is kept).
    uint64_t max_batch_bytes = 4ull << 20;
};

class ConsumeService {
  public:
    using Done = std::function<void(Result<std::vector<Delivery>>)>;

    ConsumeService(io::FileSystem& fs, Clock& clock, meta::MetaStore& store,
                   storage::LogManager& logs, storage::TopicGuards& guards,
                   OffsetCommitter& committer, Scheduler& scheduler, ConsumeOptions options = {});
    ~ConsumeService();

    void start();
    // Answers every parked long-poll with "nothing" and stops the reaper.
    void stop();

    // Reserves up to request.max messages (see the file comment). An empty result means 204.
    void consume(ConsumeRequest request, Done done);
    // Reads one record without reserving it: nullopt at or past the high watermark; gone if
    // retention deleted it or it cannot be read.
    Result<std::optional<Delivery>> replay(std::string_view topic, PartitionId partition,
                                           Offset offset);
    // Acks, extends or nacks the delivery named by (partition, offset, lease_id); a nack's
    // `reason` goes with the message's dead letter.
    Status settle(std::string_view topic, PartitionId partition, Offset offset, uint64_t lease_id,
                  Settle kind, std::string_view reason = {});

    // Every loaded partition's offsets waiting for their dead letter.
    std::vector<ExhaustedMessage> exhausted();
    // Settles one once its dead letter is durable; false when it no longer waits.
    bool settle_exhausted(const ExhaustedMessage& message);

    // A partition's high watermark advanced to `hwm`: wakes as many of the topic's waiters as
    // records were appended.
    void on_append(const std::string& topic, PartitionId partition, Offset hwm);
    // Forgets every partition of the topic (its data is being deleted).
    void drop_topic(std::string_view topic);
    // Applies changed topic limits to live queues.
    void apply_limits(const meta::MetaSnapshot& snapshot);

    // The consumer state of a partition, if this node has loaded it.
    std::optional<QueueStats> stats(std::string_view topic, PartitionId partition) const;

    // Which partitions may hand out new leases (set once, before start()): in a cluster, those
    // this node owns and that are not frozen for a move. Unset: every partition with a local log.
    using ServingFilter =
        std::function<bool(const meta::MetaState&, std::string_view topic, PartitionId)>;
    void set_serving_filter(ServingFilter filter);
    // Where the reads of consume attempts run (set once, before start()): they read partition logs
    // and may open them, so a node gives them a pool of their own and no HTTP I/O thread waits on
    // the disk. When `run` does not queue the read, a new consume is refused (unavailable, saying
    // whether the readers are full or the node is shutting down) and a woken or expiring one runs
    // where it is. Unset: on the calling thread.
    using Readers = std::function<ThreadPool::Posted(std::function<void()>)>;
    void set_readers(Readers run);
    // Runs `read` on the readers (inline when unset); unavailable, with the reason, when they do
    // not take it.
    Status run_read(std::function<void()> read);
    // The in-memory position (frontier and acked-ahead) of a loaded partition; nullopt when this
    // node has not loaded it (its consumer.offset file is then current).
    std::optional<ConsumerPosition> position(std::string_view topic, PartitionId partition) const;
    // Forgets one partition's consumer state (a move took it away, or is about to replace it):
    // with `write_last`, its last position is written first.
    void drop_partition(std::string_view topic, PartitionId partition, bool write_last);

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace narad::queue
