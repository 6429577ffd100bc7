// Test support for the JSON decoders' fuzz tests (api/*_fuzz_test.cc, meta/*_fuzz_test.cc):
// hostile variants of a valid body, built from a seeded generator so every run feeds the same
// inputs. Mutations aim at what breaks decoders: bytes flipped or cut, values swapped for numbers
// that overflow or do not fit the field, strings of invalid UTF-8 or lone surrogates, duplicate
// keys, trailing values, and nesting far past any depth limit. Header-only, test code only.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace narad::json_fuzz {

using Rng = std::mt19937_64;

inline size_t pick(Rng& rng, size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); }

inline std::string random_bytes(Rng& rng, size_t size) {
    std::string bytes(size, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    return bytes;
}

// Whether nested() closes the containers it opens.
enum class Nesting { left_open, closed };

// `levels` containers opened, then closed or left open as `nesting` says.
inline std::string nested(size_t levels, Nesting nesting, char open = '[') {
    std::string out;
    if (open == '{') {
        out.reserve(levels * 6);
        for (size_t i = 0; i < levels; ++i) out += "{\"a\":";
        out += "1";
        if (nesting == Nesting::closed) out += std::string(levels, '}');
        return out;
    }
    out = std::string(levels, '[');
    if (nesting == Nesting::closed) out += std::string(levels, ']');
    return out;
}

// Values that a field may hold and its decoder must refuse or read exactly.
inline const std::vector<std::string>& nasty_values() {
    static const std::vector<std::string> kValues = {
        "1e400",  // overflows a double
        "-1e400",
        "1E+999999999999",
        "0.1e-400",              // underflows
        "18446744073709551615",  // UINT64_MAX
        "18446744073709551616",  // UINT64_MAX + 1
        "9223372036854775807",   // INT64_MAX
        "9223372036854775808",   // INT64_MAX + 1
        "-9223372036854775808",  // INT64_MIN
        "-9223372036854775809",  // INT64_MIN - 1
        "4294967296",            // UINT32_MAX + 1
        "1" + std::string(400, '0'),
        "-1",
        "-0",
        "1.5",
        "1e2",
        "0",
        "\"\\ud800\"",  // a lone surrogate
        "\"\\udc00\\ud800\"",
        "\"\xff\xfe\"",          // invalid UTF-8
        "\"\xc0\x80\"",          // overlong NUL
        "\"\xed\xa0\x80\"",      // an encoded surrogate
        "\"\xf4\x90\x80\x80\"",  // past U+10FFFF
        "\"\\u0000\"",
        "\"\"",
        "\"1\"",
        "\"true\"",
        "null",
        "true",
        "false",
        "[]",
        "{}",
        "[null]",
        "{\"\":null}",
        "[[[[[[[[[[]]]]]]]]]]",
    };
    return kValues;
}

// One past the end of the value-looking token that starts at text[pos]: up to the next ',', '}'
// or ']' outside a string (an approximation: nested values are cut, which is fine for a fuzzer).
inline size_t token_end(std::string_view text, size_t pos) {
    bool in_string = false;
    for (size_t i = pos; i < text.size(); ++i) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') {
                ++i;
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == ',' || c == '}' || c == ']') {
            return i;
        }
    }
    return text.size();
}

