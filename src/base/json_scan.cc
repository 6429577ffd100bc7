#include "base/json_scan.h"

#include <cstring>

#include "base/utf8.h"

namespace narad::json_scan {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Whether any of the eight bytes of `word` ends a plain run inside a string literal: a quote, a
// backslash or a control byte (below 0x20). Exact: the word-wide zero-byte test may misplace the
// marker bits above the first match, but it is never zero when a byte matches, nor set when none
// does.
bool stops_string_scan(uint64_t word) {
    constexpr uint64_t kOnes = 0x0101010101010101ull;
    constexpr uint64_t kHighs = 0x8080808080808080ull;
    auto zero_byte = [](uint64_t v) { return (v - kOnes) & ~v & kHighs; };
    const uint64_t quote = zero_byte(word ^ (kOnes * '"'));
    const uint64_t backslash = zero_byte(word ^ (kOnes * '\\'));
    const uint64_t control = (word - kOnes * 0x20) & ~word & kHighs;
    return (quote | backslash | control) != 0;
}

size_t skip_digits(std::string_view text, size_t pos) {
    while (pos < text.size() && is_digit(text[pos])) ++pos;
    return pos;
}

// One past the number starting at text[pos], or nullopt.
std::optional<size_t> scan_number(std::string_view text, size_t pos) {
    if (pos < text.size() && text[pos] == '-') ++pos;
    if (pos >= text.size()) return std::nullopt;
    if (text[pos] == '0') {
        ++pos;
    } else if (is_digit(text[pos])) {
        pos = skip_digits(text, pos);
    } else {
        return std::nullopt;
    }
    if (pos < text.size() && text[pos] == '.') {
        size_t digits = skip_digits(text, pos + 1);
        if (digits == pos + 1) return std::nullopt;
        pos = digits;
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
        ++pos;
        if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) ++pos;
        size_t digits = skip_digits(text, pos);
        if (digits == pos) return std::nullopt;
        pos = digits;
    }
    return pos;
}

// One past the string, number or literal starting at text[pos], or nullopt.
std::optional<size_t> scan_scalar(std::string_view text, size_t pos) {
    char c = text[pos];
    if (c == '"') return scan_string(text, pos);
    if (c == '-' || is_digit(c)) return scan_number(text, pos);
    for (std::string_view word : {"true", "false", "null"}) {
        if (text.substr(pos, word.size()) == word) return pos + word.size();
    }
    return std::nullopt;
}

uint32_t hex4(std::string_view text) {
    uint32_t value = 0;
    for (char c : text) {
        value <<= 4;
        if (c >= '0' && c <= '9') {
            value |= uint32_t(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            value |= uint32_t(c - 'a' + 10);
        } else {
            value |= uint32_t(c - 'A' + 10);
        }
    }
    return value;
}

// One past the string literal opening at text[pos] of text known to be valid JSON: the first
// quote after it that an even run of backslashes precedes.
size_t skip_valid_string(std::string_view text, size_t pos) {
    size_t from = pos + 1;
    for (;;) {
        const void* found = std::memchr(text.data() + from, '"', text.size() - from);
        if (found == nullptr) return text.size();  // not valid after all: the caller's bounds hold
        const size_t quote = static_cast<size_t>(static_cast<const char*>(found) - text.data());
        size_t run = quote;
        while (run > pos + 1 && text[run - 1] == '\\') --run;
        if ((quote - run) % 2 == 0) return quote + 1;
        from = quote + 1;
    }
}

// One past the value at text[pos] of text known to be valid JSON (scan_document passed it), found
// without checking the grammar again: brackets are counted, strings skipped to their closing
// quote.
size_t skip_valid_value(std::string_view text, size_t pos) {
    size_t depth = 0;
    while (pos < text.size()) {
        const char c = text[pos];
        if (c == '"') {
            pos = skip_valid_string(text, pos);
            if (depth == 0) return pos;
        } else if (c == '{' || c == '[') {
            ++depth;
            ++pos;
        } else if (c == '}' || c == ']') {
            ++pos;
            if (--depth == 0) return pos;
        } else if (depth == 0) {
            // A number or literal on its own ends where the next token or whitespace begins.
            while (pos < text.size() && !is_space(text[pos]) && text[pos] != ',' &&
                   text[pos] != '}' && text[pos] != ']') {
                ++pos;
            }
            return pos;
        } else {
            ++pos;
        }
    }
    return pos;
}

}  // namespace

