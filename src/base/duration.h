// Durations written as Go writes them ("1m30s", "500ms", "1.5h"): Narad's config file, environment,
// the consume `wait` parameter and the CLI all use this form. Pure functions.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"

namespace narad {

enum class DayUnit { rejected, accepted };

// Parses a Go duration: an optional sign, then one or more <decimal number><unit> with units ns,
// us, µs, ms, s, m, h; "0" alone is allowed. With DayUnit::accepted, "d" (24 h) is accepted as
// well. Errors carry Go's texts (`time: invalid duration "x"`, `time: missing unit in duration
// "5"`, `time: unknown unit "d" in duration "7d"`).
Result<std::chrono::nanoseconds> parse_duration(std::string_view text,
                                                DayUnit days = DayUnit::rejected);

// Formats as Go's Duration.String: "0s", "500ms", "1m30s", "168h0m0s", "1.5s".
std::string format_duration(std::chrono::nanoseconds duration);

}  // namespace narad
