#include "base/periodic.h"

#include <gtest/gtest.h>

#include <atomic>

namespace narad {
namespace {

// Rule: a pass runs only once the task's clock has moved a whole interval since the last pass
// ended, and once per interval: never before, however much real time passes.
TEST(PeriodicTaskTest, RunsOncePerIntervalOfItsClock) {
    FakeClock clock;
    std::atomic<int> passes{0};
    PeriodicTask task("test-periodic", clock, Millis(1'000), [&] { ++passes; });
    task.start();
    ASSERT_TRUE(clock.await_waiters(1));
    clock.advance(Millis(999));
    ASSERT_TRUE(clock.await_waiters(1));
    EXPECT_EQ(passes.load(), 0) << "a pass ran before its interval";
    clock.advance(Millis(1));
    ASSERT_TRUE(clock.await_waiters(1));  // the pass ran and the loop waits again
    EXPECT_EQ(passes.load(), 1);
    clock.advance(Millis(999));
    ASSERT_TRUE(clock.await_waiters(1));
    EXPECT_EQ(passes.load(), 1) << "the next interval starts when the pass ends";
    clock.advance(Millis(1));
    ASSERT_TRUE(clock.await_waiters(1));
    EXPECT_EQ(passes.load(), 2);
    task.stop();
}

// Rule: run_now() runs a pass at once without the clock moving, and stop() ends the wait at once
// (the interval is never waited out).
TEST(PeriodicTaskTest, RunNowAndStopDoNotWaitForTheInterval) {
    FakeClock clock;
    std::atomic<int> passes{0};
    PeriodicTask task("test-periodic", clock, std::chrono::hours(1), [&] { ++passes; });
    task.start();
    ASSERT_TRUE(clock.await_waiters(1));
    MonoTime waited_at = clock.now();
    task.run_now();
    while (passes.load() == 0) std::this_thread::yield();
    task.stop();
    EXPECT_EQ(passes.load(), 1);
    EXPECT_EQ(clock.now(), waited_at);
    EXPECT_EQ(clock.waiters(), 0);
}

}  // namespace
}  // namespace narad
