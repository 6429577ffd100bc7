// JSON text written the way Narad (Go) writes it, byte for byte where clients can see it: string
// escaping (with or without Go's HTML escaping of <, > and &), the `json.Valid` test that decides
// whether a payload is returned verbatim. Shared by the API (its answers) and the CLI (its
// output). Pure functions, any thread.
#pragma once

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

}  // namespace narad
