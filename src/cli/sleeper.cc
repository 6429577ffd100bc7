#include "cli/sleeper.h"

#include "base/mutex.h"

namespace narad::cli {

bool RealSleeper::sleep_for(std::chrono::nanoseconds duration) {
    MutexLock lock(mutex_);
    wake_.wait_for(lock, duration, [&] { return stopped_.load(); });
    return !stopped_.load();
}

void RealSleeper::stop() {
    {
        MutexLock lock(mutex_);
        stopped_ = true;
    }
    wake_.notify_all();
}

}  // namespace narad::cli
