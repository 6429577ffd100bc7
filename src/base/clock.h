// The injectable clock. Every component that reads time takes a Clock&, so tests can freeze and
// advance it (FakeClock). Monotonic time drives deadlines (leases, freezes, ticks); wall time is
// what gets stored (record timestamps, segment ages). The clock also owns the waits on those
// deadlines: a wait measured on a FakeClock ends only once the test has advanced it that far, so a
// test of a timing rule fails if the code waits less than the rule says. Implementations are
// thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "base/mutex.h"

namespace narad {

using Millis = std::chrono::milliseconds;
using MonoTime = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;
// A Unix time in milliseconds as RFC 3339 in UTC, to the second ("2026-12-01T20:00:00Z").
std::string format_rfc3339(int64_t unix_ms);

class Clock {
  public:
    virtual ~Clock() = default;
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
};

class SystemClock final : public Clock {
  public:
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
// missed notification only delays them).
class FakeClock final : public Clock {
  public:
    MonoTime now() const override { return MonoTime(std::chrono::nanoseconds(mono_ns_.load())); }
    WallTime wall_now() const override {
        return WallTime(std::chrono::nanoseconds(wall_ns_.load()));
    }
    bool wait_until(MutexLock& lock, CondVar& wake, MonoTime deadline,
                    const std::function<bool()>& done) const override;

    void advance(std::chrono::nanoseconds delta) {
        mono_ns_ += delta.count();
        wall_ns_ += delta.count();
    }
    // Threads inside a wait_until of this clock right now (a test advances once they wait).
    int waiters() const { return waiters_.load(); }
    // Moves wall time only, as a stepped system clock does.
    void set_wall(WallTime time) { wall_ns_ = time.time_since_epoch().count(); }

  private:
    std::atomic<int64_t> mono_ns_{1'000'000'000'000};
    std::atomic<int64_t> wall_ns_{1'780'000'000'000'000'000};
    mutable std::atomic<int> waiters_{0};
};

inline int64_t to_ms(std::chrono::nanoseconds d) {
    return std::chrono::duration_cast<Millis>(d).count();
}

}  // namespace narad
