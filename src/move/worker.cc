#include "move/worker.h"

#include <shared_mutex>

#include "base/failpoint.h"
#include "base/log.h"
#include "base/metrics.h"
#include "move/move_metrics.h"

namespace narad::move {

std::string_view move_phase_name(MovePhase phase) {
    switch (phase) {
        case MovePhase::waiting:
            return "waiting";
        case MovePhase::catch_up:
            return "catch_up";
        case MovePhase::freezing:
            return "freezing";
        case MovePhase::finalizing:
            return "finalizing";
        case MovePhase::installing:
            return "installing";
        case MovePhase::flipping:
            return "flipping";
        case MovePhase::resolving:
            return "resolving";
        case MovePhase::blocked:
            return "blocked";
        case MovePhase::done:
            return "done";
        case MovePhase::failed:
            break;
    }
    return "failed";
}

// Re-arms a freeze every TTL/4 on its own thread, so no single long pass outlives the TTL. Once
// the source refuses the token, lapsed() stays true.
class MoveWorker::Rearm {
  public:
    Rearm(SourceClient& source, NodeId node, meta::PartitionKey partition, std::string token,
          Millis every)
        : source_(source),
          node_(std::move(node)),
          partition_(std::move(partition)),
          token_(std::move(token)),
          every_(every),
          thread_([this] { run(); }) {}
    ~Rearm() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        thread_.join();
    }
    bool lapsed() const { return lapsed_.load(); }

  private:
    void run() {
        std::unique_lock lock(mutex_);
        while (!stopping_ && !lapsed_) {
            wake_.wait_for(lock, every_, [this] { return stopping_; });
            if (stopping_) return;
            lock.unlock();
            auto rearmed = source_.prepare(node_, partition_.topic, partition_.partition, token_);
            if (!rearmed.is_ok() &&
                (rearmed.code() == Errc::conflict || rearmed.code() == Errc::not_owner)) {
                lapsed_ = true;
            } else if (!rearmed.is_ok()) {
                NARAD_LOG_WARN("move of '{}' partition {}: re-arming the freeze failed: {}",
                               partition_.topic, partition_.partition.value(),
                               rearmed.status().to_string());
            }
            lock.lock();
        }
    }

    SourceClient& source_;
    NodeId node_;
    meta::PartitionKey partition_;
    std::string token_;
    Millis every_;
    std::atomic<bool> lapsed_{false};
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;  // GUARDED_BY(mutex_)
    std::thread thread_;     // last: starts once the rest is built
};

MoveWorker::MoveWorker(MoveContext& context, meta::PartitionKey partition, NodeId source,
                       IncarnationId incarnation)
    : context_(context),
      partition_(std::move(partition)),
      source_(std::move(source)),
      incarnation_(std::move(incarnation)),
      staged_(context.fs, context.clock, staging_directory(), context.options.copy) {
    progress_.partition = partition_;
    progress_.source = source_;
}

MoveWorker::~MoveWorker() {
    cancel();
    if (thread_.joinable()) thread_.join();
}

void MoveWorker::start() {
    started_ = context_.clock.now();
    thread_ = std::thread([this] { run(); });
}

void MoveWorker::cancel() {
    cancelled_ = true;
    std::lock_guard lock(mutex_);
    wake_.notify_all();
}

MoveProgress MoveWorker::progress() const {
    std::lock_guard lock(mutex_);
    MoveProgress out = progress_;
    out.finished = finished_.load();
    if (freeze_started_) {
        out.freeze = std::chrono::duration_cast<Millis>(context_.clock.now() - *freeze_started_);
    }
    return out;
}

std::string MoveWorker::staging_directory() const {
    return io::join_path(io::join_path(context_.data_dir, ".moves"),
                         partition_.topic + "-" + std::to_string(partition_.partition.value()));
}

std::string MoveWorker::partition_directory() const {
    return context_.logs.partition_directory(partition_.topic, partition_.partition);
}

void MoveWorker::set_phase(MovePhase phase) {
    std::lock_guard lock(mutex_);
    progress_.phase = phase;
}

