// MoveRunner: this node's move reconcile loop (docs/moves.md, "The move runner"). Every tick it
// looks for partitions whose target is this node and runs one MoveWorker per such partition; a
// worker whose partition is no longer targeted here is cancelled. The metastore read is skipped
// while the replica's domain versions have not moved, except after a pass that found work left
// (a failed or blocked worker), after a worker exited, and at least every `full_pass_every`. Each
// tick also lets the source side (HandoffService) lift lapsed freezes, and every `sweep_every`-th
// tick (skipped or not) runs the stale-copy sweep (sweep.h). start() lists every quarantined copy
// on this node at error level.
//
// Thread-safe; start()/stop() from the owner.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "base/mutex.h"
#include "base/periodic.h"
#include "move/sweep.h"
#include "move/worker.h"

namespace narad::move {

struct RunnerOptions {
    Millis tick{1'000};
    Millis full_pass_every{30'000};
    uint32_t sweep_every = 30;  // ticks; 0: never
    SweepOptions sweep;
};

class MoveRunner {
  public:
    MoveRunner(MoveContext& context, RunnerOptions options = {});
    ~MoveRunner();  // stops

    void start();
    // Cancels every worker and waits for them (a worker resolving a flip finishes that first).
    void stop();
    // One reconcile pass (the tick runs it; tests call it directly).
    void tick();

    // The workers' progress, for GET /internal/v1/moves and `cluster moves --detail`.
    std::vector<MoveProgress> progress() const;
    // Passes that read the metastore / ticks skipped because nothing moved (for tests).
    uint64_t full_passes() const;
    uint64_t skipped_ticks() const;
    // What the last sweep did (for tests), and how many ran.
    SweepReport last_sweep() const;
    uint64_t sweeps() const;

  private:
    struct Versions {
        uint64_t topics = 0, assignments = 0, members = 0;
        bool operator==(const Versions&) const = default;
    };

    bool busy(const meta::PartitionKey& key) const;

    MoveContext& context_;
    RunnerOptions options_;
    StaleCopySweep sweep_;
    uint64_t ticks_ = 0;  // runner thread (tick) only
    mutable Mutex mutex_;
    SweepReport last_sweep_ GUARDED_BY(mutex_);
    uint64_t sweeps_ GUARDED_BY(mutex_) = 0;
    std::map<meta::PartitionKey, std::unique_ptr<MoveWorker>> workers_ GUARDED_BY(mutex_);
    std::vector<std::unique_ptr<MoveWorker>> stopping_ GUARDED_BY(mutex_);
    std::optional<Versions> seen_ GUARDED_BY(mutex_);
    bool force_next_ GUARDED_BY(mutex_) = true;
    MonoTime last_full_pass_ GUARDED_BY(mutex_);
    uint64_t full_passes_ GUARDED_BY(mutex_) = 0;
    uint64_t skipped_ GUARDED_BY(mutex_) = 0;
    std::unique_ptr<PeriodicTask> task_;
};

}  // namespace narad::move
