// MoveWorker: the destination's side of one partition move (docs/moves.md), on its own thread.
//
//   catch_up    copy passes while the source keeps serving, until a pass copies at most
//               `lag_bytes`, or `max_passes` passes, or `max_stalled_passes` in a row without the
//               tail shrinking (then it freezes anyway: a non-converged cutover);
//   (a move may wait here for one of the node's cutover slots, copying meanwhile)
//   freezing    PrepareHandoff: the source freezes the partition and returns a token, re-armed
//               every freeze_ttl/4 on a timer of its own until the move ends;
//   finalizing  drain passes under the freeze until two passes in a row copy nothing and list the
//               same high watermark;
//   installing  verify (the copy recovers to exactly that high watermark; a copy that fails is
//               discarded and copied once more from scratch, then the move is blocked as
//               copy_unverifiable and never freezes the source again), consumer position and
//               segment ages, syncs and the move marker, the fence (409: freeze and drain again),
//               then the swap into the partition's path;
//   flipping    CompleteMove. A refused flip takes the copy back off the path and ends the move;
//               a lapsed freeze takes it back and freezes again; an unknown outcome keeps the
//               install and resolves it by reading the assignment (resolving): it proposes again
//               for at most `flip_retry_for` (then lets the freeze lapse), and takes the copy off
//               the path only on a read that started `unknown_settle` after the last unknown
//               proposal, and only while the path still holds this install (its marker's install
//               id, under the topic's guard, in the incarnation the move prepared).
//   waiting_for_source
//               the source does not answer and reads dead. Once it has read dead for
//               `force_promote_after` on this worker's own clock and the controller has declared
//               it dead (its own clock, the same bound), a copy that recovers to at least the
//               source's last listed high watermark is force-promoted: installed without a freeze
//               (positions clamped to that offset, the marker saying so) and flipped by a txn that
//               also requires the source's liveness key to be absent. A copy behind it waits for
//               the source (source_dead_copy_behind, logged once per death).
//
// A restarted worker resumes what an earlier run staged. A worker that ends without a flip
// removes its staging copy, unless the source reads dead (or is no member) and the copy holds
// records: it may be the only copy, so it is set aside as .moves/<topic>-<N>.quarantine.
//
// Errors of the source or the metastore are retried after `retry_backoff`: the move resumes with
// what is staged. cancel() stops the worker at its next step (a re-plan or an abort took the
// target away), except while a flip's outcome is unknown, which it resolves first. Every wait is
// measured on the context's Clock.
//
// Thread-safe: progress() and cancel() from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"
#include "io/file_system.h"
#include "meta/meta_store.h"
#include "move/handoff.h"
#include "move/source_client.h"
#include "move/staging.h"
#include "queue/consume_service.h"
#include "storage/log_manager.h"
#include "storage/partition_gates.h"
#include "storage/topic_directory.h"

