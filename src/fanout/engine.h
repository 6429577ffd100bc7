// FanoutEngine: copies every record committed to a parent partition owned here into each of the
// parent's child topics (docs/fanout.md).
//
// One link per (parent partition owned here, attached child). A reconciler (every
// `reconcile_interval`, and at once when the metastore's topics or assignments change) keeps the
// set of links equal to what the metastore asks of this node: links start on attach and on
// gaining a partition, and stop on detach, delete or losing the partition.
//
// A link's step: read a slab of the parent's committed records from its cursor (at most
// `max_batch_records` / `max_batch_bytes`; a partial slab waits `linger` once for more), keep the
// due prefix for a delay child (records whose commit time + delay has passed on this node's wall
// clock; records commit in time order, so the first undue one ends the slab and the link sleeps
// until it is due), send each copy to its child partition (a key keeps Narad's hash; a keyless
// copy keeps the parent's partition index when the counts match, else offset % count), and only
// once every child commit succeeded write the cursor (fanout-<child>.offset). A failed commit
// (child owner down, frozen, unreachable) keeps the cursor and retries after `retry_interval`:
// nothing is skipped.
//
// Exactly once per offset: every copy carries a producer stamp derived from the link (parent
// topic and incarnation, partition, child, attach epoch) with sequence = parent offset + 1, so a
// child partition skips a copy it already holds. A retried slab, a restart from an older cursor,
// or the new owner of a moved parent partition re-sending what the old owner sent lands nothing
// twice.
//
// Where a cursor starts: the file's position when its epoch is the link's; a fresh attach (no
// file, or a file of an older epoch) anchors at the parent's tail after a linearizable read
// confirms the epoch (no backfill); a link the partition's move marker names (it existed when the
// copy was installed) whose file is missing or damaged resumes from the oldest retained offset,
// never the tail. A damaged file of any other link also resumes from the oldest (duplicates
// are skipped by the stamps; a skipped record would be lost). A cursor below the parent's oldest
// retained offset (the child fell behind retention) jumps to it, counted as dropped.
//
// Thread-safe; start()/stop() from the owner. Blocks on disk and peers on its own threads.
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
#include "meta/meta_store.h"
#include "storage/log_manager.h"
#include "storage/partition_committer.h"
#include "storage/record.h"

namespace narad::fanout {

struct LinkRef {
    std::string child;
    std::string attach_epoch;
};

struct FanoutOptions {
    uint32_t threads = 2;
    uint32_t max_batch_records = 4096;
    uint64_t max_batch_bytes = 4ull << 20;
    Millis linger{25};
    Millis retry_interval{1000};
    Millis reconcile_interval{1000};
    Millis idle_poll{1000};      // an idle link looks again (appends wake it sooner)
    Millis due_wake_cap{30000};  // a delay link sleeps at most this long before looking again
    // Whether this node owns the partition (and so runs its links).
    std::function<bool(const meta::MetaState&, std::string_view topic, PartitionId)> owns;
    // The child links named by the partition's move marker (empty: none, or no marker).
    std::function<std::vector<LinkRef>(std::string_view topic, PartitionId)> installed_links;
};

// One link's position, for GET /v1/topics/{p}/children and the metrics.
struct CursorStat {
    std::string child;
    PartitionId partition;
    Offset next;
    Offset high_watermark;
    bool anchored = false;   // the cursor knows where it stands
    int64_t due_lag_ms = 0;  // delay child: how far behind its due frontier it runs
};

class FanoutEngine {
  public:
    FanoutEngine(Clock& clock, io::FileSystem& fs, meta::MetaStore& store,
                 storage::LogManager& logs, storage::PartitionCommitter& committer,
                 FanoutOptions options);
    ~FanoutEngine();  // stops

    void start();
    void stop();

    // A parent partition's log grew: its links look at once.
    void on_append(const std::string& topic, PartitionId partition);
    // The links of the parents owned here, with their positions (`parent` empty: every parent).
    std::vector<CursorStat> cursor_stats(std::string_view parent) const;
    // Reconciles and wakes every link now (a test that advances a FakeClock).
    void poke();

    // The producer stamp's ingress id of a link (never 0, never a WAL's in practice).
    static IngressId link_ingress(std::string_view parent, std::string_view parent_incarnation,
                                  PartitionId partition, std::string_view child,
                                  std::string_view attach_epoch);

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace narad::fanout
