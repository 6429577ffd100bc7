#include "base/timer_queue.h"

#include "base/assert.h"
#include "base/thread_pool.h"

namespace narad {

void Timer::cancel() {
    int expected = kPending;
    if (!phase_.compare_exchange_strong(expected, kCancelled)) return;
    fn_ = nullptr;  // release what it captured now, not at the deadline
    if (auto queue = queue_.lock()) queue->drop(*this);
}

std::function<void()> Timer::claim() {
    int expected = kPending;
    if (!phase_.compare_exchange_strong(expected, kClaimed)) return nullptr;
    return std::move(fn_);
}

std::shared_ptr<Timer> TimerQueue::add(MonoTime deadline, std::function<void()> fn) {
    auto timer = std::make_shared<Timer>(std::move(fn), deadline, weak_from_this());
    {
        MutexLock lock(mutex_);
        if (stopping_) return timer;
        timers_.emplace(deadline, timer);
        if (!thread_.joinable()) thread_ = named_thread("narad-timers", [this] { run(); });
    }
    wake_.notify_all();
    return timer;
}

void TimerQueue::drop(const Timer& timer) {
    MutexLock lock(mutex_);
    auto [first, end] = timers_.equal_range(timer.deadline_);
    for (auto it = first; it != end; ++it) {
        if (it->second.get() == &timer) {
            timers_.erase(it);
            return;
        }
    }
}

std::optional<MonoTime> TimerQueue::next_deadline() const {
    MutexLock lock(mutex_);
    for (const auto& [deadline, timer] : timers_) {
        if (!timer->cancelled()) return deadline;
    }
    return std::nullopt;
}

void TimerQueue::run_due() {
    MutexLock lock(mutex_);
    if (!thread_.joinable()) return;  // no timer was ever added, or stopped
    NARAD_ASSERT(thread_.get_id() != std::this_thread::get_id(),
                 "a timer waits for the timers to run: it would wait for itself");
    wake_.notify_all();
    idle_.wait(lock, [&]() REQUIRES(mutex_) { return stopping_ || (!running_ && !due_waiting()); });
}

void TimerQueue::stop() {
    std::thread thread;
    {
        MutexLock lock(mutex_);
        stopping_ = true;
        timers_.clear();
        thread = std::move(thread_);
    }
    wake_.notify_all();
    idle_.notify_all();
    if (!thread.joinable()) return;
    // A timer that ends the process (exit() runs the static clock's destructor) cannot join itself.
    if (thread.get_id() == std::this_thread::get_id()) {
        thread.detach();
    } else {
        thread.join();
    }
}

std::multimap<MonoTime, std::shared_ptr<Timer>>::iterator TimerQueue::first_waiting() {
    auto first = timers_.begin();
    while (first != timers_.end() && first->second->cancelled()) first = timers_.erase(first);
    return first;
}

bool TimerQueue::due_waiting() {
    auto first = first_waiting();
    return first != timers_.end() && first->first <= clock_.now();
}

void TimerQueue::run() {
    MutexLock lock(mutex_);
    while (!stopping_) {
        auto first = first_waiting();
        if (first == timers_.end() || first->first > clock_.now()) {
            idle_.notify_all();
            if (first == timers_.end() || wake_mode_ == Clock::TimerWake::on_advance) {
                wake_.wait(lock);
            } else {
                wake_.wait_until(lock, first->first);
            }
            continue;
        }
        std::shared_ptr<Timer> timer = std::move(first->second);
        timers_.erase(first);
        std::function<void()> fn = timer->claim();
        if (!fn) continue;  // cancelled meanwhile
        running_ = true;
        lock.unlock();
        run_contained(fn, "timer");
        fn = nullptr;  // what it captured goes before the queue looks idle
        lock.lock();
        running_ = false;
    }
    idle_.notify_all();
}

}  // namespace narad
