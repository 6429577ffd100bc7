// DirectCommits: the produce path that skips the ingress WAL. A request whose records all go to
// partitions this node serves (the `serves` predicate: owned here, not frozen for a move, the
// owner fence holding) and of which the WAL holds no record is committed straight to those
// partitions' logs, and its completion runs once every record is durable there: one fdatasync
// per record instead of two (the WAL's, then the log's). Any other request goes through the WAL.
//
// Only requests over at most `max_partitions` partitions are taken (one by default): spread over
// more, one WAL sync answers the request sooner and cheaper than one log sync per partition.
//
// Order: the WAL path commits a partition's records in the order they were answered; a partition
// the WAL holds a record of is never taken here, so a direct record never overtakes one already
// answered. Direct requests of one partition are committed in the order they were taken, one
// batch at a time (several requests share one append and one fdatasync).
//
// Refusals: a batch the committer refuses (frozen for a move, the fence, the disk) goes to the
// WAL instead, request by request in order, with Admission::replacing (it was already accepted);
// its completion then runs once the WAL has it, as on the usual path, and the dispatcher retries.
// A topic that is gone (not_found) completes with not_found. A request split over partitions
// completes once every part has, with the first failure if any.
//
// Records carry no producer stamp: they exist only in the log, so nothing ever replays them.
// Bounds: at most `max_queued_bytes` of keys and values wait here; beyond it, and while stopped,
// try_take declines and the caller uses the WAL, whose back-pressure applies.
//
// Thread-safe; try_take never blocks. The committer runs on the workers and may block. The WAL
// and the committer must outlive this object.
#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "meta/topic.h"
#include "storage/partition_committer.h"
#include "wal/ingress_wal.h"

namespace narad::wal {

struct DirectOptions {
    uint32_t threads = 2;  // the node runs one per core
    // A request over more partitions goes through the WAL: its one fdatasync answers the request,
    // where the direct path would need one per partition before the answer (a batch of 100
    // unkeyed records over 6 partitions: 6 log syncs instead of 1 WAL sync).
    uint32_t max_partitions = 1;
    uint32_t max_batch_records = 4096;
    uint64_t max_batch_bytes = 4ull << 20;
    uint64_t max_queued_bytes = 64ull << 20;
};

struct DirectStats {
    uint64_t committed_records = 0;  // durable in their logs without the WAL
    uint64_t to_wal_records = 0;     // refused by the committer, sent to the WAL instead
    uint64_t dropped_records = 0;    // their topic was gone
};

class DirectCommits {
  public:
    // Whether this node may commit to the partition now (owned, not frozen, fence holding).
    using Serves =
        std::function<bool(const meta::MetaState&, std::string_view topic, PartitionId partition)>;

    DirectCommits(IngressWal& wal, storage::PartitionCommitter& committer, Serves serves,
                  DirectOptions options = {});
    ~DirectCommits();  // stops

    // Takes the request (its records and completion are moved from) and returns true, or returns
    // false and leaves both untouched. `state` is the snapshot the records were checked against.
    bool try_take(const meta::MetaState& state, std::vector<IngressRecord>& records,
                  IngressWal::Completion& done);

    void start();
    // Declines new requests, lets the workers finish their batches and hands what is still queued
    // to the WAL.
    void stop();

    DirectStats stats() const;

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace narad::wal
