#include "base/clock.h"

namespace narad {

SystemClock& SystemClock::instance() {
    static SystemClock clock;
    return clock;
}

}  // namespace narad
