#include "base/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

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

// Patience for something that must happen soon in real time (never reached when the code works).
constexpr auto kPatience = std::chrono::seconds(30);

// The times (on `clock`) at which the named timers ran, in the order they ran.
struct RunLog {
    void add(const Clock& clock, int name) {
        MutexLock lock(mutex);
        runs.emplace_back(name, clock.now());
    }
    std::vector<std::pair<int, MonoTime>> get() {
        MutexLock lock(mutex);
        return runs;
    }
    Mutex mutex;
    std::vector<std::pair<int, MonoTime>> runs GUARDED_BY(mutex);
};

// Rule: a FakeClock's timers run only when advance() passes their deadlines, earliest first
// whatever the order they were set in, each with the clock at its own deadline; advance() returns
// once they have run.
TEST(FakeClockTimerTest, TimersFireInDeadlineOrderWhenAdvancedPast) {
    FakeClock clock;
    RunLog log;
    MonoTime start = clock.now();
    clock.run_after(std::chrono::seconds(3), [&] { log.add(clock, 3); });
    clock.run_after(std::chrono::seconds(1), [&] { log.add(clock, 1); });
    clock.run_after(std::chrono::seconds(2), [&] { log.add(clock, 2); });
    clock.run_after(std::chrono::seconds(2), [&] { log.add(clock, 22); });  // same deadline: later

    clock.advance(std::chrono::milliseconds(999));
    EXPECT_TRUE(log.get().empty()) << "a timer ran before its deadline";
    clock.advance(std::chrono::milliseconds(1'501));
    auto runs = log.get();
    ASSERT_EQ(runs.size(), 3u);
    EXPECT_EQ(runs[0], std::make_pair(1, start + std::chrono::seconds(1)));
    EXPECT_EQ(runs[1], std::make_pair(2, start + std::chrono::seconds(2)));
    EXPECT_EQ(runs[2], std::make_pair(22, start + std::chrono::seconds(2)));
    EXPECT_EQ(clock.now(), start + std::chrono::milliseconds(2'500));
    clock.advance(std::chrono::milliseconds(500));
    ASSERT_EQ(log.get().size(), 4u);
    EXPECT_EQ(log.get()[3], std::make_pair(3, start + std::chrono::seconds(3)));
}

// Rule: a timer that a timer sets within the span advance() covers runs within that advance, at
// its own deadline.
TEST(FakeClockTimerTest, TimerSetByATimerRunsInTheSameAdvance) {
    FakeClock clock;
    RunLog log;
    MonoTime start = clock.now();
    clock.run_after(std::chrono::seconds(1), [&] {
        log.add(clock, 1);
        clock.run_after(std::chrono::seconds(1), [&] { log.add(clock, 2); });
    });
    clock.advance(std::chrono::seconds(5));
    auto runs = log.get();
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[1], std::make_pair(2, start + std::chrono::seconds(2)));
}

// Rule: a timer whose deadline the clock has already reached runs at once, on the timer thread
// (not on the caller's, which may hold locks the timer takes), without any advance().
TEST(FakeClockTimerTest, TimerSetInThePastRunsAtOnce) {
    FakeClock clock;
    Mutex caller_lock;
    std::promise<std::thread::id> ran_on;
    {
        MutexLock lock(caller_lock);
        clock.run_at(clock.now() - std::chrono::seconds(1), [&] {
            MutexLock timer_lock(caller_lock);
            ran_on.set_value(std::this_thread::get_id());
        });
    }
    auto ran = ran_on.get_future();
    ASSERT_EQ(ran.wait_for(kPatience), std::future_status::ready);
    EXPECT_NE(ran.get(), std::this_thread::get_id());
}

// Rule: a cancelled timer never runs (not when the clock passes its deadline, nor by the time a
// timer due after it has run), cancel() releases what its function captured at once, and
// cancelling again or after the run is harmless.
TEST(FakeClockTimerTest, CancelledTimerNeverRunsAndReleasesItsFunction) {
    FakeClock clock;
    std::atomic<bool> cancelled_ran{false};
    auto token = std::make_shared<int>(1);
    std::weak_ptr<int> weak = token;
    auto cancelled = clock.run_after(Millis(10), [&cancelled_ran, token] { cancelled_ran = true; });
    token.reset();
    EXPECT_FALSE(weak.expired());
    cancelled->cancel();
    EXPECT_TRUE(weak.expired());
    std::atomic<bool> later_ran{false};
    auto later = clock.run_after(Millis(40), [&] { later_ran = true; });
    clock.advance(Millis(40));
    EXPECT_TRUE(later_ran.load());
    EXPECT_FALSE(cancelled_ran.load());
    cancelled->cancel();
    later->cancel();
    later->cancel();
}

// Rule: a system clock's timer runs once its delay has passed in real time, not before.
TEST(SystemClockTimerTest, TimerRunsAfterItsDelay) {
    SystemClock clock;
    MonoTime set_at = clock.now();
    std::promise<MonoTime> ran_at;
    auto timer = clock.run_after(Millis(20), [&] { ran_at.set_value(clock.now()); });
    auto ran = ran_at.get_future();
    ASSERT_EQ(ran.wait_for(kPatience), std::future_status::ready);
    EXPECT_GE(ran.get() - set_at, Millis(20));
    timer->cancel();  // after the run: harmless
}

// Rule: stop_timers() waits for a timer that is running to finish, drops the timers not yet due
// (they never run), and a timer handle may outlive its clock.
TEST(SystemClockTimerTest, StopJoinsTheRunningTimerAndDropsTheRest) {
    std::shared_ptr<Timer> pending;
    std::atomic<bool> pending_ran{false};
    {
        SystemClock clock;
        Mutex mutex;
        CondVar changed;
        bool started = false;
        bool released = false;
        std::atomic<bool> finished{false};
        clock.run_after(Millis(0), [&] {
            MutexLock lock(mutex);
            started = true;
            changed.notify_all();
            changed.wait(lock, [&] { return released; });
            finished = true;
        });
        pending = clock.run_after(std::chrono::hours(1), [&] { pending_ran = true; });
        {
            MutexLock lock(mutex);
            changed.wait(lock, [&] { return started; });
        }
        std::atomic<bool> stopped{false};
        bool finished_when_stopped = false;
        std::thread stopper([&] {
            clock.stop_timers();
            finished_when_stopped = finished.load();
            stopped = true;
        });
        EXPECT_FALSE(stopped.load()) << "stop returned while a timer was running";
        {
            MutexLock lock(mutex);
            released = true;
            changed.notify_all();
        }
        stopper.join();
        EXPECT_TRUE(finished_when_stopped);
        std::atomic<bool> after_stop_ran{false};
        clock.run_after(Millis(0), [&] { after_stop_ran = true; });
        EXPECT_FALSE(after_stop_ran.load());
    }
    pending->cancel();  // the clock is gone
    EXPECT_FALSE(pending_ran.load());
}

// Rule: await_waiters() returns once a thread waits on the clock having seen its current time,
// also after the clock moved without reaching the wait's deadline; it gives up on a thread that
// waits on anything but this clock.
TEST(FakeClockTest, AwaitWaitersSeesWaitsAtTheCurrentTime) {
    FakeClock clock;
    Mutex mutex;
    CondVar wake;
    bool done = false;
    std::thread waiter([&] {
        MutexLock lock(mutex);
        clock.wait_for(lock, wake, std::chrono::seconds(10), [&] { return done; });
    });
    ASSERT_TRUE(clock.await_waiters(1));
    clock.advance(std::chrono::seconds(9));
    ASSERT_TRUE(clock.await_waiters(1));
    EXPECT_FALSE(clock.await_waiters(2, Millis(20)));
    {
        MutexLock lock(mutex);
        done = true;
        wake.notify_all();
    }
    waiter.join();
    EXPECT_EQ(clock.waiters(), 0);
}

}  // namespace
}  // namespace narad
