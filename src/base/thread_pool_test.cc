#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <future>
#include <stdexcept>

namespace narad {
namespace {

// Rule: a task that throws is contained: the process stays up and the pool runs later tasks.
TEST(ThreadPoolTest, ThrowingTaskDoesNotStopThePool) {
    ThreadPool pool("test-pool", 1);
    ASSERT_EQ(pool.post([] { throw std::runtime_error("boom"); }), ThreadPool::Posted::queued);
    ASSERT_EQ(pool.post([] { throw 42; }), ThreadPool::Posted::queued);
    std::promise<int> ran;
    ASSERT_EQ(pool.post([&ran] { ran.set_value(7); }), ThreadPool::Posted::queued);
    auto result = ran.get_future();
    ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_EQ(result.get(), 7);
}

// Rule: the queue is bounded; post() refuses beyond it as full, and after stop() as stopping.
TEST(ThreadPoolTest, RefusesBeyondTheBoundAndAfterStop) {
    ThreadPool pool("test-pool", 1, 1);
    std::promise<void> release;
    std::shared_future<void> gate = release.get_future().share();
    std::promise<void> started;
    ASSERT_EQ(pool.post([gate, &started] {
        started.set_value();
        gate.wait();
    }),
              ThreadPool::Posted::queued);
    started.get_future().wait();
    EXPECT_EQ(pool.post([] {}), ThreadPool::Posted::queued);
    EXPECT_EQ(pool.post([] {}), ThreadPool::Posted::full);  // the bound
    release.set_value();
    pool.stop();
    EXPECT_EQ(pool.post([] {}), ThreadPool::Posted::stopping);
}

}  // namespace
}  // namespace narad