namespace narad::move {

struct MoveOptions {
    Millis freeze_ttl{30'000};
    uint64_t lag_bytes = 4ull << 20;
    uint32_t max_passes = 20;
    uint32_t max_stalled_passes = 3;
    Millis retry_backoff{2'000};
    // How long an unknown flip may be proposed again; and how long after the last unknown proposal
    // a read must start before it may confirm that the flip did not commit.
    Millis flip_retry_for{120'000};
    Millis unknown_settle{15'000};
    Millis resolve_poll{1'000};  // between reads of the assignment while the flip is unknown
    // A source down this long reads dead (cluster.dead_after); one dead this long, by this
    // worker's clock and by the controller's verdict, may be force-promoted over.
    Millis source_dead_after{30'000};
    Millis force_promote_after{120'000};
    CopyLimits copy;
};

enum class MovePhase {
    waiting,
    catch_up,
    freezing,
    finalizing,
    installing,
    flipping,
    resolving,
    waiting_for_source,
    blocked,
    done,
    failed
};
std::string_view move_phase_name(MovePhase phase);

struct MoveProgress {
    meta::PartitionKey partition;
    NodeId source;
    MovePhase phase = MovePhase::waiting;
    uint64_t bytes_copied = 0;  // this attempt's bytes so far
    uint64_t bytes_total = 0;   // what the last listing named
    uint32_t passes = 0;
    std::optional<Millis> freeze;  // how long the current (or last) freeze has held
    // copy_unverifiable (phase blocked) or source_dead_copy_behind (waiting for the source).
    std::string blocked;
    std::string error;  // the last error, if any
    bool non_converged = false;
    bool force_promoted = false;  // the move completed (or is completing) without the source
    uint32_t attempts = 0;        // copy attempts against a live source
    WallTime started_at;
    bool finished = false;  // the worker's thread is done (its phase is final)
};

// How many of this node's moves may hold their source frozen at once. Cutovers that run together
// share one disk (syncs, the verify, the flip's etcd write) and all freeze longer; a move waiting
// for a slot keeps copying instead, so its tail stays short. Thread-safe.
class CutoverSlots {
  public:
    explicit CutoverSlots(uint32_t limit) : limit_(limit) {}
    bool try_acquire() {
        MutexLock lock(mutex_);
        if (used_ >= limit_) return false;
        ++used_;
        return true;
    }
    void release() {
        MutexLock lock(mutex_);
        --used_;
    }

  private:
    Mutex mutex_;
    uint32_t used_ GUARDED_BY(mutex_) = 0;
    uint32_t limit_;
};

// Everything a worker uses, owned by the runner's owner (node/).
struct MoveContext {
    Clock& clock;
    io::FileSystem& fs;
    meta::MetaStore& store;
    NodeId self;
    std::string data_dir;
    storage::LogManager& logs;
    storage::TopicGuards& guards;
    queue::ConsumeService& consume;
    HandoffService& handoff;  // this node's source side (freeze state of an earlier ownership)
    SourceClient& source;
    MoveOptions options;
    CutoverSlots* cutovers = nullptr;  // null: no limit
};

class MoveWorker {
  public:
    MoveWorker(MoveContext& context, meta::PartitionKey partition, NodeId source,
               IncarnationId incarnation);
    ~MoveWorker();  // cancels and joins

    void start();
    void cancel();
    bool finished() const { return finished_.load(); }
    MoveProgress progress() const;
    const meta::PartitionKey& partition() const { return partition_; }
    const NodeId& source() const { return source_; }

  private:
    enum class Attempt { done, retry, refreeze, ended };
    enum class Promotion { normal, forced };
    class Rearm;
    // The span of one freeze of the source: shown in progress while it lasts, then recorded
    // (metric and last freeze) however the attempt ends.
    class FreezeSpan {
      public:
        explicit FreezeSpan(MoveWorker& worker);
        ~FreezeSpan();

      private:
        MoveWorker& worker_;
        MonoTime started_;
    };

    void run();
    Attempt attempt();
    Attempt freeze_and_flip();
    // A staged copy failed verification: copy once more from scratch, or block the move.
    Attempt unverifiable(const Status& verified);
    Attempt took_ownership(Promotion promotion);
    MoveMarker marker_for(Offset hwm, Promotion promotion);
    Attempt flip(const FreezeToken& token, Offset hwm);
    // Resolves a flip (or a force-promote) whose outcome is unknown.
    Attempt resolve(const FreezeToken& token, Offset hwm, Promotion promotion);
    Status install();
    // Takes this move's install back to staging; conflict (and nothing moved) when the path no
    // longer holds it.
    Status uninstall();
    // The source could not be reached: note whether it reads dead, and force-promote when every
    // gate holds.
    Attempt after_source_failure();
    // A listing came back: the source is alive, and this is what a force-promote must reach.
    void remember(const TransferListing& listing);
    // Whether the source reads dead now; starts (or resets) this worker's dead clock.
    bool source_reads_dead();
    // The source has read dead long enough by both clocks.
    bool force_promote_due();
    Attempt force_promote(Offset hwm);
    // A worker that ended without a flip: remove its staging copy, or set it aside.
    void leave_staging();
    void refresh_quarantine_metrics();
    Result<uint64_t> copy_pass(const TransferListing& listing);
    // One listing and copy pass; false (with the error noted) when it failed.
    bool list_and_copy(uint64_t* copied);

    void set_phase(MovePhase phase);
    void note_error(const Status& status);
    bool cancelled() const { return cancelled_.load(); }
    // Whether cancel() ends a pause early. A worker whose copy is installed waits out its pauses:
    // it must flip or uninstall before it may stop.
    enum class Wait { interruptible, uninterruptible };
    // Waits up to `duration`; an interruptible wait returns early (true) when cancelled.
    bool pause(Millis duration, Wait wait);
    std::string staging_directory() const;
    std::string partition_directory() const;

    MoveContext& context_;
    meta::PartitionKey partition_;
    NodeId source_;
    IncarnationId incarnation_;
    StagedCopy staged_;
    // Worker thread only:
    bool installed_ = false;      // the copy sits at the partition's path
    bool took_off_path_ = false;  // an install of this worker went back to staging
    std::string install_id_;      // the install id of the marker the last finish() wrote
    uint32_t unverifiable_ = 0;
    bool reached_source_ = false;  // a listing came back this session
    std::optional<TransferListing> last_listing_;
    WallTime last_listed_at_;
    std::optional<MonoTime> dead_since_;  // this worker first read the source dead
    bool death_reported_ = false;         // the blocked promote was logged for this death
    Promotion promotion_ = Promotion::normal;
    std::unique_ptr<Rearm> rearm_;  // while a freeze is held
    MonoTime started_;

    mutable Mutex mutex_;
    CondVar wake_;
    MoveProgress progress_ GUARDED_BY(mutex_);
    std::optional<MonoTime> freeze_started_ GUARDED_BY(mutex_);
    std::atomic<bool> cancelled_{false};
    std::atomic<bool> finished_{false};
    std::thread thread_;
};

}  // namespace narad::move
