#include "base/utf8.h"

namespace narad {

DecodedRune decode_rune(std::string_view text, size_t i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80) return {lead, 1};
    size_t length = 0;
    int32_t rune = 0;
    int32_t smallest = 0;  // below it the form is overlong
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
        rune = lead & 0x1F;
        smallest = 0x80;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        rune = lead & 0x0F;
        smallest = 0x800;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        rune = lead & 0x07;
        smallest = 0x10000;
    } else {
        return {};
    }
    if (text.size() - i < length) return {};
    for (size_t k = 1; k < length; ++k) {
        const unsigned char next = byte(i + k);
        if ((next & 0xC0) != 0x80) return {};
        rune = (rune << 6) | (next & 0x3F);
    }
    if (rune < smallest || rune > 0x10FFFF || (rune >= 0xD800 && rune <= 0xDFFF)) return {};
    return {rune, length};
}

bool is_valid_utf8(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
        // Fast path over ASCII.
        if (static_cast<unsigned char>(text[i]) < 0x80) {
            ++i;
            continue;
        }
        size_t length = utf8_sequence_length(text, i);
        if (length == 0) return false;
        i += length;
    }
    return true;
}

void append_utf8(std::string& out, uint32_t rune) {
    if (rune < 0x80) {
        out += char(rune);
    } else if (rune < 0x800) {
        out += char(0xC0 | (rune >> 6));
        out += char(0x80 | (rune & 0x3F));
    } else if (rune < 0x10000) {
        out += char(0xE0 | (rune >> 12));
        out += char(0x80 | ((rune >> 6) & 0x3F));
        out += char(0x80 | (rune & 0x3F));
    } else {
        out += char(0xF0 | (rune >> 18));
        out += char(0x80 | ((rune >> 12) & 0x3F));
        out += char(0x80 | ((rune >> 6) & 0x3F));
        out += char(0x80 | (rune & 0x3F));
    }
}

}  // namespace narad
