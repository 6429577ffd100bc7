// Named failpoints: places in the code where a test can make Narad crash, fail, stall or run a hook
// at exactly one protocol step (RocksDB's TEST_SYNC_POINT). Compiled in only when NARAD_FAILPOINTS
// is defined (test builds); in release builds the macros are empty.
//
// Activation: failpoint::configure("name=action;name2=action2") or the NARAD_FAILPOINTS environment
// variable read at start-up. An action is one of
//   crash          raise SIGKILL (as kill -9: nothing is flushed)
//   error          the failpoint returns Errc::io_error (only NARAD_FAILPOINT_RETURN sites)
//   sleep(MS)      sleep MS milliseconds, then continue
// optionally followed by "@N": fire on the Nth hit only (1-based), or "%N": fire with probability
// 1/N. Unit tests may also install a hook (a function run at the failpoint). Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace narad::failpoint {

using Hook = std::function<Status()>;

// Parses and installs a spec as described above; an unparsable spec changes nothing.
Status configure(std::string_view spec);
// Installs a hook run at every hit of `name`; a failed Status it returns is what the site returns.
void set_hook(std::string_view name, Hook hook);
void clear(std::string_view name);
void clear_all();
// How many times `name` was reached while armed.
uint64_t hits(std::string_view name);

// Runs the failpoint `name`: nothing if it is not armed. Returns the injected error, if any.
Status evaluate(std::string_view name);

namespace detail {
// Read without the registry's lock on every evaluation: a stale read only delays arming by one
// hit, and relaxed atomic loads cost what a plain load does.
extern std::atomic<bool> any_armed;
}  // namespace detail

}  // namespace narad::failpoint

#ifdef NARAD_FAILPOINTS
#define NARAD_FAILPOINT(name)                                                        \
    do {                                                                             \
        if (::narad::failpoint::detail::any_armed.load(std::memory_order_relaxed)) { \
            (void)::narad::failpoint::evaluate(name);                                \
        }                                                                            \
    } while (0)
#define NARAD_FAILPOINT_RETURN(name)                                                 \
    do {                                                                             \
        if (::narad::failpoint::detail::any_armed.load(std::memory_order_relaxed)) { \
            ::narad::Status narad_fp_status_ = ::narad::failpoint::evaluate(name);   \
            if (!narad_fp_status_.is_ok()) return narad_fp_status_;                  \
        }                                                                            \
    } while (0)
#else
#define NARAD_FAILPOINT(name) \
    do {                      \
    } while (0)
#define NARAD_FAILPOINT_RETURN(name) \
    do {                             \
    } while (0)
#endif
