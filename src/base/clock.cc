#include "base/clock.h"

#include <ctime>

#include "base/mutex.h"

namespace narad {

std::string format_rfc3339(int64_t unix_ms) {
    std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

void Clock::sleep_until(MonoTime deadline) const {
    Mutex mutex;
    CondVar never;
    MutexLock lock(mutex);
    wait_until(lock, never, deadline, [] { return false; });
}

SystemClock& SystemClock::instance() {
    static SystemClock clock;
    return clock;
}

bool FakeClock::wait_until(MutexLock& lock, CondVar& wake, MonoTime deadline,
                           const std::function<bool()>& done) const {
    ++waiters_;
    while (!done() && now() < deadline) {
        wake.wait_for(lock, std::chrono::milliseconds(1));
    }
    --waiters_;
    return done();
}

}  // namespace narad