size_t skip_space(std::string_view text, size_t pos) {
    while (pos < text.size() && is_space(text[pos])) ++pos;
    return pos;
}

std::optional<size_t> scan_string(std::string_view text, size_t pos) {
    if (pos >= text.size() || text[pos] != '"') return std::nullopt;
    ++pos;
    for (;;) {
        // Eight bytes at a time past the ordinary ones, which is most of any payload.
        while (pos + 8 <= text.size()) {
            uint64_t word;
            std::memcpy(&word, text.data() + pos, sizeof(word));
            if (stops_string_scan(word)) break;
            pos += 8;
        }
        if (pos >= text.size()) return std::nullopt;
        const unsigned char c = static_cast<unsigned char>(text[pos]);
        if (c == '"') return pos + 1;
        if (c < 0x20) return std::nullopt;
        if (c == '\\') {
            ++pos;
            if (pos >= text.size()) return std::nullopt;
            const char escape = text[pos];
            if (escape == 'u') {
                if (pos + 4 >= text.size()) return std::nullopt;
                for (size_t k = 1; k <= 4; ++k) {
                    if (!is_hex(text[pos + k])) return std::nullopt;
                }
                pos += 5;
                continue;
            }
            if (std::string_view("\"\\/bfnrt").find(escape) == std::string_view::npos) {
                return std::nullopt;
            }
        }
        ++pos;
    }
}

Scan scan_value(std::string_view text, size_t pos, uint32_t max_depth, Visitor* visitor) {
    // What the grammar allows next. The open containers are kept in `open` (one byte each, so
    // the memory is bounded by max_depth), never on the call stack.
    enum class Expect { value, value_or_close, key, key_or_close, colon, comma_or_close };
    Expect expect = Expect::value;
    std::string open;
    Scan scan;
    auto fail = [&](Outcome outcome) {
        scan.outcome = outcome;
        scan.end = pos;
        return scan;
    };
    for (;;) {
        pos = skip_space(text, pos);
        if (pos >= text.size()) return fail(Outcome::syntax_error);
        const char c = text[pos];
        bool value_done = false;
        switch (expect) {
            case Expect::value:
            case Expect::value_or_close:
            case Expect::key_or_close:
            case Expect::comma_or_close: {
                const bool closing =
                    (c == ']' &&
                     (expect == Expect::value_or_close ||
                      (expect == Expect::comma_or_close && !open.empty() && open.back() == '['))) ||
                    (c == '}' &&
                     (expect == Expect::key_or_close ||
                      (expect == Expect::comma_or_close && !open.empty() && open.back() == '{')));
                if (closing) {
                    if (visitor != nullptr) {
                        visitor->close(c, static_cast<uint32_t>(open.size()),
                                       expect != Expect::comma_or_close);
                    }
                    open.pop_back();
                    ++pos;
                    value_done = true;
                    break;
                }
                if (expect == Expect::comma_or_close) {
                    if (c != ',') return fail(Outcome::syntax_error);
                    if (visitor != nullptr) visitor->comma(static_cast<uint32_t>(open.size()));
                    expect = open.back() == '{' ? Expect::key : Expect::value;
                    ++pos;
                    break;
                }
                if (expect == Expect::key_or_close) {
                    expect = Expect::key;
                    continue;  // the same byte, read as a key
                }
                if (c == '{' || c == '[') {
                    if (open.size() + 1 > max_depth) return fail(Outcome::too_deep);
                    open.push_back(c);
                    scan.depth = std::max(scan.depth, static_cast<uint32_t>(open.size()));
                    if (visitor != nullptr) visitor->open(c, static_cast<uint32_t>(open.size()));
                    expect = c == '{' ? Expect::key_or_close : Expect::value_or_close;
                    ++pos;
                    break;
                }
                auto end = scan_scalar(text, pos);
                if (!end) return fail(Outcome::syntax_error);
                if (visitor != nullptr) {
                    visitor->scalar(text.substr(pos, *end - pos),
                                    static_cast<uint32_t>(open.size()));
                }
                pos = *end;
                value_done = true;
                break;
            }
            case Expect::key: {
                auto end = scan_string(text, pos);
                if (!end) return fail(Outcome::syntax_error);
                if (visitor != nullptr) {
                    visitor->scalar(text.substr(pos, *end - pos),
                                    static_cast<uint32_t>(open.size()));
                }
                pos = *end;
                expect = Expect::colon;
                break;
            }
            case Expect::colon:
                if (c != ':') return fail(Outcome::syntax_error);
                if (visitor != nullptr) visitor->colon();
                ++pos;
                expect = Expect::value;
                break;
        }
        if (value_done) {
            if (open.empty()) {
                scan.end = pos;
                return scan;
            }
            expect = Expect::comma_or_close;
        }
    }
}

