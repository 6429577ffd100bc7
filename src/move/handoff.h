// HandoffService: the source side of a partition move (docs/moves.md, "The source").
//
// It answers the destination's four calls for partitions this node owns:
//   list       the transfer listing, read in the order consumer position, high watermark,
//              segments, so it never names a position past the bytes it lists; a partition not
//              open since a restart is opened (recovered) first;
//   read_chunk bytes of one listed segment file or of its index;
//   prepare    PrepareHandoff: freezes the partition (no new commits, no new reservations; acks,
//              extends and nacks go on), waits up to `lease_drain` for leases out, then reads the
//              listing under the produce lock and returns it with a fresh token. The freeze is
//              also written to the metastore as the partition's freeze key under a lease of
//              `freeze_ttl`, which the flip compares. Presenting a token re-arms that freeze (for
//              another TTL, here and in the metastore) or fails with conflict once it lapsed;
//   fence      the last check before install: the freeze still holds and the high watermark is
//              the one the destination copied; re-arms it.
//
// A freeze ends in tick() once its TTL passed without a re-arm: the metastore lease is revoked
// first (so no flip can commit afterwards), then the assignment is read linearizably; still the
// owner, the partition takes commits again; otherwise it stays closed here. A flip seen in a
// snapshot (on_snapshot) closes the partition too: consumer state dropped, log closed. At start,
// release_stale_freezes() removes freeze keys a previous run of this node left, before commits
// are taken.
//
// Thread-safe. Every call may block on disk or on the metastore: never on the HTTP threads.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "io/file_system.h"
#include "meta/meta_store.h"
#include "move/transfer.h"
#include "queue/consume_service.h"
#include "storage/log_manager.h"
#include "storage/partition_gates.h"

namespace narad::move {

struct HandoffOptions {
    Millis freeze_ttl{30'000};
    Millis lease_drain{500};  // capped at freeze_ttl / 4
    uint64_t max_chunk_bytes = 8ull << 20;
};

// One freeze held here, for metrics and `cluster moves --detail`.
struct FreezeReport {
    std::string topic;
    PartitionId partition;
    Millis held{0};
    bool closed = false;  // the partition moved away: frozen for good here
};

class HandoffService {
  public:
    HandoffService(Clock& clock, io::FileSystem& fs, meta::MetaStore& store, NodeId self,
                   storage::LogManager& logs, storage::PartitionGates& gates,
                   queue::ConsumeService& consume, HandoffOptions options = {});

    Result<TransferListing> list(const std::string& topic, PartitionId partition);
    Result<std::string> read_chunk(const std::string& topic, PartitionId partition, Offset base,
                                   ChunkKind kind, uint64_t offset, uint64_t length);
    Result<Handoff> prepare(const std::string& topic, PartitionId partition,
                            const FreezeToken& token);
    Status fence(const std::string& topic, PartitionId partition, const FreezeToken& token,
                 Offset hwm);

    // Lifts freezes whose TTL passed (see the file comment). Called about every second.
    void tick();
    // A new metastore snapshot: partitions frozen here that now belong to another node close (at
    // the next tick: this runs on the replica's thread and does not block).
    void on_snapshot(const meta::MetaSnapshot& snapshot);
    // Removes freeze keys of partitions this node owns, left by an earlier run.
    Status release_stale_freezes();
    // A move installed this partition here: any freeze state of an earlier ownership goes.
    void forget(const std::string& topic, PartitionId partition);

    std::vector<FreezeReport> freezes() const;

  private:
    struct Freeze {
        FreezeToken token;
        int64_t lease = 0;
        MonoTime started;
        MonoTime deadline;
        bool closed = false;
    };
    using Key = meta::PartitionKey;

    // not_owner unless this node owns the partition in its replica.
    Status check_owner(const std::string& topic, PartitionId partition) const;
    Result<TransferListing> read_listing(const std::string& topic, PartitionId partition);
    std::vector<CursorSidecar> read_cursor_sidecars(const std::string& topic,
                                                    PartitionId partition);
    Result<Handoff> freeze(const std::string& topic, PartitionId partition);
    Result<Handoff> rearm(const std::string& topic, PartitionId partition,
                          const FreezeToken& token);
    // Extends the live freeze `token` names, here and in the metastore; conflict once it lapsed.
    Status renew(const Key& key, const FreezeToken& token);
    // Ends a freeze: revoke, read, then reopen or close.
    void lift(const Key& key) EXCLUDES(mutex_);
    void close_partition(const Key& key);
    void close_moved_away();

    Clock& clock_;
    io::FileSystem& fs_;
    meta::MetaStore& store_;
    NodeId self_;
    storage::LogManager& logs_;
    storage::PartitionGates& gates_;
    queue::ConsumeService& consume_;
    HandoffOptions options_;

    Mutex prepare_mutex_;  // one PrepareHandoff at a time
    mutable Mutex mutex_;
    std::map<Key, Freeze> freezes_ GUARDED_BY(mutex_);
    std::set<Key> moved_away_ GUARDED_BY(mutex_);  // flips seen, to close at the next tick
};

}  // namespace narad::move