void MoveWorker::note_error(const Status& status) {
    NARAD_LOG_WARN("move of '{}' partition {} from {}: {}", partition_.topic,
                   partition_.partition.value(), source_.value(), status.to_string());
    std::lock_guard lock(mutex_);
    progress_.error = status.to_string();
}

bool MoveWorker::pause(Millis duration, bool interruptible) {
    std::unique_lock lock(mutex_);
    return wake_.wait_for(lock, duration, [&] { return interruptible && cancelled(); });
}

void MoveWorker::run() {
    MoveMetrics& metrics = MoveMetrics::get();
    NARAD_LOG_INFO("move of '{}' partition {} from {} starts", partition_.topic,
                   partition_.partition.value(), source_.value());
    Status fresh = staged_.reset();
    Attempt outcome = Attempt::retry;
    while (true) {
        if (!fresh.is_ok()) {
            note_error(fresh.with_context("preparing the staging directory"));
            outcome = Attempt::retry;
        } else {
            outcome = attempt();
        }
        if (outcome == Attempt::done || outcome == Attempt::ended) break;
        if (cancelled() && !installed_) break;
        if (pause(context_.options.retry_backoff) && !installed_) break;
        fresh = Status::ok();
    }
    double seconds = std::chrono::duration<double>(context_.clock.now() - started_).count();
    if (outcome == Attempt::done) {
        metrics.completed.inc();
        metrics.duration.get().observe(seconds);
        set_phase(MovePhase::done);
        MoveProgress final = progress();
        NARAD_LOG_INFO(
            "move of '{}' partition {} from {} done in {:.3f}s: {} bytes in {} passes, source "
            "frozen for {} ms{}",
            partition_.topic, partition_.partition.value(), source_.value(), seconds,
            final.bytes_copied, final.passes, final.freeze ? final.freeze->count() : 0,
            final.non_converged ? " (non-converged cutover)" : "");
    } else {
        if (!installed_) (void)context_.fs.remove_all(staging_directory());
        std::lock_guard lock(mutex_);
        if (progress_.phase != MovePhase::blocked) {
            progress_.phase = MovePhase::failed;
            metrics.ended.inc();
        }
    }
    {
        std::lock_guard lock(mutex_);
        freeze_started_.reset();
    }
    finished_ = true;
}

Result<uint64_t> MoveWorker::copy_pass(const TransferListing& listing) {
    {
        std::lock_guard lock(mutex_);
        progress_.bytes_total = listing.total_bytes();
        ++progress_.passes;
    }
    MoveMetrics::get().passes.inc();
    return staged_.pass(
        context_.source, source_, partition_.topic, partition_.partition, listing,
        [this] { return cancelled(); },
        [this](uint64_t bytes) {
            MoveMetrics::get().bytes.inc(static_cast<double>(bytes));
            std::lock_guard lock(mutex_);
            progress_.bytes_copied += bytes;
        });
}

MoveWorker::Attempt MoveWorker::attempt() {
    const MoveOptions& options = context_.options;
    set_phase(MovePhase::catch_up);
    // Pre-copy while the source serves: each pass copies what was written since the last one.
    uint64_t previous = UINT64_MAX;
    uint32_t stalled = 0;
    bool converged = false;
    for (uint32_t pass = 0; pass < options.max_passes; ++pass) {
        if (cancelled()) return Attempt::ended;
        uint64_t copied = 0;
        if (!list_and_copy(&copied)) return Attempt::retry;
        NARAD_FAILPOINT("move.after_catch_up_pass");
        if (copied <= options.lag_bytes) {
            converged = true;
            break;
        }
        stalled = copied >= previous ? stalled + 1 : 0;
        previous = copied;
        if (stalled >= options.max_stalled_passes) break;
    }
    if (!converged) {
        MoveMetrics::get().non_converged.inc();
        std::lock_guard lock(mutex_);
        progress_.non_converged = true;
        NARAD_LOG_WARN(
            "move of '{}' partition {}: the copy did not converge after {} passes; freezing the "
            "source for a stop-and-copy of the rest",
            partition_.topic, partition_.partition.value(), progress_.passes);
    }
    // Wait for a cutover slot, keeping the copy close behind the source meanwhile.
    while (context_.cutovers != nullptr && !context_.cutovers->try_acquire()) {
        if (cancelled()) return Attempt::ended;
        uint64_t copied = 0;
        if (!list_and_copy(&copied)) return Attempt::retry;
        pause(Millis(20));
    }
    struct SlotRelease {
        CutoverSlots* slots;
        ~SlotRelease() {
            if (slots != nullptr) slots->release();
        }
    } slot{context_.cutovers};
    Status warmed = staged_.warm_up();
    if (!warmed.is_ok())
        note_error(warmed.with_context("opening the staged copy before the freeze"));
    while (true) {
        Attempt next = freeze_and_flip();
        if (next != Attempt::refreeze) return next;
        if (cancelled()) return Attempt::ended;
    }
}

