// ThreadPool: a fixed set of threads running posted tasks in FIFO order, for work that blocks on
// disk or on other nodes and so must not run on the HTTP threads (metastore writes, topic purges).
// The queue is bounded: post() refuses work beyond `max_queued` rather than grow without limit.
// A task that throws is logged and the pool goes on.
// Thread-safe.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"

namespace narad {

// Runs `fn`; an exception it throws is logged as "<what> threw: ..." and goes no further (a pool
// task, a timer callback: nothing above them could handle it).
void run_contained(const std::function<void()>& fn, std::string_view what);

// Names the calling thread (its first 15 characters), as `top -H`, perf and /proc show it.
void name_this_thread(std::string_view name);

// A thread that names itself `name` (narad-<role>), then runs `body`: how every long-lived
// thread is started, so each one's CPU can be told apart.
template <typename Body>
std::thread named_thread(std::string name, Body body) {
    return std::thread([name = std::move(name), body = std::move(body)]() mutable {
        name_this_thread(name);
        body();
    });
}

// What a request refused because its pool is stopping is told: the node is going away, so the
// client should go to another node rather than retry here.
inline constexpr std::string_view kShuttingDownText =
    "node is shutting down; retry on another node";

class ThreadPool {
  public:
    ThreadPool(std::string name, size_t threads, size_t max_queued = 10'000);
    ~ThreadPool();  // stops: runs what is queued, then joins
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    // Whether post() queued a task, and if not, why: a full queue is worth retrying here soon, a
    // stopping pool (the node is shutting down) is not.
    enum class Posted { queued, full, stopping };
    // Queues a task, unless the pool is stopping or the queue is full.
    Posted post(std::function<void()> task);
    void stop();

  private:
    void run();

    std::string name_;
    size_t max_queued_;
    Mutex mutex_;
    CondVar wake_;
    std::deque<std::function<void()>> tasks_ GUARDED_BY(mutex_);
    bool stopping_ GUARDED_BY(mutex_) = false;
    std::vector<std::thread> threads_;
};

// What a caller answers when post() (or anything that reports a ThreadPool::Posted) did not take
// its task: unavailable with `busy_text` for a full queue (retry here soon), unavailable with
// kShuttingDownText for a stopping pool (go elsewhere); ok when the task was queued. The one
// mapping from a refused post to an error, for the API's 503s and the consume readers alike.
Status posted_status(ThreadPool::Posted posted, std::string_view busy_text);

}  // namespace narad
