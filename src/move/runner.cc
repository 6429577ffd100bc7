#include "move/runner.h"

#include "base/log.h"
#include "move/move_metrics.h"

namespace narad::move {

MoveRunner::MoveRunner(MoveContext& context, RunnerOptions options)
    : context_(context), options_(options) {}

MoveRunner::~MoveRunner() { stop(); }

void MoveRunner::start() {
    if (task_) return;
    task_ = std::make_unique<PeriodicTask>("narad-moves", options_.tick, [this] { tick(); });
    task_->start();
}

void MoveRunner::stop() {
    if (task_) task_->stop();
    std::map<meta::PartitionKey, std::unique_ptr<MoveWorker>> workers;
    std::vector<std::unique_ptr<MoveWorker>> stopping;
    {
        std::lock_guard lock(mutex_);
        workers.swap(workers_);
        stopping.swap(stopping_);
    }
    for (auto& [key, worker] : workers) worker->cancel();
    // Destructors join.
}

void MoveRunner::tick() {
    context_.handoff.tick();
    meta::MetaSnapshot view = context_.store.snapshot();
    Versions now{view->topics_version, view->assignments_version, view->members_version};
    MoveMetrics& metrics = MoveMetrics::get();
    std::vector<std::unique_ptr<MoveWorker>> finished;
    {
        std::lock_guard lock(mutex_);
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
            MovePhase phase = worker->progress().phase;
            if (phase == MovePhase::blocked) {
                blocked[worker->progress().blocked] += 1;
            } else if (!worker->finished()) {
                ++inflight;
            }
        }
        if (!stopping_.empty()) force_next_ = true;
        metrics.inflight.set(static_cast<double>(inflight));
        metrics.blocked.with({"copy_unverifiable"}).set(blocked["copy_unverifiable"]);
    }
    // Joined outside the lock (they are finished: this is quick).
    finished.clear();
}

std::vector<MoveProgress> MoveRunner::progress() const {
    std::lock_guard lock(mutex_);
    std::vector<MoveProgress> out;
    for (const auto& [key, worker] : workers_) out.push_back(worker->progress());
    return out;
}

uint64_t MoveRunner::full_passes() const {
    std::lock_guard lock(mutex_);
    return full_passes_;
}

uint64_t MoveRunner::skipped_ticks() const {
    std::lock_guard lock(mutex_);
    return skipped_;
}

}  // namespace narad::move
