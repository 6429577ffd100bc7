#include "base/thread_pool.h"

#include <gtest/gtest.h>
#include <pthread.h>

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

// Rule: a pool's threads carry its name, cut to the 15 characters a thread name holds, so
// `top -H` and /proc/<pid>/task/*/comm tell one pool's CPU from another's.
TEST(ThreadPoolTest, ThreadsCarryThePoolsName) {
    ThreadPool pool("narad-a-long-pool-name", 1);
    std::promise<std::string> seen;
    ASSERT_EQ(pool.post([&seen] {
        char name[16] = {};
        pthread_getname_np(pthread_self(), name, sizeof name);
        seen.set_value(name);
    }),
              ThreadPool::Posted::queued);
    auto name = seen.get_future();
    ASSERT_EQ(name.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_EQ(name.get(), "narad-a-long-po");
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

// Rule: a refused post becomes an unavailable error saying why (the caller's busy text for a full
// queue, the shutting-down text for a stopping pool); a queued one is no error.
TEST(ThreadPoolTest, PostedStatusSaysWhyATaskWasRefused) {
    EXPECT_TRUE(posted_status(ThreadPool::Posted::queued, "busy").is_ok());
    Status full = posted_status(ThreadPool::Posted::full, "readers busy, retry");
    EXPECT_EQ(full.code(), Errc::unavailable);
    EXPECT_EQ(full.message(), "readers busy, retry");
    Status stopping = posted_status(ThreadPool::Posted::stopping, "readers busy, retry");
    EXPECT_EQ(stopping.code(), Errc::unavailable);
    EXPECT_EQ(stopping.message(), kShuttingDownText);
}

}  // namespace
}  // namespace narad
