// Scheduler: runs a function after a delay, on a background thread, without the caller knowing
// which event loop provides it (the HTTP server's, in production). Long-polls use it for their
// deadlines. Thread-safe.
#pragma once

#include <functional>
#include <memory>

#include "base/clock.h"

namespace narad {

class ScheduledTask {
  public:
    virtual ~ScheduledTask() = default;
    // Prevents the run if it has not started; safe to call more than once and after the run.
    virtual void cancel() = 0;
};

class Scheduler {
  public:
    virtual ~Scheduler() = default;
    virtual std::shared_ptr<ScheduledTask> after(Millis delay, std::function<void()> fn) = 0;
    // Runs fn soon on one of the scheduler's threads.
    virtual void post(std::function<void()> fn) = 0;
};

}  // namespace narad
