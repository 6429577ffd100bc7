#include "base/duration.h"

#include <array>
#include <limits>

namespace narad {
namespace {

constexpr uint64_t kMaxMagnitude = uint64_t{1} << 63;  // |min int64|

struct Unit {
    std::string_view name;
    uint64_t nanos;
};

// Go's unitMap plus `d` (accepted only with DayUnit::accepted: the CLI's `--retention 7d`).
constexpr std::array<Unit, 9> kUnits{{
    {"ns", 1},
    {"us", 1'000},
    {"\xc2\xb5s", 1'000},  // U+00B5 micro sign
    {"\xce\xbcs", 1'000},  // U+03BC Greek mu
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
    {"d", 86'400'000'000'000},
}};

Status invalid(std::string_view original) {
    return Status(Errc::invalid_argument, "time: invalid duration " + time_quote(original));
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Consumes leading digits; false on overflow past 2^63.
bool leading_int(std::string_view& s, uint64_t& value) {
    size_t i = 0;
    uint64_t x = 0;
    for (; i < s.size() && is_digit(s[i]); ++i) {
        if (x > kMaxMagnitude / 10) return false;
        x = x * 10 + uint64_t(s[i] - '0');
        if (x > kMaxMagnitude) return false;
    }
    s.remove_prefix(i);
    value = x;
    return true;
}

// Consumes leading fraction digits, keeping as many as fit (the rest only lose precision).
void leading_fraction(std::string_view& s, uint64_t& value, double& scale) {
    size_t i = 0;
    uint64_t x = 0;
    scale = 1;
    bool overflow = false;
    for (; i < s.size() && is_digit(s[i]); ++i) {
        if (overflow) continue;
        if (x > (kMaxMagnitude - 1) / 10) {
            overflow = true;
            continue;
        }
        uint64_t y = x * 10 + uint64_t(s[i] - '0');
        if (y > kMaxMagnitude) {
            overflow = true;
            continue;
        }
        x = y;
        scale *= 10;
    }
    s.remove_prefix(i);
    value = x;
}

// Writes the fraction v / 10^precision (".125") before `end`, without trailing zeros.
size_t format_fraction(char* buffer, size_t end, uint64_t& v, int precision) {
    bool print = false;
    for (int i = 0; i < precision; ++i) {
        uint64_t digit = v % 10;
        print = print || digit != 0;
        if (print) buffer[--end] = char('0' + digit);
        v /= 10;
    }
    if (print) buffer[--end] = '.';
    return end;
}

size_t format_int(char* buffer, size_t end, uint64_t v) {
    if (v == 0) {
        buffer[--end] = '0';
        return end;
    }
    while (v > 0) {
        buffer[--end] = char('0' + v % 10);
        v /= 10;
    }
    return end;
}

}  // namespace

std::string time_quote(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out = "\"";
    for (unsigned char c : text) {
        if (c >= 0x80 || c < ' ') {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 0xF];
        } else {
            if (c == '"' || c == '\\') out += '\\';
            out += char(c);
        }
    }
    out += '"';
    return out;
}

Result<int64_t> parse_duration_ns(std::string_view text, DayUnit days) {
    const std::string_view original = text;
    std::string_view s = text;
    bool negative = false;
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
        negative = s[0] == '-';
        s.remove_prefix(1);
    }
    if (s == "0") return int64_t{0};
    if (s.empty()) return invalid(original);
    uint64_t total = 0;
    while (!s.empty()) {
        if (!(s[0] == '.' || is_digit(s[0]))) return invalid(original);
        const size_t before_int = s.size();
        uint64_t value = 0;
        if (!leading_int(s, value)) return invalid(original);
        const bool had_int = before_int != s.size();
        uint64_t fraction = 0;
        double scale = 1;
        bool had_fraction = false;
        if (!s.empty() && s[0] == '.') {
            s.remove_prefix(1);
            const size_t before_fraction = s.size();
            leading_fraction(s, fraction, scale);
            had_fraction = before_fraction != s.size();
        }
        if (!had_int && !had_fraction) return invalid(original);
        size_t i = 0;
        while (i < s.size() && s[i] != '.' && !is_digit(s[i])) ++i;
        if (i == 0) {
            return Status(Errc::invalid_argument,
                          "time: missing unit in duration " + time_quote(original));
        }
        const std::string_view unit_name = s.substr(0, i);
        s.remove_prefix(i);
        const Unit* unit = nullptr;
        for (const Unit& u : kUnits) {
            if (u.name == unit_name && (u.name != "d" || days == DayUnit::accepted)) unit = &u;
        }
        if (unit == nullptr) {
            return Status(Errc::invalid_argument, "time: unknown unit " + time_quote(unit_name) +
                                                      " in duration " + time_quote(original));
        }
        if (value > kMaxMagnitude / unit->nanos) return invalid(original);
        value *= unit->nanos;
        if (fraction > 0) {
            // Go computes the fraction in float64, nanosecond-accurate up to hours.
            value += uint64_t(double(fraction) * (double(unit->nanos) / scale));
            if (value > kMaxMagnitude) return invalid(original);
        }
        total += value;
        if (total > kMaxMagnitude) return invalid(original);
    }
    if (negative) {
        return total == kMaxMagnitude ? std::numeric_limits<int64_t>::min() : -int64_t(total);
    }
    if (total > kMaxMagnitude - 1) return invalid(original);
    return int64_t(total);
}

std::string format_duration(int64_t ns) {
    char buffer[40];
    size_t w = sizeof(buffer);
    const bool negative = ns < 0;
    uint64_t u = negative ? uint64_t(0) - uint64_t(ns) : uint64_t(ns);
    if (u < uint64_t(kNanosPerSecond)) {
        int precision = 0;
        buffer[--w] = 's';
        if (u == 0) return "0s";
        if (u < 1'000) {
            buffer[--w] = 'n';
        } else if (u < 1'000'000) {
            precision = 3;
            buffer[--w] = '\xb5';  // "µ" is 0xC2 0xB5
            buffer[--w] = '\xc2';
        } else {
            precision = 6;
            buffer[--w] = 'm';
        }
        w = format_fraction(buffer, w, u, precision);
        w = format_int(buffer, w, u);
    } else {
        buffer[--w] = 's';
        w = format_fraction(buffer, w, u, 9);
        w = format_int(buffer, w, u % 60);
        u /= 60;
        if (u > 0) {
            buffer[--w] = 'm';
            w = format_int(buffer, w, u % 60);
            u /= 60;
            if (u > 0) {
                buffer[--w] = 'h';
                w = format_int(buffer, w, u);
            }
        }
    }
    if (negative) buffer[--w] = '-';
    return std::string(buffer + w, sizeof(buffer) - w);
}

int64_t round_duration(int64_t ns, int64_t multiple) {
    if (multiple <= 0) return ns;
    auto less_than_half = [](int64_t x, int64_t y) {
        return uint64_t(x) + uint64_t(x) < uint64_t(y);
    };
    int64_t r = ns % multiple;
    if (ns < 0) {
        r = -r;
        if (less_than_half(r, multiple)) return ns + r;
        if (int64_t rounded = int64_t(uint64_t(ns) - uint64_t(multiple) + uint64_t(r));
            rounded < ns) {
            return rounded;
        }
        return std::numeric_limits<int64_t>::min();
    }
    if (less_than_half(r, multiple)) return ns - r;
    if (int64_t rounded = int64_t(uint64_t(ns) + uint64_t(multiple) - uint64_t(r)); rounded > ns) {
        return rounded;
    }
    return std::numeric_limits<int64_t>::max();
}

}  // namespace narad
