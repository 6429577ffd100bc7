#include "queue/long_polls.h"

#include <algorithm>

namespace narad::queue {

LongPolls::LongPolls(Clock& clock, ConsumeMetrics& metrics, Reserve reserve, Release release)
    : clock_(clock),
      metrics_(metrics),
      reserve_(std::move(reserve)),
      release_(std::move(release)) {}

LongPolls::~LongPolls() { shut_down(); }

void LongPolls::set_readers(Readers run) { readers_ = std::move(run); }

void LongPolls::consume(ConsumeRequest request, Done done) {
    if (request.max == 0) request.max = 1;
    auto waiter = std::make_shared<Waiter>();
    waiter->request = std::move(request);
    waiter->done = std::move(done);
    waiter->started = clock_.now();
    waiter->deadline = waiter->started + waiter->request.wait;
    Status queued = run_read([this, waiter] { attempt(waiter); });
    if (!queued.is_ok()) finish(waiter, std::move(queued), "refused");
}

Status LongPolls::run_read(std::function<void()> read) {
    if (!readers_) {
        read();
        return Status::ok();
    }
    return posted_status(readers_(std::move(read)), "consume readers busy, retry");
}

void LongPolls::run_read_or_here(std::function<void()> read) {
    if (!readers_ || readers_(read) != ThreadPool::Posted::queued) read();
}

void LongPolls::attempt(const std::shared_ptr<Waiter>& waiter) {
    for (;;) {
        if (waiter->finished.load()) return;
        uint64_t generation;
        {
            MutexLock lock(mutex_);
            generation = generations_[waiter->request.topic];
        }
        Result<std::vector<Delivery>> result = reserve_(waiter->request);
        bool expired = clock_.now() >= waiter->deadline;
        if (!result.is_ok() || !result->empty() || expired) {
            const char* outcome = !result.is_ok() || !result->empty()
                                      ? (waiter->request.wait.count() == 0 ? "no_wait" : "hit")
                                      : (waiter->request.wait.count() == 0 ? "no_wait" : "timeout");
            finish(waiter, std::move(result), outcome);
            return;
        }
        MutexLock lock(mutex_);
        if (shut_down_) {
            // fall through to answer "nothing" below, outside the lock
        } else if (generations_[waiter->request.topic] != generation) {
            continue;  // something changed while we looked: look again
        } else {
            waiters_[waiter->request.topic].push_back(waiter);
            if (!waiter->timer) {
                std::weak_ptr<Waiter> weak = waiter;
                waiter->timer = clock_.run_at(waiter->deadline, through_gate([this, weak] {
                                                  if (auto w = weak.lock())
                                                      run_read_or_here([this, w] { expire(w); });
                                              }));
            }
            return;
        }
        break;
    }
    finish(waiter, std::vector<Delivery>{}, "cancelled");
}

void LongPolls::expire(const std::shared_ptr<Waiter>& waiter) {
    {
        MutexLock lock(mutex_);
        std::erase(waiters_[waiter->request.topic], waiter);
    }
    // One last look, so a message that arrived at the deadline is not missed.
    Result<std::vector<Delivery>> result = reserve_(waiter->request);
    finish(waiter, std::move(result), "timeout");
}

void LongPolls::finish(const std::shared_ptr<Waiter>& waiter, Result<std::vector<Delivery>> result,
                       const char* outcome) {
    if (waiter->finished.exchange(true)) {
        // Someone answered first; give back anything this attempt reserved.
        if (result.is_ok() && !result->empty()) {
            size_t released = release_(waiter->request.topic, *result);
            if (released > 0) wake(waiter->request.topic, released);
        }
        return;
    }
    if (waiter->timer) waiter->timer->cancel();
    if (result.is_ok()) {
        if (!result->empty() && std::string_view(outcome) == "timeout") outcome = "hit";
        if (result->empty()) metrics_.empty.with({waiter->request.topic}).inc();
        double waited = std::chrono::duration<double>(clock_.now() - waiter->started).count();
        metrics_.wait.with({waiter->request.topic, outcome}).observe(waited);
    }
    waiter->done(std::move(result));
}

void LongPolls::wake(const std::string& topic, uint64_t count) {
    std::vector<std::shared_ptr<Waiter>> woken;
    {
        MutexLock lock(mutex_);
        ++generations_[topic];
        auto it = waiters_.find(topic);
        if (it == waiters_.end() || it->second.empty()) return;
        if (count >= it->second.size()) {
            woken.swap(it->second);
        } else {
            auto end = it->second.begin() + static_cast<std::ptrdiff_t>(count);
            woken.assign(it->second.begin(), end);
            it->second.erase(it->second.begin(), end);
        }
    }
    // Each attempt is handed on from the clock's timer thread, so whoever woke them (a commit, an
    // ack, the reaper) never runs a read itself when the readers are full.
    for (auto& waiter : woken) {
        clock_.run_at(clock_.now(), through_gate([this, waiter] {
                          run_read_or_here([this, waiter] { attempt(waiter); });
                      }));
    }
}

void LongPolls::on_append(const std::string& topic, PartitionId partition, Offset hwm) {
    uint64_t appended = kWakeAll;
    {
        MutexLock lock(hwm_mutex_);
        auto [it, inserted] = hwms_.try_emplace({topic, partition.value()}, hwm);
        if (!inserted) {
            // A lower or equal watermark means the log was replaced (recreated): wake all.
            appended = hwm > it->second ? hwm.distance_from(it->second) : kWakeAll;
            it->second = hwm;
        }
    }
    if (appended > 0) wake(topic, appended);
}

void LongPolls::forget(std::string_view topic) {
    MutexLock lock(hwm_mutex_);
    std::erase_if(hwms_, [&](const auto& entry) { return entry.first.first == topic; });
}

void LongPolls::forget(std::string_view topic, PartitionId partition) {
    MutexLock lock(hwm_mutex_);
    hwms_.erase({std::string(topic), partition.value()});
}

std::function<void()> LongPolls::through_gate(std::function<void()> fn) const {
    return [gate = gate_, fn = std::move(fn)] {
        {
            MutexLock lock(gate->mutex);
            if (!gate->open) return;
            ++gate->running;
        }
        fn();
        MutexLock lock(gate->mutex);
        if (--gate->running == 0) gate->idle.notify_all();
    };
}

void LongPolls::shut_down() {
    {
        MutexLock lock(gate_->mutex);
        gate_->open = false;
        gate_->idle.wait(lock, [&]() REQUIRES(gate_->mutex) { return gate_->running == 0; });
    }
    std::vector<std::shared_ptr<Waiter>> parked;
    {
        MutexLock lock(mutex_);
        shut_down_ = true;
        for (auto& [topic, list] : waiters_) parked.insert(parked.end(), list.begin(), list.end());
        waiters_.clear();
    }
    for (auto& waiter : parked) finish(waiter, std::vector<Delivery>{}, "cancelled");
}

}  // namespace narad::queue