bool MoveWorker::list_and_copy(uint64_t* copied) {
    auto listing = context_.source.list(source_, partition_.topic, partition_.partition);
    if (!listing.is_ok()) {
        note_error(listing.status().with_context("listing the source"));
        return false;
    }
    auto bytes = copy_pass(*listing);
    if (!bytes.is_ok()) {
        note_error(bytes.status().with_context("copying"));
        return false;
    }
    *copied = *bytes;
    return true;
}

MoveWorker::Attempt MoveWorker::freeze_and_flip() {
    const MoveOptions& options = context_.options;
    set_phase(MovePhase::freezing);
    auto handoff = context_.source.prepare(source_, partition_.topic, partition_.partition, "");
    if (!handoff.is_ok()) {
        note_error(handoff.status().with_context("freezing the source"));
        return Attempt::retry;
    }
    FreezeSpan span(*this);
    Rearm rearm(context_.source, source_, partition_, handoff->token, options.freeze_ttl / 4);
    set_phase(MovePhase::finalizing);
    // Drain under the freeze until two passes in a row copy nothing and list the same high
    // watermark (one quiet pass could have seen a segment before an append and the HWM after).
    TransferListing listing = std::move(handoff->listing);
    std::optional<Offset> last_hwm;
    uint32_t quiet = 0;
    while (true) {
        if (cancelled()) return Attempt::ended;
        NARAD_FAILPOINT("move.finalize_pass");
        auto copied = copy_pass(listing);
        if (!copied.is_ok()) {
            note_error(copied.status().with_context("draining"));
            return Attempt::retry;
        }
        if (rearm.lapsed()) {
            note_error(Status(Errc::conflict, "the source's freeze lapsed while draining"));
            return Attempt::refreeze;
        }
        quiet = *copied == 0 && last_hwm == listing.high_watermark ? quiet + 1 : 0;
        last_hwm = listing.high_watermark;
        if (quiet >= 2) break;
        auto next = context_.source.list(source_, partition_.topic, partition_.partition);
        if (!next.is_ok()) {
            note_error(next.status().with_context("listing the source"));
            return Attempt::retry;
        }
        listing = std::move(*next);
    }
    WallTime listed_at = context_.clock.wall_now();
    set_phase(MovePhase::installing);
    Status verified = staged_.verify(listing.high_watermark);
    if (!verified.is_ok()) return unverifiable(verified);
    auto finished = staged_.finish(listing, listed_at, marker_for(listing.high_watermark));
    if (!finished.is_ok()) {
        note_error(finished.status().with_context("making the copy durable"));
        return Attempt::retry;
    }
    if (*finished) {
        NARAD_LOG_WARN(
            "move of '{}' partition {}: the source's frontier {} was past its high "
            "watermark {}; clamped",
            partition_.topic, partition_.partition.value(), listing.frontier.value(),
            listing.high_watermark.value());
    }
    NARAD_FAILPOINT("move.before_fence");
    // The fence: the freeze still holds and nothing was committed behind the copy.
    Status fenced = context_.source.fence(source_, partition_.topic, partition_.partition,
                                          handoff->token, listing.high_watermark);
    if (!fenced.is_ok() || rearm.lapsed()) {
        note_error(fenced.is_ok() ? Status(Errc::conflict, "the freeze lapsed before the fence")
                                  : fenced.with_context("the fence"));
        return fenced.code() == Errc::conflict || rearm.lapsed() ? Attempt::refreeze
                                                                 : Attempt::retry;
    }
    Status installed = install();
    if (!installed.is_ok()) {
        note_error(installed.with_context("installing the copy"));
        return Attempt::retry;
    }
    return flip(handoff->token, listing.high_watermark);
}

