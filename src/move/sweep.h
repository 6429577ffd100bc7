// StaleCopySweep: judges the partition copies this node holds but does not own (docs/moves.md,
// "The stale-copy sweep"). The move runner runs it every `sweep_every` ticks.
//
// For a topic directory whose incarnation is current, every partition directory this node does
// not own (an old owner's copy after a move, or an install whose flip never committed) is judged
// by asking its owner for its transfer listing, move marker included:
//   - no records retention has not expired: reclaimed (removed);
//   - the owner cannot be asked: deferred to a later pass;
//   - quarantined (set aside, never deleted; move/quarantine.h) when the owner lists no records,
//     or has no move marker, or its marker names another source, or a segment below the
//     position it vouches for (its high watermark, never past its marker's promoted one) is
//     missing there or shorter, or the local copy runs past the promoted high watermark;
//   - a marker without a durable stamp is left alone until `unstamped_grace` old;
//   - otherwise reclaimed.
// A topic directory whose incarnation the metastore confirms gone (a linearizable read) is removed;
// one without an incarnation marker, or not confirmed yet, is counted in narad_orphan_topic_dirs.
// Every rename and removal runs under the topic's guard, only while the directory's incarnation
// marker still names what was read from the metastore (read before the owner).
//
// Not thread-safe: the runner's thread calls run().
#pragma once

#include <functional>
#include <string>

#include "move/worker.h"

namespace narad::move {

struct SweepOptions {
    Millis unstamped_grace{300'000};
    uint32_t max_topic_removals = 16;  // deleted topics' directories removed per pass
};

struct SweepReport {
    uint32_t reclaimed = 0;
    uint32_t quarantined = 0;
    uint32_t deferred = 0;
    uint32_t topics_removed = 0;
    uint32_t orphan_topic_dirs = 0;
};

// One verdict on one copy, from what the owner lists and what this node holds (pure, so each
// rule is tested without a cluster).
enum class CopyVerdict { reclaim, quarantine, defer };
struct LocalCopy {
    bool unexpired_records = false;
    // Segments holding unexpired records: base, size, and whether a later one follows (sealed).
    struct Segment {
        Offset base;
        uint64_t size_bytes = 0;
        bool sealed = false;
    };
    std::vector<Segment> segments;
    Offset next_offset;  // where the local copy's frames end
};
struct Judgement {
    CopyVerdict verdict = CopyVerdict::defer;
    std::string reason;  // why a copy is quarantined or deferred
};
Judgement judge_copy(const NodeId& self, const LocalCopy& local, const TransferListing& owner,
                     WallTime now, WallTime marker_written, Millis unstamped_grace);

class StaleCopySweep {
  public:
    StaleCopySweep(MoveContext& context, SweepOptions options = {});

    // `busy` says whether a worker of this node is moving the partition here right now (it owns
    // what is under the path until it ends).
    SweepReport run(const std::function<bool(const meta::PartitionKey&)>& busy);

  private:
    void sweep_topic(const std::string& name, const meta::MetaState& view,
                     const std::function<bool(const meta::PartitionKey&)>& busy,
                     SweepReport& report);
    // A set-aside <topic>.stale-<incarnation> directory, once the metastore confirms it gone.
    void remove_stale_incarnation(const std::string& name, size_t at, SweepReport& report);
    // The deleted incarnation's directory `name`, once the metastore confirms it gone.
    void remove_deleted(const std::string& name, const IncarnationId& incarnation,
                        SweepReport& report);
    Result<LocalCopy> read_local(const std::string& directory, Millis retention);
    // Under the topic's guard, only while its marker still names `incarnation` and the partition
    // is still not owned here: removes the copy (reclaim) or sets it aside (quarantine).
    void act(const meta::PartitionKey& key, const IncarnationId& incarnation, CopyVerdict verdict,
             const std::string& reason, const NodeId& owner, SweepReport& report);

    MoveContext& context_;
    SweepOptions options_;
};

}  // namespace narad::move
