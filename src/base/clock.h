// The injectable clock. Every component that reads time takes a Clock&, so tests can freeze and
// advance it (FakeClock). Monotonic time drives deadlines (leases, freezes, ticks); wall time is
// what gets stored (record timestamps, segment ages). The clock also owns the waits on those
// deadlines and the timers that fire at them: a wait measured on a FakeClock ends, and a timer on
// it runs, only once the test has advanced it that far, so a test of a timing rule fails if the
// code waits less than the rule says. Implementations are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "base/mutex.h"

namespace narad {

using Millis = std::chrono::milliseconds;
using MonoTime = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;
// A Unix time in milliseconds as RFC 3339 in UTC, to the second ("2026-12-01T20:00:00Z").
std::string format_rfc3339(int64_t unix_ms);

class TimerQueue;

// A function queued on a clock (Clock::run_at). cancel() keeps it from running if it has not
// started, releases what it captured and leaves the queue at once (a long-poll answered early
// leaves nothing behind until its deadline); it may be called more than once, after the run, and
// after the clock is gone.
class Timer {
  public:
    Timer(std::function<void()> fn, MonoTime deadline, std::weak_ptr<TimerQueue> queue)
        : fn_(std::move(fn)), deadline_(deadline), queue_(std::move(queue)) {}
    void cancel();

  private:
    friend class TimerQueue;
    // The function, for the queue to run; empty when the timer was cancelled first.
    std::function<void()> claim();
    bool cancelled() const { return phase_.load() == kCancelled; }

    static constexpr int kPending = 0;
    static constexpr int kClaimed = 1;
    static constexpr int kCancelled = 2;
    std::atomic<int> phase_{kPending};  // whoever moves it off kPending owns fn_
    std::function<void()> fn_;
    const MonoTime deadline_;
    const std::weak_ptr<TimerQueue> queue_;
};

class Clock {
  public:
    virtual ~Clock();
    Clock(const Clock&) = delete;
    Clock& operator=(const Clock&) = delete;
    virtual MonoTime now() const = 0;
    virtual WallTime wall_now() const = 0;

    int64_t wall_ms() const {
        return std::chrono::duration_cast<Millis>(wall_now().time_since_epoch()).count();
    }

    // Waits on `wake` (its mutex held through `lock`) until `done()` holds or this clock reaches
    // `deadline`; returns done(). Whoever makes done() true notifies `wake`. A `done` that reads
    // guarded fields says so: [&]() REQUIRES(mutex_) { ... }.
    virtual bool wait_until(MutexLock& lock, CondVar& wake, MonoTime deadline,
                            const std::function<bool()>& done) const = 0;
    bool wait_for(MutexLock& lock, CondVar& wake, std::chrono::nanoseconds duration,
                  const std::function<bool()>& done) const {
        return wait_until(lock, wake, now() + duration, done);
    }
    // Blocks the calling thread until this clock reaches `deadline` (nothing interrupts it).
    void sleep_until(MonoTime deadline) const;
    void sleep_for(std::chrono::nanoseconds duration) const { sleep_until(now() + duration); }

    // Runs `fn` once this clock reaches `deadline` (at once if it has), on the clock's timer
    // thread: timers run one at a time, in deadline order, never on the caller's thread, so the
    // caller may hold locks the function takes. Keep them short: a timer that blocks delays every
    // other. After stop_timers() nothing runs.
    std::shared_ptr<Timer> run_at(MonoTime deadline, std::function<void()> fn);
    std::shared_ptr<Timer> run_after(std::chrono::nanoseconds delay, std::function<void()> fn) {
        return run_at(now() + delay, std::move(fn));
    }
    // Drops the timers not yet run and joins the timer thread; a timer running now finishes first.
    void stop_timers();

    // How the timer thread learns that a deadline has come: by sleeping until it (real time), or
    // by being told that the clock was moved (FakeClock::advance).
    enum class TimerWake { at_deadline, on_advance };

  protected:
    explicit Clock(TimerWake wake);
    TimerQueue& timers() { return *timers_; }

  private:
    std::shared_ptr<TimerQueue> timers_;  // the only owner; timers point back at it weakly
};

class SystemClock final : public Clock {
  public:
    SystemClock() : Clock(TimerWake::at_deadline) {}
    ~SystemClock() override { stop_timers(); }
    MonoTime now() const override { return std::chrono::steady_clock::now(); }
    WallTime wall_now() const override { return std::chrono::system_clock::now(); }
    bool wait_until(MutexLock& lock, CondVar& wake, MonoTime deadline,
                    const std::function<bool()>& done) const override {
        return wake.wait_until(lock, deadline, done);
    }
    // The process-wide real clock.
    static SystemClock& instance();
};

// A clock that moves only when told to. Starts at an arbitrary fixed point. A wait on it ends when
// its condition holds or when advance() has moved the clock past its deadline, never before,
// however much real time passes (waiters re-check about every millisecond of real time, so a
// missed notification only delays them). Its timers run when advance() passes their deadlines.
class FakeClock final : public Clock {
  public:
    FakeClock() : Clock(TimerWake::on_advance) {}
    ~FakeClock() override { stop_timers(); }
    MonoTime now() const override { return MonoTime(std::chrono::nanoseconds(mono_ns_.load())); }
    WallTime wall_now() const override {
        return WallTime(std::chrono::nanoseconds(wall_ns_.load()));
    }
    bool wait_until(MutexLock& lock, CondVar& wake, MonoTime deadline,
                    const std::function<bool()>& done) const override;

    // Moves the clock on by `delta`. Timers due on the way run first, earliest first, each with the
    // clock at its own deadline, and advance() returns once they (and any timer they queued within
    // `delta`, or that was running already) have run, so a test sees their effects
    // deterministically; advance(0) just lets what is due run. Calls are serialised; never call it
    // from a timer.
    void advance(std::chrono::nanoseconds delta);
    // Threads inside a wait_until of this clock right now (a test advances once they wait).
    int waiters() const { return waiters_.load(); }
    // Blocks until at least `count` threads wait on this clock having looked at its current time:
    // each found its deadline not reached and its condition false, and will not end its wait at
    // this time unless notified. So a test can advance, await the waiters, and then check that
    // nothing ran before its deadline, or that what was due has run and its thread waits again.
    // False if that does not happen within `patience` of real time (a waiter that waits on
    // something else, such as real time, never counts).
    bool await_waiters(int count, Millis patience = Millis(10'000)) const;
    // Moves wall time only, as a stepped system clock does.
    void set_wall(WallTime time) { wall_ns_ = time.time_since_epoch().count(); }

  private:
    void move_to(int64_t mono_ns);
    void saw(uint64_t waiter, int64_t mono_ns) const;

    std::atomic<int64_t> mono_ns_{1'000'000'000'000};
    std::atomic<int64_t> wall_ns_{1'780'000'000'000'000'000};
    mutable std::atomic<int> waiters_{0};
    Mutex advance_mutex_;  // serialises advance()
    // The time each waiter last saw, by waiter number (for await_waiters).
    mutable Mutex seen_mutex_;
    mutable CondVar seen_changed_;
    mutable std::map<uint64_t, int64_t> seen_ GUARDED_BY(seen_mutex_);
    mutable uint64_t next_waiter_ GUARDED_BY(seen_mutex_) = 0;
};

inline int64_t to_ms(std::chrono::nanoseconds d) {
    return std::chrono::duration_cast<Millis>(d).count();
}

}  // namespace narad
