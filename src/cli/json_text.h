// JSON handled as text, the way the Go CLI's encoding/json sees it: validation with Go's grammar
// (UTF-8 inside strings is not checked), json.Indent re-indentation that keeps every token
// verbatim (key order, number spelling, escapes), and access to the raw text of an object's
// members or an array's elements (json.RawMessage). nlohmann::json would reorder keys and respell
// numbers, so the printing paths go through here. Pure functions; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace narad::cli {

// Go's json.Indent(text, "", "  "): leading whitespace dropped, trailing whitespace kept,
// `{}` and `[]` stay compact. nullopt if `text` is not valid JSON.
std::optional<std::string> indent_json(std::string_view text);

// The members of a top-level object, in order, each value as its raw text. nullopt if `text` is
// not a valid JSON object.
using RawMembers = std::vector<std::pair<std::string, std::string_view>>;
std::optional<RawMembers> object_members(std::string_view text);

// The elements of a top-level array, each as its raw text. nullopt if `text` is not an array.
std::optional<std::vector<std::string_view>> array_elements(std::string_view text);

// The raw text of the last member named `name` (Go's decoder lets the last duplicate win);
// nullopt if absent.
std::optional<std::string_view> find_member(const RawMembers& members, std::string_view name);

// Decodes a JSON string literal (with its quotes) as Go's json.Unmarshal does: invalid UTF-8 and
// unpaired surrogates become U+FFFD. nullopt if `raw` is not a string literal.
std::optional<std::string> decode_json_string(std::string_view raw);

}  // namespace narad::cli
