#include "cli/sleeper.h"

namespace narad::cli {

bool RealSleeper::sleep_for(std::chrono::nanoseconds duration) {
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, duration, [&] { return stopped_.load(); });
    return !stopped_.load();
}

void RealSleeper::stop() {
    {
        std::lock_guard lock(mutex_);
        stopped_ = true;
    }
    wake_.notify_all();
}

}  // namespace narad::cli
