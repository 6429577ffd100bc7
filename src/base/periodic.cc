#include "base/periodic.h"

#include "base/mutex.h"
#include "base/thread_pool.h"

namespace narad {

PeriodicTask::PeriodicTask(std::string name, Clock& clock, Millis interval,
                           std::function<void()> pass)
    : name_(std::move(name)), clock_(clock), interval_(interval), pass_(std::move(pass)) {}

PeriodicTask::~PeriodicTask() { stop(); }

void PeriodicTask::start() {
    MutexLock lock(mutex_);
    if (thread_.joinable()) return;
    stopping_ = false;
    thread_ = named_thread(name_, [this] { loop(); });
}

void PeriodicTask::stop() {
    {
        MutexLock lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void PeriodicTask::run_now() {
    {
        MutexLock lock(mutex_);
        run_early_ = true;
    }
    wake_.notify_all();
}

void PeriodicTask::loop() {
    MutexLock lock(mutex_);
    while (!stopping_) {
        clock_.wait_for(lock, wake_, interval_,
                        [&]() REQUIRES(mutex_) { return stopping_ || run_early_; });
        if (stopping_) break;
        run_early_ = false;
        lock.unlock();
        pass_();
        lock.lock();
    }
}

}  // namespace narad
