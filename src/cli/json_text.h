// JSON handled as text, the way the Go CLI's encoding/json sees it: json.Indent re-indentation
// that keeps every token verbatim (key order, number spelling, escapes), and the raw text of an
// object's members or an array's elements (json.RawMessage). nlohmann::json would reorder keys
// and respell numbers, so the printing paths go through here. All of it is the shared,
// non-recursive scanner of base/json_scan.h, so no reply can overflow the CLI's stack. Pure
// functions; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/json_scan.h"

namespace narad::cli {

// Go's json.Indent(text, "", "  "): leading whitespace dropped, trailing whitespace kept,
// `{}` and `[]` stay compact. nullopt if `text` is not valid JSON (or nests deeper than Go's
// 10000 levels).
std::optional<std::string> indent_json(std::string_view text);

using json_scan::array_elements;
using json_scan::find_member;
using json_scan::object_members;
using json_scan::RawMembers;

inline std::optional<std::string> decode_json_string(std::string_view raw) {
    return json_scan::decode_string(raw);
}

}  // namespace narad::cli
