// ConsumeService: the consume side of a node, put together from three parts: PartitionQueues (the
// consumer state of every partition this node serves), ConsumeReader (one pass that reserves and
// reads what can be delivered now) and LongPolls (consumes parked until something can change
// their answer). It adds the settling of deliveries (ack, extend, nack), the reaper that ends
// lapsed leases every `reaper_interval` of the clock, and the per-partition gauges at scrape time.
//
// Parked consumes are woken when a partition's high watermark advances (on_append), when an offset
// is nacked or its lease lapses, and when an ack frees a capped partition.
//
// Thread-safe. consume() never blocks on a wait: `done` runs later, on the thread that found the
// messages (a reader, when set_readers() gave the service its own; else the clock's timer thread).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "meta/meta_store.h"
#include "queue/consume_reader.h"
#include "queue/long_polls.h"
#include "queue/offset_committer.h"
#include "queue/partition_queues.h"
#include "storage/log_manager.h"
#include "storage/topic_directory.h"

namespace narad::queue {

enum class Settle { ack, extend, nack };

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
                   OffsetCommitter& committer, ConsumeOptions options = {});
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
    Status settle(std::string_view topic, PartitionId partition, Offset offset, LeaseId lease_id,
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
    using ServingFilter = ConsumeReader::ServingFilter;
    void set_serving_filter(ServingFilter filter);
    // Where the reads of consume attempts run (set once, before start()): they read partition logs
    // and may open them, so a node gives them a pool of their own and no HTTP I/O thread waits on
    // the disk. When `run` does not queue the read, a new consume is refused (unavailable, saying
    // whether the readers are full or the node is shutting down) and a woken or expiring one runs
    // where it is. Unset: on the calling thread.
    using Readers = LongPolls::Readers;
    void set_readers(Readers run);
    // Runs `read` on the readers (inline when unset); unavailable, with the reason, when they do
    // not take it.
    Status run_read(std::function<void()> read);
    // The in-memory position (frontier and acked-ahead) of a loaded partition; nullopt when this
    // node has not loaded it (its consumer.offset file is then current).
    std::optional<ConsumerPosition> position(std::string_view topic, PartitionId partition) const;
    // Forgets one partition's consumer state (a move took it away, or is about to replace it),
    // writing or discarding its last position as `last` says.
    void drop_partition(std::string_view topic, PartitionId partition, LastPosition last);

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace narad::queue
