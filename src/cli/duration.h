// Durations the way the Go `narad` CLI reads and prints them: Go's time.ParseDuration grammar
// (ns, us, µs, ms, s, m, h, fractions, a sign, a bare "0") plus a `d` unit (24h) that Go lacks,
// and Go's Duration.String / Duration.Round for output ("168h0m0s", "1.5s", "850ms").
// Pure functions; callable from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace narad::cli {

// Parses a duration into nanoseconds. Errors carry Go's texts: `time: invalid duration "x"`,
// `time: missing unit in duration "5"`, `time: unknown unit "w" in duration "1w"`.
Result<int64_t> parse_duration_ns(std::string_view text);

// Go's Duration.String for a count of nanoseconds.
std::string format_duration(int64_t ns);

// Go's Duration.Round: rounds halfway values away from zero; `multiple` <= 0 returns `ns`.
int64_t round_duration(int64_t ns, int64_t multiple);

// Go's time-package quoting used inside duration errors: printable ASCII verbatim (with `"` and
// `\` escaped), anything else as \xNN bytes.
std::string time_quote(std::string_view text);

inline constexpr int64_t kNanosPerMilli = 1'000'000;
inline constexpr int64_t kNanosPerSecond = 1'000'000'000;

}  // namespace narad::cli
