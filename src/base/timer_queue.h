// TimerQueue: the timers a Clock owns (Clock::run_at), used only by base/clock.cc. Each timer is a
// function waiting for a deadline of that clock; they run one at a time on the queue's own thread
// (narad-timers, started by the first timer), in deadline order, and in the order they were added
// for equal deadlines. How the thread learns that a deadline has come depends on the clock: a real
// clock's thread sleeps until the earliest deadline (TimerWake::at_deadline); a fake clock's thread
// runs only what the clock has already reached, and the clock's advance() calls run_due()
// (TimerWake::on_advance). A function that throws is logged and the queue goes on.
//
// Thread-safe. The owning clock stops the queue in its own destructor, while its now() can still
// be called.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"

namespace narad {

class TimerQueue : public std::enable_shared_from_this<TimerQueue> {
  public:
    TimerQueue(const Clock& clock, Clock::TimerWake wake) : clock_(clock), wake_mode_(wake) {}
    ~TimerQueue() { stop(); }
    TimerQueue(const TimerQueue&) = delete;
    TimerQueue& operator=(const TimerQueue&) = delete;

    // Queues `fn` to run once the clock reaches `deadline` (at once if it has). After stop() the
    // function never runs.
    std::shared_ptr<Timer> add(MonoTime deadline, std::function<void()> fn);
    // The earliest deadline of a timer still waiting; nullopt when none is.
    std::optional<MonoTime> next_deadline() const;
    // Wakes the thread and returns once it has run every timer due at the clock's current time,
    // including those the runs themselves queued for it. Must not be called from a timer.
    void run_due();
    // Drops the timers not yet run and joins the thread (a timer running now finishes first).
    void stop();

  private:
    friend class Timer;
    // Takes a cancelled timer out of the queue, if it is still there.
    void drop(const Timer& timer);
    void run();
    // The first timer still waiting, dropping cancelled ones on the way.
    std::multimap<MonoTime, std::shared_ptr<Timer>>::iterator first_waiting() REQUIRES(mutex_);
    bool due_waiting() REQUIRES(mutex_);

    const Clock& clock_;
    const Clock::TimerWake wake_mode_;
    mutable Mutex mutex_;
    CondVar wake_;  // a timer was added, the clock moved, or stop()
    CondVar idle_;  // the thread finished a run, or found nothing due
    std::multimap<MonoTime, std::shared_ptr<Timer>> timers_ GUARDED_BY(mutex_);
    bool running_ GUARDED_BY(mutex_) = false;
    bool stopping_ GUARDED_BY(mutex_) = false;
    std::thread thread_ GUARDED_BY(mutex_);
};

}  // namespace narad
