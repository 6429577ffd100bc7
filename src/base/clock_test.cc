#include "base/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "base/mutex.h"

namespace narad {
namespace {

// Rule: a wait on a FakeClock ends only once the clock has been advanced to its deadline, however
// much real time passes; its condition ends it at once.
TEST(FakeClockTest, WaitsEndOnlyWhenTheClockReachesTheDeadline) {
    FakeClock clock;
    Mutex mutex;
    CondVar wake;
    std::atomic<bool> returned{false};
    std::atomic<bool> result{true};
    MonoTime start = clock.now();
    std::thread waiter([&] {
        MutexLock lock(mutex);
        result = clock.wait_for(lock, wake, std::chrono::seconds(15), [] { return false; });
        returned = true;
    });
    while (clock.waiters() == 0) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // real time passes: still waiting
    EXPECT_FALSE(returned.load());
    clock.advance(std::chrono::milliseconds(14'999));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(returned.load()) << "returned before its deadline";
    clock.advance(std::chrono::milliseconds(1));
    waiter.join();
    EXPECT_FALSE(result.load());
    EXPECT_EQ(clock.now() - start, std::chrono::seconds(15));

    bool done = false;
    std::thread notifier([&] {
        MutexLock lock(mutex);
        done = true;
        wake.notify_all();
    });
    MutexLock lock(mutex);
    EXPECT_TRUE(clock.wait_for(lock, wake, std::chrono::hours(1), [&] { return done; }));
    lock.unlock();
    notifier.join();
}

// Rule: the system clock's wait ends at its deadline (a bound, not a speed: it must not be early).
TEST(SystemClockTest, WaitEndsAtTheDeadline) {
    SystemClock& clock = SystemClock::instance();
    MonoTime start = clock.now();
    clock.sleep_for(std::chrono::milliseconds(20));
    EXPECT_GE(clock.now() - start, std::chrono::milliseconds(20));
}

}  // namespace
}  // namespace narad
