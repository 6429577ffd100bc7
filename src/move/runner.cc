#include "move/runner.h"

#include "base/log.h"
#include "base/mutex.h"
#include "move/move_metrics.h"
#include "move/quarantine.h"

namespace narad::move {

MoveRunner::MoveRunner(MoveContext& context, RunnerOptions options)
    : context_(context), options_(options), sweep_(context, options.sweep) {}

MoveRunner::~MoveRunner() { stop(); }

void MoveRunner::start() {
    if (task_) return;
    // Every copy set aside earlier waits for an operator: say so at start-up, once per copy.
    std::vector<QuarantinedCopy> copies = list_quarantined(context_.fs, context_.data_dir);
    publish_quarantine_metrics(copies);
    uint64_t bytes = 0;
    for (const QuarantinedCopy& copy : copies) {
        bytes += copy.bytes;
        NARAD_LOG_ERROR(
            "quarantined partition copy on this node: it was set aside instead of deleted and may "
            "hold the only instance of some of its records; inspect it before removing it "
            "(kind={}, topic={}, partition={}, dir={}, bytes={})",
            copy.kind, copy.topic, copy.partition, copy.directory, copy.bytes);
    }
    if (!copies.empty()) {
        NARAD_LOG_ERROR(
            "this node holds quarantined partition copies; none is removed automatically "
            "(copies={}, bytes={}; docs/operations.md, \"Quarantined copies\")",
            copies.size(), bytes);
    }
    task_ = std::make_unique<PeriodicTask>("narad-moves", context_.clock, options_.tick,
                                           [this] { tick(); });
    task_->start();
}

void MoveRunner::stop() {
    if (task_) task_->stop();
    std::map<meta::PartitionKey, std::unique_ptr<MoveWorker>> workers;
    std::vector<std::unique_ptr<MoveWorker>> stopping;
    {
        MutexLock lock(mutex_);
        workers.swap(workers_);
        stopping.swap(stopping_);
    }
    for (auto& [key, worker] : workers) worker->cancel();
    // Destructors join.
}

bool MoveRunner::busy(const meta::PartitionKey& key) const {
    MutexLock lock(mutex_);
    if (workers_.count(key) > 0) return true;
    for (const auto& worker : stopping_) {
        if (worker->partition() == key) return true;
    }
    return false;
}

SweepReport MoveRunner::last_sweep() const {
    MutexLock lock(mutex_);
    return last_sweep_;
}

uint64_t MoveRunner::sweeps() const {
    MutexLock lock(mutex_);
    return sweeps_;
}

void MoveRunner::tick() {
    context_.handoff.tick();
    ++ticks_;
    meta::MetaSnapshot view = context_.store.snapshot();
    Versions now{view->topics_version, view->assignments_version, view->members_version};
    MoveMetrics& metrics = MoveMetrics::get();
    std::vector<std::unique_ptr<MoveWorker>> finished;
    {
        MutexLock lock(mutex_);
        // Workers that exited since the last tick force a pass (their partition may need a new
        // worker, or none).
        bool exited = false;
        for (const auto& [key, worker] : workers_) {
            if (worker->finished() && worker->progress().phase != MovePhase::blocked) {
                exited = true;
            }
        }
        MonoTime clock_now = context_.clock.now();
        bool due = clock_now - last_full_pass_ >= options_.full_pass_every;
        if (seen_ == now && !force_next_ && !exited && !due) {
            ++skipped_;
        } else {
            seen_ = now;
            last_full_pass_ = clock_now;
            ++full_passes_;
            force_next_ = false;
            // Cancel workers whose partition is no longer targeted here; drop finished ones.
            for (auto it = workers_.begin(); it != workers_.end();) {
                const meta::Assignment* assignment =
                    view->find_assignment(it->first.topic, it->first.partition);
                bool wanted = assignment != nullptr && assignment->target == context_.self &&
                              assignment->owner == it->second->source();
                MovePhase phase = it->second->progress().phase;
                if (it->second->finished() && (phase != MovePhase::blocked || !wanted)) {
                    finished.push_back(std::move(it->second));
                    it = workers_.erase(it);
                    continue;
                }
                if (!wanted && !it->second->finished()) {
                    it->second->cancel();
                    stopping_.push_back(std::move(it->second));
                    it = workers_.erase(it);
                    continue;
                }
                ++it;
            }
            // Start workers for new targets.
            for (const auto& [key, assignment] : view->assignments) {
                if (assignment.target != context_.self || assignment.owner == context_.self) {
                    continue;
                }
                if (workers_.count(key) > 0) continue;
                bool still_stopping = false;
                for (const auto& worker : stopping_) {
                    if (worker->partition() == key) still_stopping = true;
                }
                if (still_stopping) {
                    force_next_ = true;
                    continue;
                }
                const meta::Topic* topic = view->find_topic(key.topic);
                if (topic == nullptr) continue;
                auto worker = std::make_unique<MoveWorker>(context_, key, assignment.owner,
                                                           topic->incarnation);
                worker->start();
                workers_.emplace(key, std::move(worker));
            }
        }
        std::erase_if(stopping_, [&](std::unique_ptr<MoveWorker>& worker) {
            if (!worker->finished()) return false;
            finished.push_back(std::move(worker));
            return true;
        });
        // Unfinished work (a failed worker waiting for its replacement, moves in flight) keeps
        // the next tick a full pass.
        uint32_t inflight = 0;
        std::map<std::string, double> blocked;
        for (const auto& [key, worker] : workers_) {
            MoveProgress progress = worker->progress();
            if (!progress.blocked.empty()) blocked[progress.blocked] += 1;
            if (progress.phase != MovePhase::blocked && !worker->finished()) ++inflight;
        }
        if (!stopping_.empty()) force_next_ = true;
        metrics.inflight.set(static_cast<double>(inflight));
        for (const char* reason : {"copy_unverifiable", "source_dead_copy_behind"}) {
            metrics.blocked.with({reason}).set(blocked[reason]);
        }
    }
    // Joined outside the lock (they are finished: this is quick).
    finished.clear();
    if (options_.sweep_every > 0 && ticks_ % options_.sweep_every == 0) {
        SweepReport report =
            sweep_.run([this](const meta::PartitionKey& key) { return busy(key); });
        MutexLock lock(mutex_);
        last_sweep_ = report;
        ++sweeps_;
    }
}

std::vector<MoveProgress> MoveRunner::progress() const {
    MutexLock lock(mutex_);
    std::vector<MoveProgress> out;
    for (const auto& [key, worker] : workers_) out.push_back(worker->progress());
    return out;
}

uint64_t MoveRunner::full_passes() const {
    MutexLock lock(mutex_);
    return full_passes_;
}

uint64_t MoveRunner::skipped_ticks() const {
    MutexLock lock(mutex_);
    return skipped_;
}

}  // namespace narad::move
