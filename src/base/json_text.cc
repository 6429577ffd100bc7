#include "base/json_text.h"

#include <cstdint>

#include "base/json_scan.h"
#include "base/utf8.h"

namespace narad {
namespace {

constexpr char kHex[] = "0123456789abcdef";

}  // namespace

void append_json_string(std::string& out, std::string_view value, HtmlEscape html) {
    out.reserve(out.size() + value.size() + 2);
    out += '"';
    size_t i = 0;
    while (i < value.size()) {
        unsigned char c = static_cast<unsigned char>(value[i]);
        if (c < 0x80) {
            switch (c) {
                case '"':
                    out += "\\\"";
                    break;
                case '\\':
                    out += "\\\\";
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
                case '\b':
                    out += "\\b";
                    break;
                case '\f':
                    out += "\\f";
                    break;
                default:
                    if (c < 0x20 ||
                        (html == HtmlEscape::yes && (c == '<' || c == '>' || c == '&'))) {
                        out += "\\u00";
                        out += kHex[c >> 4];
                        out += kHex[c & 0xF];
                    } else {
                        out += static_cast<char>(c);
                    }
            }
            ++i;
            continue;
        }
        size_t length = utf8_sequence_length(value, i);
        if (length == 0) {
            out += "\\ufffd";
            ++i;
            continue;
        }
        // U+2028 and U+2029 (E2 80 A8 / E2 80 A9) break JavaScript parsers; Go escapes them.
        if (length == 3 && c == 0xE2 && static_cast<unsigned char>(value[i + 1]) == 0x80 &&
            (static_cast<unsigned char>(value[i + 2]) & 0xFE) == 0xA8) {
            out += static_cast<unsigned char>(value[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
        } else {
            out.append(value.substr(i, length));
        }
        i += length;
    }
    out += '"';
}

std::string json_string(std::string_view value, HtmlEscape html) {
    std::string out;
    append_json_string(out, value, html);
    return out;
}

bool is_valid_json(std::string_view text) {
    return json_scan::scan_document(text, json_scan::kGoMaxDepth).outcome == json_scan::Outcome::ok;
}

}  // namespace narad
