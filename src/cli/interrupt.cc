#include "cli/interrupt.h"

#include <unistd.h>

namespace narad::cli {

InterruptWatcher::InterruptWatcher(std::function<void()> on_signal)
    : on_signal_(std::move(on_signal)) {
    sigemptyset(&watched_);
    sigaddset(&watched_, SIGINT);
    sigaddset(&watched_, SIGTERM);
    sigaddset(&watched_, SIGUSR2);  // our own wake-up, sent by the destructor
    pthread_sigmask(SIG_BLOCK, &watched_, &previous_mask_);
    thread_ = std::thread([this] { watch(); });
}

InterruptWatcher::~InterruptWatcher() {
    pthread_kill(thread_.native_handle(), SIGUSR2);
    thread_.join();
    pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

void InterruptWatcher::watch() {
    int signal_number = 0;
    while (sigwait(&watched_, &signal_number) == 0) {
        if (signal_number == SIGUSR2) return;
        if (on_signal_) on_signal_();
        _exit(0);
    }
}

}  // namespace narad::cli
