#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <future>
#include <stdexcept>

namespace narad {
namespace {

// Rule: a task that throws is contained: the process stays up and the pool runs later tasks.
TEST(ThreadPoolTest, ThrowingTaskDoesNotStopThePool) {
    ThreadPool pool("test-pool", 1);
    ASSERT_TRUE(pool.post([] { throw std::runtime_error("boom"); }));
    ASSERT_TRUE(pool.post([] { throw 42; }));
    std::promise<int> ran;
    ASSERT_TRUE(pool.post([&ran] { ran.set_value(7); }));
    auto result = ran.get_future();
    ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_EQ(result.get(), 7);
}

// Rule: the queue is bounded; post() refuses beyond it, and after stop().
TEST(ThreadPoolTest, RefusesBeyondTheBoundAndAfterStop) {
    ThreadPool pool("test-pool", 1, 1);
    std::promise<void> release;
    std::shared_future<void> gate = release.get_future().share();
    std::promise<void> started;
    ASSERT_TRUE(pool.post([gate, &started] {
        started.set_value();
        gate.wait();
    }));
    started.get_future().wait();
    EXPECT_TRUE(pool.post([] {}));   // queued
    EXPECT_FALSE(pool.post([] {}));  // the bound
    release.set_value();
    pool.stop();
    EXPECT_FALSE(pool.post([] {}));
}

}  // namespace
}  // namespace narad
