#include "base/clock.h"

namespace narad {

void Clock::sleep_until(MonoTime deadline) const {
    std::mutex mutex;
    std::condition_variable never;
    std::unique_lock lock(mutex);
    wait_until(lock, never, deadline, [] { return false; });
}

SystemClock& SystemClock::instance() {
    static SystemClock clock;
    return clock;
}

bool FakeClock::wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& wake,
                           MonoTime deadline, const std::function<bool()>& done) const {
    ++waiters_;
    while (!done() && now() < deadline) {
        wake.wait_for(lock, std::chrono::milliseconds(1));
    }
    --waiters_;
    return done();
}

}  // namespace narad
