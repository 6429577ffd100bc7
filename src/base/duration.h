// Durations written as Go writes them ("1m30s", "500ms", "1.5h"): Narad's config file, environment,
// the consume `wait` parameter and the CLI's flags all use this form. Parsing follows Go's
// time.ParseDuration (ns, us, µs, ms, s, m, h, fractions, a sign, a bare "0"), optionally with a
// `d` unit (24 h) that Go lacks; formatting and rounding follow Go's Duration.String and
// Duration.Round. Pure functions, any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace narad {

enum class DayUnit { rejected, accepted };

inline constexpr int64_t kNanosPerMilli = 1'000'000;
inline constexpr int64_t kNanosPerSecond = 1'000'000'000;

// Parses a duration into nanoseconds. Errors carry Go's texts: `time: invalid duration "x"`,
// `time: missing unit in duration "5"`, `time: unknown unit "w" in duration "1w"`.
Result<int64_t> parse_duration_ns(std::string_view text, DayUnit days = DayUnit::rejected);

inline Result<std::chrono::nanoseconds> parse_duration(std::string_view text,
                                                       DayUnit days = DayUnit::rejected) {
    auto parsed = parse_duration_ns(text, days);
    if (!parsed.is_ok()) return parsed.status();
    return std::chrono::nanoseconds(*parsed);
}

// Go's Duration.String: "0s", "500ms", "1m30s", "168h0m0s", "1.5s".
std::string format_duration(int64_t ns);
inline std::string format_duration(std::chrono::nanoseconds duration) {
    return format_duration(duration.count());
}

// Go's Duration.Round: rounds halfway values away from zero; `multiple` <= 0 returns `ns`.
int64_t round_duration(int64_t ns, int64_t multiple);

// Go's time-package quoting used inside duration errors: printable ASCII verbatim (with `"` and
// `\` escaped), anything else as \xNN bytes.
std::string time_quote(std::string_view text);

}  // namespace narad
