// UTF-8, decoded and encoded as Go's unicode/utf8 does it: a valid sequence is the shortest form
// of a code point up to U+10FFFF that is not a surrogate; anything else is one invalid byte.
// The one decoder the API (payload checks, JSON escaping), the JSON scanner and the CLI (quoting,
// widths) share. Pure functions, any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace narad {

struct DecodedRune {
    static constexpr int32_t kInvalid = -1;
    int32_t rune = kInvalid;  // the code point, or kInvalid
    size_t length = 1;        // bytes taken: 1 for an invalid byte (Go's RuneError, 1)
};

// Decodes the sequence starting at text[i] (i < text.size()).
DecodedRune decode_rune(std::string_view text, size_t i);
// The length of the valid sequence starting at text[i] (1 for ASCII), or 0 if it is invalid there.
inline size_t utf8_sequence_length(std::string_view text, size_t i) {
    DecodedRune decoded = decode_rune(text, i);
    return decoded.rune == DecodedRune::kInvalid ? 0 : decoded.length;
}
bool is_valid_utf8(std::string_view text);
// Appends a code point (≤ U+10FFFF) in its shortest form.
void append_utf8(std::string& out, uint32_t rune);

}  // namespace narad
