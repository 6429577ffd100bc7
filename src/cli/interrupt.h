// Ctrl-C for the long-running reading commands (sub, peek): while an InterruptWatcher lives,
// SIGINT and SIGTERM are taken by a dedicated thread (sigwait) instead of killing the process. On
// a signal it runs `on_signal` (which prints the final count under the output mutex, so no
// message line can follow it) and ends the process with status 0, as the Go CLI's cancelled
// context does — a blocked long-poll cannot be cut short any other way. Create it on the main
// thread before any other thread exists, so every thread inherits the blocked mask.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <functional>
#include <thread>

namespace narad::cli {

class InterruptWatcher {
  public:
    explicit InterruptWatcher(std::function<void()> on_signal);
    ~InterruptWatcher();
    InterruptWatcher(const InterruptWatcher&) = delete;
    InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  private:
    void watch();

    std::function<void()> on_signal_;
    sigset_t previous_mask_;
    sigset_t watched_;
    std::thread thread_;
};

}  // namespace narad::cli
