// PeriodicTask: a named background loop that runs a function every `interval` of a Clock on its
// own thread until stopped: the interval is waited for on that clock, so a test with a FakeClock
// decides when each pass runs. stop() wakes it at once (no waiting out the interval) and joins it;
// run_now() runs an extra pass immediately. Thread-safe.
#pragma once

#include <functional>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"

namespace narad {

class PeriodicTask {
  public:
    PeriodicTask(std::string name, Clock& clock, Millis interval, std::function<void()> pass);
    ~PeriodicTask();  // stops
    PeriodicTask(const PeriodicTask&) = delete;
    PeriodicTask& operator=(const PeriodicTask&) = delete;

    void start();
    void stop();
    void run_now();

  private:
    void loop();

    std::string name_;
    Clock& clock_;
    Millis interval_;
    std::function<void()> pass_;
    Mutex mutex_;
    CondVar wake_;
    bool stopping_ GUARDED_BY(mutex_) = false;
    bool run_early_ GUARDED_BY(mutex_) = false;
    std::thread thread_;
};

}  // namespace narad