MoveWorker::FreezeSpan::FreezeSpan(MoveWorker& worker)
    : worker_(worker), started_(worker.context_.clock.now()) {
    std::lock_guard lock(worker_.mutex_);
    worker_.freeze_started_ = started_;
}

MoveWorker::FreezeSpan::~FreezeSpan() {
    auto held = worker_.context_.clock.now() - started_;
    MoveMetrics::get().freeze.get().observe(std::chrono::duration<double>(held).count());
    std::lock_guard lock(worker_.mutex_);
    worker_.freeze_started_.reset();
    worker_.progress_.freeze = std::chrono::duration_cast<Millis>(held);
}

MoveWorker::Attempt MoveWorker::unverifiable(const Status& verified) {
    ++unverifiable_;
    if (unverifiable_ >= 2) {
        NARAD_LOG_ERROR(
            "move: staged copy cannot be verified; not freezing the source again ('{}' "
            "partition {}: {})",
            partition_.topic, partition_.partition.value(), verified.to_string());
        std::lock_guard lock(mutex_);
        progress_.phase = MovePhase::blocked;
        progress_.blocked = "copy_unverifiable";
        progress_.error = verified.to_string();
        return Attempt::ended;
    }
    note_error(verified.with_context("verifying the copy; copying once more from scratch"));
    Status reset = staged_.reset();
    if (!reset.is_ok()) note_error(reset);
    return Attempt::retry;
}

MoveMarker MoveWorker::marker_for(Offset hwm) const {
    MoveMarker marker;
    marker.source = source_;
    marker.promoted_high_watermark = hwm;
    // The child links at install time, with their attach epochs (a child's record carries its
    // own epoch); "-" for a child whose record this replica does not have.
    meta::MetaSnapshot view = context_.store.snapshot();
    if (const meta::Topic* topic = view->find_topic(partition_.topic)) {
        for (const std::string& child : topic->children) {
            const meta::Topic* record = view->find_topic(child);
            bool known = record != nullptr && !record->attach_epoch.empty();
            marker.children.push_back({child, known ? record->attach_epoch : "-"});
        }
    }
    marker.durable_at_ms = context_.clock.wall_ms();
    return marker;
}

MoveWorker::Attempt MoveWorker::took_ownership() {
    installed_ = false;  // the copy is the partition now
    context_.handoff.forget(partition_.topic, partition_.partition);
    return Attempt::done;
}

MoveWorker::Attempt MoveWorker::flip(const std::string& token, Offset hwm) {
    set_phase(MovePhase::flipping);
    NARAD_FAILPOINT("move.before_flip");
    auto outcome = context_.store.complete_move(partition_, source_, context_.self, token);
    // A failure injected here is a reply lost after the metastore decided (either way).
    Status lost = failpoint::evaluate("move.flip_reply_lost");
    if (!lost.is_ok()) outcome = Status(Errc::unknown_outcome, "the flip's reply was lost");
    if (!outcome.is_ok()) {
        note_error(outcome.status().with_context("the flip's outcome is unknown"));
        return resolve(token, hwm);
    }
    switch (*outcome) {
        case meta::FlipOutcome::flipped:
        case meta::FlipOutcome::already_flipped:
            return took_ownership();
        case meta::FlipOutcome::freeze_lapsed: {
            note_error(Status(Errc::conflict, "the flip found the freeze lapsed"));
            Status back = uninstall(/*remove_staging=*/false);
            if (!back.is_ok()) note_error(back);
            return back.is_ok() ? Attempt::refreeze : Attempt::retry;
        }
        case meta::FlipOutcome::refused:
            break;
    }
    NARAD_LOG_WARN("move of '{}' partition {}: the flip was refused (re-planned or aborted)",
                   partition_.topic, partition_.partition.value());
    Status back = uninstall(/*remove_staging=*/true);
    if (!back.is_ok()) note_error(back);
    return Attempt::ended;
}

