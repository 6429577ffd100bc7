// Waiting that can be cut short: commands that pause (ack backoff, pub --rate, peek polling) wait
// through a Sleeper so tests pass a fake that records the pauses instead of sleeping, and Ctrl-C
// can end a wait at once. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>

#include "base/mutex.h"

namespace narad::cli {

class Sleeper {
  public:
    virtual ~Sleeper() = default;
    // Waits for `duration`; false if the wait was interrupted (the command should stop).
    virtual bool sleep_for(std::chrono::nanoseconds duration) = 0;
    // True once a stop was requested.
    virtual bool stopped() const = 0;
};

// The real one; `stop()` (from any thread) wakes every waiter and makes later waits fail.
class RealSleeper final : public Sleeper {
  public:
    bool sleep_for(std::chrono::nanoseconds duration) override;
    bool stopped() const override { return stopped_.load(); }
    void stop();

  private:
    Mutex mutex_;
    CondVar wake_;  // signalled by stop()
    std::atomic<bool> stopped_{false};
};

}  // namespace narad::cli
