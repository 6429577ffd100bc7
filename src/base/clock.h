// The injectable clock. Every component that reads time takes a Clock&, so tests can freeze and
// advance it (FakeClock). Monotonic time drives deadlines (leases, freezes, ticks); wall time is
// what gets stored (record timestamps, segment ages). Implementations are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace narad {

using Millis = std::chrono::milliseconds;
using MonoTime = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;

class Clock {
  public:
    virtual ~Clock() = default;
    virtual MonoTime now() const = 0;
    virtual WallTime wall_now() const = 0;

    int64_t wall_ms() const {
        return std::chrono::duration_cast<Millis>(wall_now().time_since_epoch()).count();
    }
};

class SystemClock final : public Clock {
  public:
    MonoTime now() const override { return std::chrono::steady_clock::now(); }
    WallTime wall_now() const override { return std::chrono::system_clock::now(); }
    // The process-wide real clock.
    static SystemClock& instance();
};

// A clock that moves only when told to. Starts at an arbitrary fixed point.
class FakeClock final : public Clock {
  public:
    MonoTime now() const override { return MonoTime(std::chrono::nanoseconds(mono_ns_.load())); }
    WallTime wall_now() const override {
        return WallTime(std::chrono::nanoseconds(wall_ns_.load()));
    }

    void advance(std::chrono::nanoseconds delta) {
        mono_ns_ += delta.count();
        wall_ns_ += delta.count();
    }
    // Moves wall time only, as a stepped system clock does.
    void set_wall(WallTime time) { wall_ns_ = time.time_since_epoch().count(); }

  private:
    std::atomic<int64_t> mono_ns_{1'000'000'000'000};
    std::atomic<int64_t> wall_ns_{1'780'000'000'000'000'000};
};

inline int64_t to_ms(std::chrono::nanoseconds d) {
    return std::chrono::duration_cast<Millis>(d).count();
}

}  // namespace narad