// One to four edits of `data`. `keys` are the field names the decoder knows, used for duplicate
// and misplaced keys.
inline std::string mutate(std::string data, Rng& rng, const std::vector<std::string>& keys) {
    static constexpr std::string_view kTokens[] = {"{", "}",  "[",    "]", ",", ":", "\"", "\\",
                                                   " ", "\n", "null", "-", "e", ".", "0",  "\\u"};
    static constexpr std::string_view kBadUtf8[] = {
        "\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\xc0\xaf", std::string_view("\0", 1)};
    const int edits = 1 + static_cast<int>(pick(rng, 4));
    for (int e = 0; e < edits; ++e) {
        if (data.empty()) data = "{}";
        size_t at = pick(rng, data.size());
        switch (pick(rng, 10)) {
            case 0:  // flip a bit
                data[at] = static_cast<char>(data[at] ^ (1 << pick(rng, 8)));
                break;
            case 1:  // a JSON token where it does not belong
                data.insert(at, kTokens[pick(rng, std::size(kTokens))]);
                break;
            case 2:  // drop a stretch
                data.erase(at, 1 + pick(rng, 8));
                break;
            case 3:  // repeat a stretch (a member or element twice, or half of one)
                data.insert(at, data.substr(pick(rng, data.size()), 1 + pick(rng, 40)));
                break;
            case 4:  // cut the tail
                data.resize(at);
                break;
            case 5:
            case 6: {  // a value swapped for a nasty one
                size_t colon = data.find_first_of(":[,", at);
                if (colon == std::string::npos) colon = data.find_first_of(":[,");
                if (colon == std::string::npos) break;
                size_t end = token_end(data, colon + 1);
                const auto& values = nasty_values();
                data.replace(colon + 1, end - colon - 1, values[pick(rng, values.size())]);
                break;
            }
            case 7: {  // invalid UTF-8 inside (or outside) a string
                size_t quote = data.find('"', at);
                size_t where = quote == std::string::npos ? at : quote + 1;
                data.insert(where, kBadUtf8[pick(rng, std::size(kBadUtf8))]);
                break;
            }
            case 8: {  // a duplicate or misplaced key at the start of some object
                size_t brace = data.find('{', at);
                if (brace == std::string::npos) brace = data.find('{');
                if (brace == std::string::npos || keys.empty()) break;
                const auto& values = nasty_values();
                std::string member =
                    "\"" + keys[pick(rng, keys.size())] + "\":" + values[pick(rng, values.size())];
                bool empty = brace + 1 < data.size() && data[brace + 1] == '}';
                data.insert(brace + 1, empty ? member : member + ",");
                break;
            }
            default: {  // a trailing value, or trailing garbage
                static constexpr std::string_view kTrailers[] = {" {}", "[]", " 1",  "x",    "\n\n",
                                                                 "}",   "]",  ",{}", "\"s\""};
                data += kTrailers[pick(rng, std::size(kTrailers))];
                break;
            }
        }
    }
    return data;
}

// A hostile body derived from `valid`: mostly mutations of it, sometimes pure noise, nesting far
// past any limit (100,000 levels, closed or not, alone or as a field's value), or `valid` cut.
inline std::string hostile(const std::string& valid, Rng& rng,
                           const std::vector<std::string>& keys) {
    switch (pick(rng, 12)) {
        case 0:
            return random_bytes(rng, pick(rng, 300));
        case 1: {  // noise made of JSON's own characters
            static constexpr std::string_view kAlphabet = "{}[]\",:0123456789.eE+-tfnrul \\";
            std::string out(pick(rng, 200), ' ');
            for (char& c : out) c = kAlphabet[pick(rng, kAlphabet.size())];
            return out;
        }
        case 2: {  // deep nesting, alone or as the value of a field
            // 100,000 levels only now and then: a DOM parser pays ~10 ms for the levels it
            // builds, and each test also feeds that depth on purpose.
            size_t levels = pick(rng, 32) == 0 ? 100'000 : 257 + pick(rng, 5'000);
            std::string deep =
                nested(levels, pick(rng, 2) == 0 ? Nesting::closed : Nesting::left_open,
                       pick(rng, 3) == 0 ? '{' : '[');
            if (pick(rng, 2) == 0 || keys.empty()) return deep;
            return "{\"" + keys[pick(rng, keys.size())] + "\":" + deep + "}";
        }
        case 3:
            return valid.substr(0, pick(rng, valid.size() + 1));
        default:
            return mutate(valid, rng, keys);
    }
}

// The start of `input`, escaped, for a failure message.
inline std::string printable(std::string_view input, size_t max = 300) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < input.size() && i < max; ++i) {
        unsigned char c = static_cast<unsigned char>(input[i]);
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += static_cast<char>(c);
        } else {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 0xf];
        }
    }
    if (input.size() > max) out += "... (" + std::to_string(input.size()) + " bytes)";
    return out;
}

}  // namespace narad::json_fuzz
