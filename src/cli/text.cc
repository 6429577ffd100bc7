#include "cli/text.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "base/utf8.h"

namespace narad::cli {
namespace {

constexpr char kLowerHex[] = "0123456789abcdef";
constexpr char kUpperHex[] = "0123456789ABCDEF";

bool is_print(int32_t rune) {
    // A close approximation of unicode.IsPrint for what a CLI sees: printable ASCII, and any valid
    // rune above U+00A0 other than the few format and separator code points below.
    if (rune < 0x80) return rune >= 0x20 && rune < 0x7F;
    if (rune < 0xA1) return false;
    if (rune == 0xAD) return false;
    if (rune >= 0x2000 && rune <= 0x200F) return rune < 0x200B;  // spaces print, ZW* do not
    if (rune >= 0x2028 && rune <= 0x202E) return false;
    if (rune >= 0x2060 && rune <= 0x206F) return false;
    if (rune == 0xFEFF || (rune >= 0xFFF9 && rune <= 0xFFFB)) return false;
    return true;
}

// Go's underscoreOK: underscores only between digits or after a base prefix.
bool underscores_ok(std::string_view s) {
    char saw = '^';
    size_t i = 0;
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
    bool hex = false;
    if (s.size() >= 2 && s[0] == '0') {
        const char p = char(s[1] | 0x20);
        if (p == 'b' || p == 'o' || p == 'x') {
            hex = p == 'x';
            i = 2;
            saw = '0';
        }
    }
    for (; i < s.size(); ++i) {
        const char c = s[i];
        const char lower = char(c | 0x20);
        if ((c >= '0' && c <= '9') || (hex && lower >= 'a' && lower <= 'f')) {
            saw = '0';
            continue;
        }
        if (c == '_') {
            if (saw != '0') return false;
            saw = '_';
            continue;
        }
        if (saw == '_') return false;
        saw = '!';
    }
    return saw != '_';
}

}  // namespace

Result<int64_t> parse_go_int(std::string_view text) {
    const std::string quoted = go_quote(text);
    const auto syntax = [&] {
        return Status(Errc::invalid_argument,
                      "strconv.ParseInt: parsing " + quoted + ": invalid syntax");
    };
    const auto range = [&] {
        return Status(Errc::invalid_argument,
                      "strconv.ParseInt: parsing " + quoted + ": value out of range");
    };
    if (text.empty()) return syntax();
    std::string_view s = text;
    bool negative = false;
    if (s[0] == '+' || s[0] == '-') {
        negative = s[0] == '-';
        s.remove_prefix(1);
    }
    int base = 10;
    bool any_underscore = false;
    if (!s.empty() && s[0] == '0') {
        if (s.size() >= 3 && (s[1] | 0x20) == 'b') {
            base = 2;
            s.remove_prefix(2);
        } else if (s.size() >= 3 && (s[1] | 0x20) == 'o') {
            base = 8;
            s.remove_prefix(2);
        } else if (s.size() >= 3 && (s[1] | 0x20) == 'x') {
            base = 16;
            s.remove_prefix(2);
        } else {
            base = 8;
            s.remove_prefix(1);
            if (s.empty()) return int64_t{0};
        }
    }
    if (s.empty()) return syntax();
    uint64_t value = 0;
    const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    bool overflow = false;
    for (char c : s) {
        if (c == '_') {
            any_underscore = true;
            continue;
        }
        int digit = 0;
        const char lower = char(c | 0x20);
        if (c >= '0' && c <= '9') {
            digit = c - '0';
        } else if (lower >= 'a' && lower <= 'z') {
            digit = lower - 'a' + 10;
        } else {
            return syntax();
        }
        if (digit >= base) return syntax();
        if (overflow) continue;
        if (value > (limit - uint64_t(digit)) / uint64_t(base)) {
            overflow = true;
            continue;
        }
        value = value * uint64_t(base) + uint64_t(digit);
    }
    if (any_underscore && !underscores_ok(text)) return syntax();
    if (overflow) return range();
    if (negative) {
        return value == (uint64_t{1} << 63) ? std::numeric_limits<int64_t>::min() : -int64_t(value);
    }
    return int64_t(value);
}

std::string flag_error(std::string_view value, std::string_view flag, std::string_view error) {
    return "invalid argument " + go_quote(value) + " for " + go_quote(flag) +
           " flag: " + std::string(error);
}

std::string go_quote(std::string_view text) {
    std::string out = "\"";
    for (size_t i = 0; i < text.size();) {
        auto [rune, length] = decode_rune(text, i);
        if (rune < 0) {
            const unsigned char c = static_cast<unsigned char>(text[i]);
            out += "\\x";
            out += kLowerHex[c >> 4];
            out += kLowerHex[c & 0xF];
            i += 1;
            continue;
        }
        if (rune == '"' || rune == '\\') {
            out += '\\';
            out += char(rune);
        } else if (is_print(rune)) {
            out.append(text.substr(i, length));
        } else {
            switch (rune) {
                case '\a':
                    out += "\\a";
                    break;
                case '\b':
                    out += "\\b";
                    break;
                case '\f':
                    out += "\\f";
                    break;
                case '\n':
                    out += "\\n";
                    break;
                case '\r':
                    out += "\\r";
                    break;
                case '\t':
                    out += "\\t";
                    break;
                case '\v':
                    out += "\\v";
                    break;
                default: {
                    char buffer[16];
                    if (rune < 0x80) {
                        std::snprintf(buffer, sizeof(buffer), "\\x%02x", unsigned(rune));
                    } else if (rune < 0x10000) {
                        std::snprintf(buffer, sizeof(buffer), "\\u%04x", unsigned(rune));
                    } else {
                        std::snprintf(buffer, sizeof(buffer), "\\U%08x", unsigned(rune));
                    }
                    out += buffer;
                }
            }
        }
        i += length;
    }
    out += '"';
    return out;
}

size_t rune_count(std::string_view text) {
    size_t count = 0;
    for (size_t i = 0; i < text.size(); ++count) i += decode_rune(text, i).length;
    return count;
}

std::string pad_right(std::string_view text, size_t width) {
    std::string out(text);
    const size_t runes = rune_count(text);
    if (runes < width) out.append(width - runes, ' ');
    return out;
}

std::string pad_left(std::string_view text, size_t width) {
    const size_t runes = rune_count(text);
    std::string out;
    if (runes < width) out.append(width - runes, ' ');
    out.append(text);
    return out;
}

std::string human_bytes(int64_t bytes, UnitGap gap) {
    constexpr int64_t kUnit = 1024;
    const char* space = gap == UnitGap::space ? " " : "";
    if (bytes < kUnit) return std::to_string(bytes) + space + "B";
    int64_t divisor = kUnit;
    int exponent = 0;
    for (int64_t m = bytes / kUnit; m >= kUnit; m /= kUnit) {
        divisor *= kUnit;
        ++exponent;
    }
    return format_float1(double(bytes) / double(divisor)) + space + "KMGTPE"[exponent] + "iB";
}

namespace {
std::string format_fixed(double value, int precision) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
    char buffer[512];
    std::snprintf(buffer, sizeof(buffer), "%.*f", precision, value);
    return buffer;
}
}  // namespace

std::string format_float0(double value) { return format_fixed(value, 0); }
std::string format_float1(double value) { return format_fixed(value, 1); }

std::string hex_encode(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        out += kLowerHex[c >> 4];
        out += kLowerHex[c & 0xF];
    }
    return out;
}

namespace {
bool unreserved(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '~';
}

void append_escape(std::string& out, unsigned char c) {
    out += '%';
    out += kUpperHex[c >> 4];
    out += kUpperHex[c & 0xF];
}
}  // namespace

std::string query_escape(std::string_view text) {
    std::string out;
    for (unsigned char c : text) {
        if (unreserved(c)) {
            out += char(c);
        } else if (c == ' ') {
            out += '+';
        } else {
            append_escape(out, c);
        }
    }
    return out;
}

std::string path_escape(std::string_view text) {
    std::string out;
    for (unsigned char c : text) {
        // Go's encodePathSegment leaves these sub-delimiters alone.
        const bool keep = c == '$' || c == '&' || c == '+' || c == ',' || c == ':' || c == ';' ||
                          c == '=' || c == '@';
        if (unreserved(c) || keep) {
            out += char(c);
        } else {
            append_escape(out, c);
        }
    }
    return out;
}

}  // namespace narad::cli
