#include "move/worker.h"

#include "base/failpoint.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/mutex.h"
#include "base/random.h"
#include "base/thread_pool.h"
#include "move/move_metrics.h"
#include "move/quarantine.h"

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
        case MovePhase::waiting_for_source:
            return "waiting_for_source";
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
    Rearm(Clock& clock, SourceClient& source, NodeId node, meta::PartitionKey partition,
          FreezeToken token, Millis every)
        : clock_(clock),
          source_(source),
          node_(std::move(node)),
          partition_(std::move(partition)),
          token_(std::move(token)),
          every_(every),
          thread_([this] { run(); }) {}
    ~Rearm() {
        {
            MutexLock lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        thread_.join();
    }
    bool lapsed() const { return lapsed_.load(); }

  private:
    void run() {
        MutexLock lock(mutex_);
        while (!stopping_ && !lapsed_) {
            clock_.wait_for(lock, wake_, every_, [this]() REQUIRES(mutex_) { return stopping_; });
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

    Clock& clock_;
    SourceClient& source_;
    NodeId node_;
    meta::PartitionKey partition_;
    FreezeToken token_;
    Millis every_;
    std::atomic<bool> lapsed_{false};
    Mutex mutex_;
    CondVar wake_;
    bool stopping_ GUARDED_BY(mutex_) = false;
    std::thread thread_;  // last: starts once the rest is built
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
    progress_.started_at = context_.clock.wall_now();
}

MoveWorker::~MoveWorker() {
    cancel();
    if (thread_.joinable()) thread_.join();
}

void MoveWorker::start() {
    started_ = context_.clock.now();
    thread_ = named_thread("narad-move-work", [this] { run(); });
}

void MoveWorker::cancel() {
    cancelled_ = true;
    MutexLock lock(mutex_);
    wake_.notify_all();
}

MoveProgress MoveWorker::progress() const {
    MutexLock lock(mutex_);
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
    MutexLock lock(mutex_);
    progress_.phase = phase;
}

void MoveWorker::note_error(const Status& status) {
    NARAD_LOG_WARN("move of '{}' partition {} from {}: {}", partition_.topic,
                   partition_.partition.value(), source_.value(), status.to_string());
    MutexLock lock(mutex_);
    progress_.error = status.to_string();
}

bool MoveWorker::pause(Millis duration, Wait wait) {
    MutexLock lock(mutex_);
    return context_.clock.wait_for(lock, wake_, duration,
                                   [&] { return wait == Wait::interruptible && cancelled(); });
}

void MoveWorker::run() {
    MoveMetrics& metrics = MoveMetrics::get();
    NARAD_LOG_INFO("move of '{}' partition {} from {} starts", partition_.topic,
                   partition_.partition.value(), source_.value());
    // What an earlier run of this move staged is kept: only the missing bytes are fetched.
    auto resumed = staged_.resume(incarnation_, source_);
    if (resumed.is_ok() && *resumed > 0) {
        NARAD_LOG_INFO("move of '{}' partition {}: resuming the staged copy ({} bytes kept)",
                       partition_.topic, partition_.partition.value(), *resumed);
    }
    Status fresh = resumed.status();
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
        Wait wait = installed_ ? Wait::uninterruptible : Wait::interruptible;
        if (pause(context_.options.retry_backoff, wait) && !installed_) break;
        fresh = Status::ok();
    }
    double seconds = std::chrono::duration<double>(context_.clock.now() - started_).count();
    if (outcome == Attempt::done) {
        (promotion_ == Promotion::forced ? metrics.force_promoted : metrics.completed).inc();
        metrics.duration.get().observe(seconds);
        set_phase(MovePhase::done);
        MoveProgress final = progress();
        NARAD_LOG_INFO(
            "move of '{}' partition {} from {} done in {:.3f}s{}: {} bytes in {} passes, source "
            "frozen for {} ms{}",
            partition_.topic, partition_.partition.value(), source_.value(), seconds,
            promotion_ == Promotion::forced ? " (force-promoted: the source is dead)" : "",
            final.bytes_copied, final.passes, final.freeze ? final.freeze->count() : 0,
            final.non_converged ? " (non-converged cutover)" : "");
    } else {
        leave_staging();
        MutexLock lock(mutex_);
        if (progress_.phase != MovePhase::blocked) {
            progress_.phase = MovePhase::failed;
            metrics.ended.inc();
        }
    }
    {
        MutexLock lock(mutex_);
        freeze_started_.reset();
    }
    finished_ = true;
}

void MoveWorker::refresh_quarantine_metrics() {
    publish_quarantine_metrics(list_quarantined(context_.fs, context_.data_dir));
}

void MoveWorker::leave_staging() {
    const std::string staging = staging_directory();
    if (!context_.fs.exists(staging)) return;
    meta::MetaSnapshot view = context_.store.snapshot();
    const meta::Assignment* assignment =
        view->find_assignment(partition_.topic, partition_.partition);
    const meta::Topic* topic = view->find_topic(partition_.topic);
    auto set_aside_staging = [&](std::string_view why) {
        auto aside = set_aside(context_.fs, context_.clock, staging, staging + kQuarantineSuffix);
        if (!aside.is_ok()) {
            NARAD_LOG_ERROR("move of '{}' partition {}: cannot set aside the staging copy {}: {}",
                            partition_.topic, partition_.partition.value(), staging,
                            aside.status().to_string());
            return;
        }
        NARAD_LOG_ERROR(
            "move: set aside the staging copy of {}. Operator action required (topic={}, "
            "partition={}, quarantine_dir={}, partition_dir={}, source={})",
            why, partition_.topic, partition_.partition.value(), *aside, partition_directory(),
            source_.value());
        refresh_quarantine_metrics();
    };
    if (assignment != nullptr && assignment->owner == context_.self) {
        // The flip committed after all (an earlier attempt's, its reply lost). The copy under the
        // path came from the source unless this worker took an install off the path since.
        auto marker = read_marker(context_.fs, partition_directory());
        bool from_source = marker.is_ok() && marker->source == source_;
        if (from_source && !took_off_path_) {
            (void)context_.fs.remove_all(staging);
        } else {
            set_aside_staging(
                "a partition this node owns; the partition's records may not all be under its "
                "path");
        }
        return;
    }
    const meta::MemberInfo* member = view->find_member(source_);
    bool source_dead = member == nullptr || view->is_dead(source_, context_.clock.now(),
                                                          context_.options.source_dead_after);
    Millis retention{topic != nullptr ? topic->retention_ms : 0};
    if (source_dead && topic != nullptr && topic->incarnation == incarnation_ &&
        holds_unexpired_records(context_.fs, context_.clock, staging, retention)) {
        set_aside_staging(
            "a move that ended while its source is dead; it may be the only copy of the "
            "partition's records");
        return;
    }
    (void)context_.fs.remove_all(staging);
}

Result<uint64_t> MoveWorker::copy_pass(const TransferListing& listing) {
    {
        MutexLock lock(mutex_);
        progress_.bytes_total = listing.total_bytes();
        ++progress_.passes;
    }
    MoveMetrics::get().passes.inc();
    return staged_.pass(
        context_.source, source_, partition_.topic, partition_.partition, listing,
        [this] { return cancelled(); },
        [this](uint64_t bytes) {
            MoveMetrics::get().bytes.inc(static_cast<double>(bytes));
            MutexLock lock(mutex_);
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
    {
        MutexLock lock(mutex_);
        ++progress_.attempts;
    }
    for (uint32_t pass = 0; pass < options.max_passes; ++pass) {
        if (cancelled()) return Attempt::ended;
        // A source that reads dead is not called: a stopped process would hold each call for its
        // whole timeout, and only the liveness verdict matters now.
        if (source_reads_dead()) return after_source_failure();
        uint64_t copied = 0;
        if (!list_and_copy(&copied)) return after_source_failure();
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
        MutexLock lock(mutex_);
        progress_.non_converged = true;
        NARAD_LOG_WARN(
            "move of '{}' partition {}: the copy did not converge after {} passes; freezing the "
            "source for a stop-and-copy of the rest",
            partition_.topic, partition_.partition.value(), progress_.passes);
    }
    // Wait for a cutover slot, keeping the copy close behind the source meanwhile.
    while (context_.cutovers != nullptr && !context_.cutovers->try_acquire()) {
        if (cancelled()) return Attempt::ended;
        if (source_reads_dead()) return after_source_failure();
        uint64_t copied = 0;
        if (!list_and_copy(&copied)) return after_source_failure();
        pause(Millis(20), Wait::interruptible);
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
    remember(*listing);
    auto bytes = copy_pass(*listing);
    if (!bytes.is_ok()) {
        note_error(bytes.status().with_context("copying"));
        return false;
    }
    *copied = *bytes;
    return true;
}

void MoveWorker::remember(const TransferListing& listing) {
    // The source answered: it is alive, and this listing is what a force-promote would have to
    // reach should it die now.
    reached_source_ = true;
    last_listing_ = listing;
    last_listed_at_ = context_.clock.wall_now();
    if (dead_since_) {
        NARAD_LOG_INFO("move of '{}' partition {}: the source {} answers again", partition_.topic,
                       partition_.partition.value(), source_.value());
    }
    dead_since_.reset();
    death_reported_ = false;
    MutexLock lock(mutex_);
    if (progress_.blocked == "source_dead_copy_behind" ||
        progress_.blocked == "copy_unverifiable") {
        if (progress_.phase != MovePhase::blocked) progress_.blocked.clear();
    }
}

MoveWorker::Attempt MoveWorker::freeze_and_flip() {
    const MoveOptions& options = context_.options;
    set_phase(MovePhase::freezing);
    auto handoff =
        context_.source.prepare(source_, partition_.topic, partition_.partition, FreezeToken());
    if (!handoff.is_ok()) {
        note_error(handoff.status().with_context("freezing the source"));
        return Attempt::retry;
    }
    remember(handoff->listing);
    FreezeSpan span(*this);
    rearm_ = std::make_unique<Rearm>(context_.clock, context_.source, source_, partition_,
                                     handoff->token, options.freeze_ttl / 4);
    // The re-arm ends with this attempt (or earlier: resolve() lets the freeze lapse).
    struct RearmStop {
        std::unique_ptr<Rearm>& rearm;
        ~RearmStop() { rearm.reset(); }
    } rearm_stop{rearm_};
    auto lapsed = [this] { return rearm_ == nullptr || rearm_->lapsed(); };
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
        if (lapsed()) {
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
        remember(*next);
        listing = std::move(*next);
    }
    WallTime listed_at = context_.clock.wall_now();
    set_phase(MovePhase::installing);
    Status verified = staged_.verify(listing.high_watermark);
    if (!verified.is_ok()) return unverifiable(verified);
    auto finished =
        staged_.finish(listing, listed_at, marker_for(listing.high_watermark, Promotion::normal));
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
    if (!fenced.is_ok() || lapsed()) {
        note_error(fenced.is_ok() ? Status(Errc::conflict, "the freeze lapsed before the fence")
                                  : fenced.with_context("the fence"));
        return fenced.code() == Errc::conflict || lapsed() ? Attempt::refreeze : Attempt::retry;
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
    MutexLock lock(worker_.mutex_);
    worker_.freeze_started_ = started_;
}

MoveWorker::FreezeSpan::~FreezeSpan() {
    auto held = worker_.context_.clock.now() - started_;
    MoveMetrics::get().freeze.get().observe(std::chrono::duration<double>(held).count());
    MutexLock lock(worker_.mutex_);
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
        MutexLock lock(mutex_);
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

MoveMarker MoveWorker::marker_for(Offset hwm, Promotion promotion) {
    MoveMarker marker;
    marker.source = source_;
    marker.promoted_high_watermark = hwm;
    marker.force_promote = promotion == Promotion::forced;
    install_id_ = random_hex(8);
    marker.install = install_id_;
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

MoveWorker::Attempt MoveWorker::took_ownership(Promotion promotion) {
    installed_ = false;  // the copy is the partition now
    promotion_ = promotion;
    context_.handoff.forget(partition_.topic, partition_.partition);
    return Attempt::done;
}

MoveWorker::Attempt MoveWorker::flip(const FreezeToken& token, Offset hwm) {
    set_phase(MovePhase::flipping);
    NARAD_FAILPOINT("move.before_flip");
    // A proposal lost before the leader applied it is an unknown outcome too.
    Result<meta::FlipOutcome> outcome =
        failpoint::evaluate("move.flip_lost_before_commit").is_ok()
            ? context_.store.complete_move(partition_, source_, context_.self, token)
            : Result<meta::FlipOutcome>(Status(Errc::unknown_outcome, "the flip was lost"));
    // A failure injected here is a reply lost after the metastore decided (either way).
    Status lost = failpoint::evaluate("move.flip_reply_lost");
    if (!lost.is_ok()) outcome = Status(Errc::unknown_outcome, "the flip's reply was lost");
    if (!outcome.is_ok()) {
        note_error(outcome.status().with_context("the flip's outcome is unknown"));
        return resolve(token, hwm, Promotion::normal);
    }
    switch (*outcome) {
        case meta::FlipOutcome::flipped:
        case meta::FlipOutcome::already_flipped:
            return took_ownership(Promotion::normal);
        case meta::FlipOutcome::freeze_lapsed:
        case meta::FlipOutcome::source_alive: {
            note_error(Status(Errc::conflict, "the flip found the freeze lapsed"));
            Status back = uninstall();
            if (back.code() == Errc::conflict) return Attempt::ended;
            if (!back.is_ok()) note_error(back);
            return back.is_ok() ? Attempt::refreeze : Attempt::retry;
        }
        case meta::FlipOutcome::refused:
            break;
    }
    NARAD_LOG_WARN("move of '{}' partition {}: the flip was refused (re-planned or aborted)",
                   partition_.topic, partition_.partition.value());
    Status back = uninstall();
    if (!back.is_ok() && back.code() != Errc::conflict) note_error(back);
    return Attempt::ended;
}

bool MoveWorker::source_reads_dead() {
    meta::MetaSnapshot view = context_.store.snapshot();
    MonoTime now = context_.clock.now();
    bool dead = view->find_member(source_) == nullptr ||
                view->is_dead(source_, now, context_.options.source_dead_after);
    if (!dead) {
        dead_since_.reset();
        death_reported_ = false;
        return false;
    }
    if (!dead_since_) {
        dead_since_ = now;
        NARAD_LOG_WARN("move of '{}' partition {}: the source {} reads dead", partition_.topic,
                       partition_.partition.value(), source_.value());
    }
    return true;
}

bool MoveWorker::force_promote_due() {
    // Both clocks: the controller declares a member dead only once its own clock has seen it down
    // for the same bound, and this worker must have watched it read dead that long itself (the
    // verdict may be old when this worker first looks, after a restart or a leaderless spell).
    meta::MetaSnapshot view = context_.store.snapshot();
    return dead_since_ && view->declared_dead.count(source_) > 0 &&
           context_.clock.now() - *dead_since_ >= context_.options.force_promote_after;
}

MoveWorker::Attempt MoveWorker::after_source_failure() {
    if (!source_reads_dead()) return Attempt::retry;
    set_phase(MovePhase::waiting_for_source);
    auto report_once = [&](std::string reason, const std::string& message) {
        {
            MutexLock lock(mutex_);
            progress_.blocked = reason;
        }
        if (death_reported_) return;
        death_reported_ = true;
        NARAD_LOG_ERROR("{} ('{}' partition {} from {})", message, partition_.topic,
                        partition_.partition.value(), source_.value());
    };
    if (!reached_source_ || !last_listing_) {
        report_once("source_dead_copy_behind",
                    "move: the source is dead and this node never reached it, so it cannot tell "
                    "what the source made visible and cannot force-promote; waiting for the "
                    "source to return");
        return Attempt::retry;
    }
    Offset last_hwm = last_listing_->high_watermark;
    auto recovered = staged_.recovered_end();
    if (!recovered.is_ok() || *recovered > last_hwm) {
        report_once("copy_unverifiable",
                    fmt::format("move: the source is dead and this node's copy fails "
                                "verification, so it cannot force-promote (source_last_hwm={}, "
                                "err={})",
                                last_hwm.value(),
                                recovered.is_ok() ? "the copy recovers past the high watermark"
                                                  : recovered.status().to_string()));
        return Attempt::retry;
    }
    if (*recovered < last_hwm) {
        report_once("source_dead_copy_behind",
                    fmt::format("move: the source is dead and this node's copy is behind its last "
                                "high watermark, so it cannot force-promote: promoting would lose "
                                "records the source made visible. Waiting for the source to "
                                "return; abort the move to give up on it (copy_next_offset={}, "
                                "source_last_hwm={})",
                                recovered->value(), last_hwm.value()));
        return Attempt::retry;
    }
    {
        MutexLock lock(mutex_);
        progress_.blocked.clear();
    }
    if (!force_promote_due()) return Attempt::retry;
    return force_promote(*recovered);
}

MoveWorker::Attempt MoveWorker::force_promote(Offset hwm) {
    NARAD_LOG_WARN(
        "move of '{}' partition {}: the source {} has been dead for {} s; force-promoting the "
        "staged copy at high watermark {}",
        partition_.topic, partition_.partition.value(), source_.value(),
        std::chrono::duration_cast<std::chrono::seconds>(context_.options.force_promote_after)
            .count(),
        hwm.value());
    {
        MutexLock lock(mutex_);
        progress_.force_promoted = true;
    }
    set_phase(MovePhase::installing);
    // The last listing was read while produce and consume were live: its positions are clamped
    // to the promoted offset, so the new owner never starts past its own log end.
    TransferListing listing = *last_listing_;
    listing.high_watermark = hwm;
    auto finished = staged_.finish(listing, last_listed_at_, marker_for(hwm, Promotion::forced));
    if (!finished.is_ok()) {
        note_error(finished.status().with_context("making the copy durable"));
        return Attempt::retry;
    }
    Status installed = install();
    if (!installed.is_ok()) {
        note_error(installed.with_context("installing the copy"));
        return Attempt::retry;
    }
    set_phase(MovePhase::flipping);
    NARAD_FAILPOINT("move.before_force_promote");
    auto outcome = context_.store.force_promote(partition_, source_, context_.self);
    Status lost = failpoint::evaluate("move.flip_reply_lost");
    if (!lost.is_ok()) outcome = Status(Errc::unknown_outcome, "the flip's reply was lost");
    if (!outcome.is_ok()) {
        note_error(outcome.status().with_context("the force-promote's outcome is unknown"));
        return resolve(FreezeToken(), hwm, Promotion::forced);
    }
    switch (*outcome) {
        case meta::FlipOutcome::flipped:
        case meta::FlipOutcome::already_flipped:
            return took_ownership(Promotion::forced);
        case meta::FlipOutcome::source_alive:
        case meta::FlipOutcome::freeze_lapsed: {
            // The source came back (or the verdict is gone): copy and freeze it normally.
            NARAD_LOG_WARN(
                "move of '{}' partition {}: the source {} is alive again; no "
                "force-promote",
                partition_.topic, partition_.partition.value(), source_.value());
            {
                MutexLock lock(mutex_);
                progress_.force_promoted = false;
            }
            Status back = uninstall();
            if (back.code() == Errc::conflict) return Attempt::ended;
            return Attempt::retry;
        }
        case meta::FlipOutcome::refused:
            break;
    }
    NARAD_LOG_WARN(
        "move of '{}' partition {}: the force-promote was refused (re-planned or "
        "aborted)",
        partition_.topic, partition_.partition.value());
    (void)uninstall();
    return Attempt::ended;
}

MoveWorker::Attempt MoveWorker::resolve(const FreezeToken& token, Offset hwm, Promotion promotion) {
    // A lost reply is not a refusal: keep the install until a read proves the flip did not
    // commit, and only a read that starts unknown_settle after the last unknown proposal counts.
    set_phase(MovePhase::resolving);
    const MoveOptions& options = context_.options;
    MonoTime last_unknown = context_.clock.now();
    MonoTime give_up_proposing = last_unknown + options.flip_retry_for;
    while (true) {
        pause(options.resolve_poll, Wait::uninterruptible);
        MonoTime read_started = context_.clock.now();
        if (read_started >= give_up_proposing && rearm_ != nullptr) {
            NARAD_LOG_WARN(
                "move of '{}' partition {}: the flip is still unconfirmed after {} s; "
                "no more proposals, the source's freeze lapses",
                partition_.topic, partition_.partition.value(),
                std::chrono::duration_cast<std::chrono::seconds>(options.flip_retry_for).count());
            rearm_.reset();
        }
        auto read = context_.store.read_assignment(partition_);
        auto topic = context_.store.read_topic(partition_.topic);
        if (!read.is_ok() || !topic.is_ok()) continue;  // cannot ask: the install stays
        // An assignment of another incarnation (the topic was deleted, maybe recreated) is not
        // this move's: its flip can no longer commit, whoever owns the new partition.
        bool same_topic = topic->has_value() && (*topic)->incarnation == incarnation_;
        if (same_topic && read->has_value() && (*read)->owner == context_.self) {
            return took_ownership(promotion);
        }
        bool still_ours = same_topic && read->has_value() && (*read)->owner == source_ &&
                          (*read)->target == context_.self;
        bool source_dead = still_ours && source_reads_dead();
        if (source_dead && force_promote_due()) {
            // The source died with the flip unconfirmed: the install becomes a force-promote.
            if (promotion != Promotion::forced) {
                MoveMarker marker = marker_for(hwm, Promotion::forced);
                marker.durable_at_ms = context_.clock.wall_ms();
                Status rewritten = write_marker(context_.fs, partition_directory(), marker);
                if (!rewritten.is_ok()) {
                    note_error(rewritten.with_context("marking the install force-promoted"));
                    continue;
                }
                promotion = Promotion::forced;
                MutexLock lock(mutex_);
                progress_.force_promoted = true;
            }
            auto outcome = context_.store.force_promote(partition_, source_, context_.self);
            if (!outcome.is_ok()) {
                last_unknown = context_.clock.now();
                continue;
            }
            if (*outcome == meta::FlipOutcome::flipped ||
                *outcome == meta::FlipOutcome::already_flipped) {
                return took_ownership(promotion);
            }
        } else if (still_ours && promotion == Promotion::normal &&
                   read_started < give_up_proposing) {
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
                    return took_ownership(promotion);
                }
            }
        }
        bool settled = read_started - last_unknown >= options.unknown_settle;
        // With the source dead the install stays until it can be force-promoted (or the move is
        // re-planned or aborted): it may hold records nobody else can still serve.
        if (!settled || source_dead) continue;
        // A settled read says the flip did not commit: take the copy back off the path.
        Status back = uninstall();
        if (back.code() == Errc::conflict) return Attempt::ended;
        if (!back.is_ok()) {
            note_error(back);
            continue;
        }
        if (!still_ours) return Attempt::ended;
        return promotion == Promotion::forced ? Attempt::retry : Attempt::refreeze;
    }
}

Status MoveWorker::install() {
    auto guard = context_.guards.guard(partition_.topic);
    WriterLock topic_lock(*guard);
    meta::MetaSnapshot view = context_.store.snapshot();
    const meta::Topic* topic = view->find_topic(partition_.topic);
    if (topic == nullptr || topic->incarnation != incarnation_) {
        return Status(Errc::conflict, "the topic was deleted or recreated during the move");
    }
    context_.consume.drop_partition(partition_.topic, partition_.partition,
                                    queue::LastPosition::discard);
    NARAD_RETURN_IF_ERROR(context_.logs.close_partition(partition_.topic, partition_.partition));
    // A deleted incarnation's directory under the name (its purge never reached this node) is set
    // aside rather than refused forever: the record, read under the guard, names ours.
    std::string topic_directory = context_.logs.topic_directory(partition_.topic);
    auto existing = storage::read_incarnation(context_.fs, topic_directory);
    if (existing.is_ok() && *existing != incarnation_) {
        context_.consume.drop_topic(partition_.topic);
        NARAD_RETURN_IF_ERROR(close_topic_partitions(context_.fs, context_.logs, partition_.topic));
        NARAD_ASSIGN_OR_RETURN(
            std::string aside,
            set_aside(context_.fs, context_.clock, topic_directory,
                      topic_directory + kStaleIncarnationInfix + existing->value()));
        NARAD_LOG_WARN(
            "move: set aside stale incarnation directory {} (topic '{}', incarnation {})", aside,
            partition_.topic, existing->value());
    }
    NARAD_RETURN_IF_ERROR(
        storage::prepare_topic_directory(context_.fs, topic_directory, incarnation_));
    NARAD_FAILPOINT_RETURN("move.install");
    NARAD_RETURN_IF_ERROR(install_copy(context_.fs, context_.clock, staging_directory(),
                                       partition_directory(), Millis(topic->retention_ms)));
    installed_ = true;
    context_.consume.drop_partition(partition_.topic, partition_.partition,
                                    queue::LastPosition::discard);
    refresh_quarantine_metrics();
    return Status::ok();
}

Status MoveWorker::uninstall() {
    if (!installed_) return Status::ok();
    auto guard = context_.guards.guard(partition_.topic);
    WriterLock topic_lock(*guard);
    // Only this move's own install goes back: the topic directory must still hold the incarnation
    // the move prepared, and the path the install this worker put there. A delete and recreate
    // since would otherwise have the successor's partition renamed away.
    auto incarnation =
        storage::read_incarnation(context_.fs, context_.logs.topic_directory(partition_.topic));
    auto marker = read_marker(context_.fs, partition_directory());
    if (!incarnation.is_ok() || *incarnation != incarnation_ || !marker.is_ok() ||
        marker->install != install_id_) {
        installed_ = false;
        NARAD_LOG_ERROR(
            "move of '{}' partition {}: the partition's path no longer holds this move's install "
            "(the topic was deleted or recreated meanwhile); nothing is moved back",
            partition_.topic, partition_.partition.value());
        return Status(Errc::conflict, "the partition's path no longer holds this install");
    }
    context_.consume.drop_partition(partition_.topic, partition_.partition,
                                    queue::LastPosition::discard);
    NARAD_RETURN_IF_ERROR(context_.logs.close_partition(partition_.topic, partition_.partition));
    NARAD_RETURN_IF_ERROR(uninstall_copy(context_.fs, partition_directory(), staging_directory()));
    installed_ = false;
    took_off_path_ = true;
    return Status::ok();
}

}  // namespace narad::move