MoveWorker::Attempt MoveWorker::resolve(const std::string& token, Offset hwm) {
    // A lost reply is not a refusal: keep the install until a read proves the flip did not
    // commit, and only a read that starts unknown_settle after the last unknown proposal counts.
    set_phase(MovePhase::resolving);
    const MoveOptions& options = context_.options;
    MonoTime last_unknown = context_.clock.now();
    MonoTime give_up_proposing = last_unknown + options.flip_retry_for;
    while (true) {
        pause(options.resolve_poll, /*interruptible=*/false);
        MonoTime read_started = context_.clock.now();
        auto read = context_.store.read_assignment(partition_);
        if (!read.is_ok()) continue;  // cannot ask: the install stays
        bool settled = read_started - last_unknown >= options.unknown_settle;
        if (read->has_value() && (*read)->owner == context_.self) return took_ownership();
        bool still_ours =
            read->has_value() && (*read)->owner == source_ && (*read)->target == context_.self;
        if (still_ours && read_started < give_up_proposing) {
            Status fenced =
                context_.source.fence(source_, partition_.topic, partition_.partition, token, hwm);
            if (fenced.is_ok()) {
                auto outcome =
                    context_.store.complete_move(partition_, source_, context_.self, token);
                if (!outcome.is_ok()) {
                    last_unknown = context_.clock.now();
                    continue;
                }
                if (*outcome == meta::FlipOutcome::flipped ||
                    *outcome == meta::FlipOutcome::already_flipped) {
                    return took_ownership();
                }
            }
        }
        if (!settled) continue;
        // A settled read says the flip did not commit: take the copy back off the path.
        Status back = uninstall(/*remove_staging=*/!still_ours);
        if (!back.is_ok()) {
            note_error(back);
            continue;
        }
        return still_ours ? Attempt::refreeze : Attempt::ended;
    }
}

Status MoveWorker::install() {
    auto guard = context_.guards.guard(partition_.topic);
    std::unique_lock topic_lock(*guard);
    meta::MetaSnapshot view = context_.store.snapshot();
    const meta::Topic* topic = view->find_topic(partition_.topic);
    if (topic == nullptr || topic->incarnation != incarnation_) {
        return Status(Errc::conflict, "the topic was deleted or recreated during the move");
    }
    context_.consume.drop_partition(partition_.topic, partition_.partition, false);
    NARAD_RETURN_IF_ERROR(context_.logs.close_partition(partition_.topic, partition_.partition));
    NARAD_RETURN_IF_ERROR(storage::prepare_topic_directory(
        context_.fs, context_.logs.topic_directory(partition_.topic), incarnation_));
    std::string quarantine =
        staging_directory() + ".quarantine-" + std::to_string(context_.clock.wall_ms());
    NARAD_FAILPOINT_RETURN("move.install");
    NARAD_RETURN_IF_ERROR(
        install_copy(context_.fs, staging_directory(), partition_directory(), quarantine));
    installed_ = true;
    context_.consume.drop_partition(partition_.topic, partition_.partition, false);
    return Status::ok();
}

Status MoveWorker::uninstall(bool remove_staging) {
    if (!installed_) return Status::ok();
    auto guard = context_.guards.guard(partition_.topic);
    std::unique_lock topic_lock(*guard);
    context_.consume.drop_partition(partition_.topic, partition_.partition, false);
    NARAD_RETURN_IF_ERROR(context_.logs.close_partition(partition_.topic, partition_.partition));
    NARAD_RETURN_IF_ERROR(uninstall_copy(context_.fs, partition_directory(), staging_directory()));
    installed_ = false;
    if (remove_staging) return context_.fs.remove_all(staging_directory());
    return Status::ok();
}

}  // namespace narad::move
