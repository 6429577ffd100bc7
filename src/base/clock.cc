#include "base/clock.h"

#include <ctime>

#include "base/mutex.h"
#include "base/timer_queue.h"

namespace narad {

std::string format_rfc3339(int64_t unix_ms) {
    std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

Clock::Clock(TimerWake wake) : timers_(std::make_shared<TimerQueue>(*this, wake)) {}

// The concrete clock has stopped the queue already (its now() is gone by now).
Clock::~Clock() = default;

std::shared_ptr<Timer> Clock::run_at(MonoTime deadline, std::function<void()> fn) {
    return timers_->add(deadline, std::move(fn));
}

void Clock::stop_timers() { timers_->stop(); }

void Clock::sleep_until(MonoTime deadline) const {
    Mutex mutex;
    CondVar never;
    MutexLock lock(mutex);
    wait_until(lock, never, deadline, [] { return false; });
}

SystemClock& SystemClock::instance() {
    static SystemClock clock;
    return clock;
}

bool FakeClock::wait_until(MutexLock& lock, CondVar& wake, MonoTime deadline,
                           const std::function<bool()>& done) const {
    uint64_t waiter;
    {
        MutexLock seen_lock(seen_mutex_);
        waiter = next_waiter_++;
    }
    ++waiters_;
    for (;;) {
        if (done()) break;
        int64_t seen = mono_ns_.load();
        if (seen >= deadline.time_since_epoch().count()) break;
        saw(waiter, seen);
        wake.wait_for(lock, std::chrono::milliseconds(1));
    }
    {
        MutexLock seen_lock(seen_mutex_);
        seen_.erase(waiter);
    }
    --waiters_;
    return done();
}

void FakeClock::saw(uint64_t waiter, int64_t mono_ns) const {
    MutexLock lock(seen_mutex_);
    auto [it, added] = seen_.try_emplace(waiter, mono_ns);
    if (!added && it->second == mono_ns) return;
    it->second = mono_ns;
    seen_changed_.notify_all();
}

bool FakeClock::await_waiters(int count, Millis patience) const {
    auto give_up = std::chrono::steady_clock::now() + patience;
    MutexLock lock(seen_mutex_);
    for (;;) {
        int64_t current = mono_ns_.load();
        int caught_up = 0;
        for (const auto& [waiter, seen] : seen_) caught_up += seen == current ? 1 : 0;
        if (caught_up >= count) return true;
        if (std::chrono::steady_clock::now() >= give_up) return false;
        // advance() does not notify: look again after a moment.
        seen_changed_.wait_for(lock, std::chrono::milliseconds(1));
    }
}

void FakeClock::move_to(int64_t mono_ns) {
    int64_t delta = mono_ns - mono_ns_.load();
    if (delta <= 0) return;
    mono_ns_ += delta;
    wall_ns_ += delta;
}

void FakeClock::advance(std::chrono::nanoseconds delta) {
    MutexLock serial(advance_mutex_);
    const int64_t target = mono_ns_.load() + delta.count();
    for (std::optional<MonoTime> next = timers().next_deadline();
         next && next->time_since_epoch().count() <= target; next = timers().next_deadline()) {
        move_to(next->time_since_epoch().count());
        timers().run_due();
    }
    move_to(target);
    timers().run_due();  // also a timer that was running already
}

}  // namespace narad
