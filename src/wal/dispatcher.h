// Dispatcher: commits the ingress WAL's durable records to their partitions.
//
// Records are queued per (topic, partition) in WAL order. Worker threads take one partition at a
// time (so a partition's records are committed in order, never concurrently) and commit what is
// queued for it as one batch, up to `max_batch_records` / `max_batch_bytes`, through the
// PartitionCommitter. On success the records are marked committed in the WAL. A refusal or an
// unreachable owner keeps the records queued and retries that partition after `retry_interval`
// (about a second), leaving other partitions unaffected. A topic that no longer exists (or a
// different incarnation of it) drops its records for good, counted in the metrics.
//
// Per-partition order: a partition's records are committed in WAL sequence order, a failed batch
// blocks the records behind it, so the partition log's deduplication (it skips a record whose
// sequence is at or below the highest it committed for this WAL) never skips a record that was not
// committed. The queues need no bound of their own: they hold records the WAL keeps pending, which
// its back-pressure bounds.
//
// Dead owners: with a ReroutePolicy (options.reroute), before each batch the worker asks where
// the partition's records should go. If elsewhere (its owner is dead), the batch is appended to the
// ingress WAL again for the sibling partition (new sequence numbers), and only once that append is
// durable are the originals marked committed. A crash between the two replays the originals and
// duplicates them; a record is never lost.
//
// Frozen partitions: a commit refused with Errc::frozen (the partition is being moved) is retried
// like any refusal. Once a partition's commits have been refused as frozen for longer than
// `freeze_reroute_grace`, its queued records (and what queues behind them) are re-appended for
// the policy's sibling() instead, the same way, giving up their per-key order.
//
// Thread-safe; start()/stop() from the owner. The WAL and the committer must outlive the
// Dispatcher. The committer runs on the dispatcher's worker threads and may block.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "storage/partition_committer.h"
#include "storage/record.h"
#include "wal/ingress_wal.h"

namespace narad::wal {

// Where the dispatcher sends a batch: the local partition log, or the owner node in a cluster.
using PartitionCommitter = storage::PartitionCommitter;

// Decides, before each batch, whether a partition's queued records go to another partition of
// the same topic instead (wal/owner_liveness.h: a dead owner's records go to a live sibling).
// Called by the workers concurrently; must be cheap and thread-safe.
class ReroutePolicy {
  public:
    virtual ~ReroutePolicy() = default;
    // The partition to send the records to instead, or nullopt to commit them where they are.
    virtual std::optional<PartitionId> reroute(const std::string& topic,
                                               const std::string& incarnation,
                                               PartitionId partition) = 0;
    // Where the records of a partition frozen past the grace go instead; nullopt: keep waiting.
    virtual std::optional<PartitionId> sibling(const std::string& /*topic*/,
                                               const std::string& /*incarnation*/,
                                               PartitionId /*partition*/) {
        return std::nullopt;
    }
};

struct DispatcherOptions {
    uint32_t threads = 2;
    uint32_t max_batch_records = 4096;
    uint64_t max_batch_bytes = 4ull << 20;
    Millis retry_interval{1000};
    ReroutePolicy* reroute = nullptr;  // none: records always go to their own partition
    Millis freeze_reroute_grace{3000};
};

struct DispatcherStats {
    uint64_t queued_records = 0;
    uint64_t committed_records = 0;
    uint64_t dropped_records = 0;
    uint64_t commit_failures = 0;
    uint64_t rerouted_records = 0;  // re-appended for a sibling partition (owner dead)
    uint32_t partitions_waiting_retry = 0;
};

class Dispatcher {
  public:
    Dispatcher(Clock& clock, IngressWal& wal, PartitionCommitter& committer,
               DispatcherOptions options);
    ~Dispatcher();  // stops

    // Becomes the WAL's consumer and starts the workers.
    void start();
    // Stops the workers after their current batch; queued records stay in the WAL for next time.
    void stop();

    DispatcherStats stats() const;

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace narad::wal
