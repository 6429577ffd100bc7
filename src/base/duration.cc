#include "base/duration.h"

#include <cstdint>
#include <limits>

namespace narad {
namespace {

Status invalid(std::string_view text) {
    return Status(Errc::invalid_argument, "time: invalid duration \"" + std::string(text) + "\"");
}

// Nanoseconds per unit, or 0 when the unit is unknown.
uint64_t unit_ns(std::string_view unit, DayUnit days) {
    if (unit == "ns") return 1;
    if (unit == "us" || unit == "µs" || unit == "μs") return 1'000;
    if (unit == "ms") return 1'000'000;
    if (unit == "s") return 1'000'000'000;
    if (unit == "m") return 60'000'000'000;
    if (unit == "h") return 3'600'000'000'000;
    if (unit == "d" && days == DayUnit::accepted) return 86'400'000'000'000;
    return 0;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<std::chrono::nanoseconds> parse_duration(std::string_view text, DayUnit days) {
    std::string_view s = text;
    bool negative = false;
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
        negative = s[0] == '-';
        s.remove_prefix(1);
    }
    if (s == "0") return std::chrono::nanoseconds(0);
    if (s.empty()) return invalid(text);
    constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    uint64_t total = 0;
    while (!s.empty()) {
        // The number: digits, optionally a fraction.
        uint64_t whole = 0;
        size_t i = 0;
        bool overflow = false;
        while (i < s.size() && is_digit(s[i])) {
            if (whole > (kMax - 9) / 10) overflow = true;
            whole = whole * 10 + static_cast<uint64_t>(s[i] - '0');
            ++i;
        }
        bool had_whole = i > 0;
        uint64_t fraction = 0;
        uint64_t scale = 1;
        bool had_fraction = false;
        if (i < s.size() && s[i] == '.') {
            ++i;
            size_t start = i;
            while (i < s.size() && is_digit(s[i])) {
                if (scale < 1'000'000'000'000'000'000ull) {
                    fraction = fraction * 10 + static_cast<uint64_t>(s[i] - '0');
                    scale *= 10;
                }
                ++i;
            }
            had_fraction = i > start;
        }
        if (!had_whole && !had_fraction) return invalid(text);
        if (overflow) return invalid(text);
        // The unit.
        size_t unit_start = i;
        while (i < s.size() && s[i] != '.' && !is_digit(s[i])) ++i;
        std::string_view unit = s.substr(unit_start, i - unit_start);
        if (unit.empty()) {
            return Status(Errc::invalid_argument,
                          "time: missing unit in duration \"" + std::string(text) + "\"");
        }
        uint64_t per = unit_ns(unit, days);
        if (per == 0) {
            return Status(Errc::invalid_argument, "time: unknown unit \"" + std::string(unit) +
                                                      "\" in duration \"" + std::string(text) +
                                                      "\"");
        }
        if (whole > kMax / per) return invalid(text);
        uint64_t value = whole * per;
        if (had_fraction) {
            long double part = static_cast<long double>(fraction) * per / scale;
            value += static_cast<uint64_t>(part);
        }
        if (value > kMax - total) return invalid(text);
        total += value;
        s.remove_prefix(i);
    }
    int64_t signed_total = static_cast<int64_t>(total);
    return std::chrono::nanoseconds(negative ? -signed_total : signed_total);
}

namespace {

// Writes v / 10^precision with the fraction's trailing zeros (and a bare dot) removed.
std::string fixed(uint64_t v, int precision) {
    std::string digits = std::to_string(v);
    if (precision == 0) return digits;
    while (static_cast<int>(digits.size()) <= precision) digits.insert(0, "0");
    std::string whole = digits.substr(0, digits.size() - precision);
    std::string fraction = digits.substr(digits.size() - precision);
    while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
    return fraction.empty() ? whole : whole + "." + fraction;
}

}  // namespace

std::string format_duration(std::chrono::nanoseconds duration) {
    int64_t ns = duration.count();
    if (ns == 0) return "0s";
    bool negative = ns < 0;
    uint64_t u = negative ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
    std::string out;
    if (u < 1'000'000'000) {
        // Below one second: the largest of ns, µs, ms that keeps a whole part.
        if (u < 1'000) {
            out = std::to_string(u) + "ns";
        } else if (u < 1'000'000) {
            out = fixed(u, 3) + "µs";
        } else {
            out = fixed(u, 6) + "ms";
        }
    } else {
        uint64_t seconds_ns = u % 60'000'000'000;
        uint64_t minutes_total = u / 60'000'000'000;
        out = fixed(seconds_ns, 9) + "s";
        if (minutes_total > 0) {
            uint64_t minutes = minutes_total % 60;
            uint64_t hours = minutes_total / 60;
            out = std::to_string(minutes) + "m" + out;
            if (hours > 0) out = std::to_string(hours) + "h" + out;
        }
    }
    return negative ? "-" + out : out;
}

}  // namespace narad
