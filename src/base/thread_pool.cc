#include "base/thread_pool.h"

#include <pthread.h>

#include "base/log.h"
#include "base/mutex.h"

namespace narad {

void run_contained(const std::function<void()>& fn, std::string_view what) {
    try {
        fn();
    } catch (const std::exception& e) {
        NARAD_LOG_ERROR("{} threw: {}", what, e.what());
    } catch (...) {
        NARAD_LOG_ERROR("{} threw a non-standard exception", what);
    }
}

void name_this_thread(std::string_view name) {
    pthread_setname_np(pthread_self(), std::string(name.substr(0, 15)).c_str());
}

ThreadPool::ThreadPool(std::string name, size_t threads, size_t max_queued)
    : name_(std::move(name)), max_queued_(max_queued) {
    for (size_t i = 0; i < threads; ++i) {
        threads_.push_back(named_thread(name_, [this] { run(); }));
    }
}

ThreadPool::~ThreadPool() { stop(); }

ThreadPool::Posted ThreadPool::post(std::function<void()> task) {
    {
        MutexLock lock(mutex_);
        if (stopping_) return Posted::stopping;
        if (tasks_.size() >= max_queued_) return Posted::full;
        tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
    return Posted::queued;
}

Status posted_status(ThreadPool::Posted posted, std::string_view busy_text) {
    switch (posted) {
        case ThreadPool::Posted::queued:
            return Status::ok();
        case ThreadPool::Posted::full:
            return Status(Errc::unavailable, std::string(busy_text));
        case ThreadPool::Posted::stopping:
            break;
    }
    return Status(Errc::unavailable, std::string(kShuttingDownText));
}

void ThreadPool::stop() {
    {
        MutexLock lock(mutex_);
        if (stopping_ && threads_.empty()) return;
        stopping_ = true;
    }
    wake_.notify_all();
    for (auto& thread : threads_) {
        if (thread.joinable()) thread.join();
    }
    threads_.clear();
}

void ThreadPool::run() {
    for (;;) {
        std::function<void()> task;
        {
            MutexLock lock(mutex_);
            wake_.wait(lock, [&]() REQUIRES(mutex_) { return stopping_ || !tasks_.empty(); });
            if (tasks_.empty()) return;  // stopping, and everything queued has run
            task = std::move(tasks_.front());
            tasks_.pop_front();
        }
        // A task that throws must not take the process down with std::terminate: it is
        // logged and the thread goes on (a task that answers a request catches its own, so its
        // request still gets an answer: api/respond.h answer_on_pool).
        run_contained(task, "a task of pool " + name_);
    }
}

}  // namespace narad
