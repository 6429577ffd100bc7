// IngressWal: this node's write-ahead log for accepted produce requests (docs/formats/wal.md).
//
// append() queues records; one group-commit thread writes everything queued, fdatasyncs once, and
// only then calls each request's completion with ok, so a 202 is never sent before its record is
// durable. Durable records are handed, in sequence order, to the dispatcher (set_consumer), which
// commits them to their partitions and reports back with mark_committed(). A segment file is
// deleted once every record in it is committed and it is no longer the one being written.
//
// On open, the records of every remaining segment are recovered (a torn tail is cut) and handed to
// the consumer again when it is set: records that were committed before the crash are skipped by
// the partition logs' deduplication (by IngressId and sequence), so each is committed once.
//
// Each WAL has a random IngressId fixed when its directory is created (stored in the `id` file), so
// a node that comes back with an empty WAL never reuses a sequence a partition has already seen.
//
// Back-pressure: when durable-but-uncommitted records exceed `max_pending_bytes`, append() fails
// with Errc::unavailable at once rather than growing without bound.
//
// Thread-safe. append() never blocks on disk; completions run on the WAL's sync thread and must not
// block.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/ids.h"
#include "base/status.h"
#include "io/file_system.h"

namespace narad::wal {

// A produce request's record as the WAL keeps it.
struct IngressRecord {
    std::string topic;
    std::string incarnation;  // the topic incarnation the record was accepted for
    PartitionId partition;
    std::string key;
    std::string value;
    int64_t timestamp_ms = 0;
    WalSeq sequence;  // assigned by append()
};

struct WalOptions {
    uint64_t segment_bytes_max = 32ull << 20;
    uint64_t max_pending_bytes = 256ull << 20;
    // Back-pressure on the record count as well, since tiny records cost memory beyond their bytes.
    // Both limits count records still queued for the sync thread as well as durable ones.
    uint64_t max_pending_records = 1'000'000;
    // One group commit writes at most this much (but always at least one whole append() request).
    uint64_t max_group_bytes = 4ull << 20;
    uint32_t max_group_records = 10'000;
    // The active segment also rolls early, so its space is reclaimed without waiting for it to
    // fill, when every record in it is committed and it holds at least early_roll_bytes or is older
    // than early_roll_age (checked before each group commit).
    uint64_t early_roll_bytes = 4ull << 20;
    Millis early_roll_age{60'000};
};

struct WalStats {
    uint64_t pending_records = 0;  // durable, not yet committed
    uint64_t pending_bytes = 0;
    uint32_t segments = 0;
    WalSeq next_sequence;
};

class IngressWal {
  public:
    using Completion = std::function<void(Status)>;
    // Receives durable records in sequence order (on the sync thread, or on the thread calling
    // set_consumer for recovered records). Records are shared: the consumer keeps them until it
    // calls mark_committed.
    using Consumer = std::function<void(std::vector<std::shared_ptr<const IngressRecord>>)>;

    static Result<std::unique_ptr<IngressWal>> open(io::FileSystem& fs, Clock& clock,
                                                    std::string directory, WalOptions options);
    virtual ~IngressWal() = default;

    virtual IngressId id() const = 0;

    // Queues records for the next group commit; `done` runs once they are durable (or failed).
    // A request refused at once (back-pressure: Errc::unavailable "ingress backlog full"; a stopped
    // WAL: shutting_down; a failed one: io_error; a record over the format's limits) runs `done` on
    // the calling thread before append() returns. A timestamp_ms of 0 is set to the clock's wall
    // time. Requests queued before start() are written once it runs.
    //
    // Admission::replacing skips the back-pressure check: the dispatcher uses it to re-append
    // records that replace ones already pending (a dead owner's records moved to a sibling), which
    // leave the backlog once the copy is durable, so a full backlog must not refuse them.
    enum class Admission { normal, replacing };
    virtual void append(std::vector<IngressRecord> records, Completion done,
                        Admission admission) = 0;
    void append(std::vector<IngressRecord> records, Completion done) {
        append(std::move(records), std::move(done), Admission::normal);
    }

    // Sets the consumer and hands it every recovered record not yet committed. (Every durable
    // record not yet committed, in fact: a replaced consumer may have dropped what it held. nullptr
    // detaches the consumer; once set_consumer returns, the old one is never called again.)
    virtual void set_consumer(Consumer consumer) = 0;
    // Reports records as committed (or dropped for good); fully committed segments are deleted.
    virtual void mark_committed(std::span<const WalSeq> sequences) = 0;

    virtual WalStats stats() const = 0;
    // Whether a record of this partition was accepted and is not yet committed (or dropped): queued
    // for the sync thread, or durable and pending. The direct produce path (wal/direct_commits.h)
    // asks this so that it never commits a partition's new record ahead of one already answered.
    virtual bool holds(std::string_view topic, PartitionId partition) const = 0;
    // Starts and stops the sync thread. stop() completes queued appends with shutting_down.
    virtual void start() = 0;
    virtual void stop() = 0;
};

}  // namespace narad::wal