Scan scan_document(std::string_view text, uint32_t max_depth) {
    Scan scan = scan_value(text, 0, max_depth);
    if (scan.outcome != Outcome::ok) return scan;
    size_t end = skip_space(text, scan.end);
    if (end != text.size()) {
        scan.outcome = Outcome::syntax_error;
        scan.end = end;
    }
    return scan;
}

std::optional<RawMembers> object_members(std::string_view text, uint32_t max_depth,
                                         Validity validity) {
    if (validity == Validity::unchecked && scan_document(text, max_depth).outcome != Outcome::ok) {
        return std::nullopt;
    }
    // The text is valid: only the boundaries of each member are left to find.
    size_t pos = skip_space(text, 0);
    if (text[pos] != '{') return std::nullopt;
    RawMembers members;
    pos = skip_space(text, pos + 1);
    while (text[pos] != '}') {
        const size_t key_end = *scan_string(text, pos);
        auto key = decode_string(text.substr(pos, key_end - pos));
        pos = skip_space(text, key_end) + 1;  // past ':'
        pos = skip_space(text, pos);
        const size_t value_end = skip_valid_value(text, pos);
        members.emplace_back(key.value_or(""), text.substr(pos, value_end - pos));
        pos = skip_space(text, value_end);
        if (text[pos] == ',') pos = skip_space(text, pos + 1);
    }
    return members;
}

std::optional<std::vector<std::string_view>> array_elements(std::string_view text,
                                                            uint32_t max_depth, size_t limit,
                                                            Validity validity) {
    if (validity == Validity::unchecked && scan_document(text, max_depth).outcome != Outcome::ok) {
        return std::nullopt;
    }
    size_t pos = skip_space(text, 0);
    if (text[pos] != '[') return std::nullopt;
    std::vector<std::string_view> elements;
    pos = skip_space(text, pos + 1);
    while (text[pos] != ']' && elements.size() <= limit) {
        const size_t end = skip_valid_value(text, pos);
        elements.push_back(text.substr(pos, end - pos));
        pos = skip_space(text, end);
        if (text[pos] == ',') pos = skip_space(text, pos + 1);
    }
    return elements;
}

std::optional<std::string_view> find_member(const RawMembers& members, std::string_view name) {
    std::optional<std::string_view> found;
    for (const auto& [key, raw] : members) {
        if (key == name) found = raw;
    }
    return found;
}

std::optional<std::string> decode_string(std::string_view raw) {
    auto end = scan_string(raw, 0);
    if (!end || *end != raw.size()) return std::nullopt;
    std::string out;
    const std::string_view body = raw.substr(1, raw.size() - 2);
    out.reserve(body.size());
    for (size_t i = 0; i < body.size();) {
        const unsigned char c = static_cast<unsigned char>(body[i]);
        if (c == '\\') {
            const char escape = body[i + 1];
            switch (escape) {
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'u': {
                    uint32_t rune = hex4(body.substr(i + 2, 4));
                    i += 6;
                    if (rune >= 0xD800 && rune < 0xDC00) {
                        // A high surrogate must be followed by an escaped low surrogate.
                        if (i + 6 <= body.size() && body[i] == '\\' && body[i + 1] == 'u') {
                            const uint32_t low = hex4(body.substr(i + 2, 4));
                            if (low >= 0xDC00 && low < 0xE000) {
                                append_utf8(out,
                                            0x10000 + ((rune - 0xD800) << 10) + (low - 0xDC00));
                                i += 6;
                                continue;
                            }
                        }
                        rune = 0xFFFD;
                    } else if (rune >= 0xDC00 && rune < 0xE000) {
                        rune = 0xFFFD;
                    }
                    append_utf8(out, rune);
                    continue;
                }
                default:
                    out += escape;  // " \ /
            }
            i += 2;
            continue;
        }
        if (c < 0x80) {
            out += char(c);
            ++i;
            continue;
        }
        const size_t length = utf8_sequence_length(body, i);
        if (length == 0) {
            out += "\xef\xbf\xbd";
            ++i;
        } else {
            out.append(body.substr(i, length));
            i += length;
        }
    }
    return out;
}

}  // namespace narad::json_scan
