// JSON text written the way Narad (Go) writes it, byte for byte where clients can see it: string
// escaping (with or without Go's HTML escaping of <, > and &), the `json.Valid` test that decides
// whether a payload is returned verbatim, UTF-8 checks and base64. Shared by the API (its answers),
// the CLI (its output) and net (Basic auth). Pure functions, any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace narad {

enum class HtmlEscape { no, yes };

// Appends `value` as a quoted JSON string. Invalid UTF-8 becomes U+FFFD, as Go's encoder does;
// U+2028 and U+2029 are always escaped; with HtmlEscape::yes, <, > and & become \u003c etc.
void append_json_string(std::string& out, std::string_view value,
                        HtmlEscape html = HtmlEscape::yes);
std::string json_string(std::string_view value, HtmlEscape html = HtmlEscape::yes);

// True when `text` is exactly one JSON value, optionally surrounded by whitespace (Go's json.Valid:
// strings are not checked for valid UTF-8). Nesting deeper than 10000 levels is invalid. Never
// recurses (base/json_scan.h).
bool is_valid_json(std::string_view text);

bool is_valid_utf8(std::string_view text);
// Length of the valid UTF-8 sequence starting at text[i] (1 for ASCII), or 0 if it is invalid
// there (overlong, a surrogate, above U+10FFFF, or cut short).
size_t utf8_sequence_length(std::string_view text, size_t i);

std::string base64_encode(std::string_view bytes);
// Standard alphabet with padding; nullopt on malformed input.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace narad
