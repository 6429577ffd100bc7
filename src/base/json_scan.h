// JSON read as text, never recursively: a scanner that checks one value against the JSON grammar
// (RFC 8259, strings not checked for UTF-8, as Go's json.Valid) and measures how deep it nests,
// with an explicit depth limit instead of the call stack, so no input can overflow a thread's
// stack however deep it nests. On top of it: the raw text of an object's members or an array's
// elements (Go's json.RawMessage) and the decoding of a string literal. Shared by the server (the
// depth checks before any recursive parser or dump, the batch decoder's payload slices) and the
// CLI (json.Indent, raw members). Pure functions; any thread.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace narad::json_scan {

// Go's scanner refuses documents nested deeper than this; so do we wherever we mirror json.Valid.
inline constexpr uint32_t kGoMaxDepth = 10'000;
// Narad refuses payloads (and schemas) that nest deeper than this.
inline constexpr uint32_t kPayloadMaxDepth = 256;

enum class Outcome { ok, syntax_error, too_deep };

struct Scan {
    Outcome outcome = Outcome::ok;
    size_t end = 0;      // one past the value (ok), or where scanning stopped
    uint32_t depth = 0;  // the deepest nesting reached: 0 for a scalar, 1 for `[]`
};

// Events of a scan, for callers that rewrite the text as they go (indent_json). Every piece of
// the value is reported once, in order; whitespace between tokens is not.
class Visitor {
  public:
    virtual ~Visitor() = default;
    // `{` or `[` opening a container at `depth` (1 for the outermost).
    virtual void open(char bracket, uint32_t depth) = 0;
    // `}` or `]`; `empty` when the container had no member.
    virtual void close(char bracket, uint32_t depth, bool empty) = 0;
    // A string (also an object key), number or literal, as written.
    virtual void scalar(std::string_view text, uint32_t depth) = 0;
    virtual void colon() = 0;
    virtual void comma(uint32_t depth) = 0;
};

size_t skip_space(std::string_view text, size_t pos);

// Scans one value starting at `pos` (leading whitespace skipped). A container opened at a depth
// above `max_depth` stops the scan with too_deep, before anything past it is read.
Scan scan_value(std::string_view text, size_t pos, uint32_t max_depth, Visitor* visitor = nullptr);
// The whole of `text` is one value, with only whitespace around it.
Scan scan_document(std::string_view text, uint32_t max_depth);

// Whether the value at the start of `text` opens more than `limit` containers inside each other
// before the grammar fails, if it does (text that is not JSON at all does not nest).
inline bool nests_deeper_than(std::string_view text, uint32_t limit) {
    return scan_value(text, 0, limit).outcome == Outcome::too_deep;
}

// Where the string literal starting at text[pos] (its opening quote) ends, one past its closing
// quote; nullopt if there is no valid literal there.
std::optional<size_t> scan_string(std::string_view text, size_t pos);

// Whether the text handed to object_members or array_elements has already been checked: a whole
// document that scan_document passed, or a complete value sliced from one. `scanned` skips the
// check (the caller vouches for it); `unchecked` makes it.
enum class Validity { unchecked, scanned };

// The members of a top-level object, in order, each value as its raw text (duplicates kept).
// nullopt if `text` is not one valid object no deeper than `max_depth`.
using RawMembers = std::vector<std::pair<std::string, std::string_view>>;
std::optional<RawMembers> object_members(std::string_view text, uint32_t max_depth = kGoMaxDepth,
                                         Validity validity = Validity::unchecked);

// The elements of a top-level array, each as its raw text; nullopt if `text` is not one valid
// array no deeper than `max_depth`. Stops after `limit` + 1 elements (so a caller can tell "over
// the limit" without holding every element of a huge array).
std::optional<std::vector<std::string_view>> array_elements(
    std::string_view text, uint32_t max_depth = kGoMaxDepth,
    size_t limit = std::numeric_limits<size_t>::max() - 1, Validity validity = Validity::unchecked);

// The raw text of the last member named `name` (Go's decoder lets the last duplicate win).
std::optional<std::string_view> find_member(const RawMembers& members, std::string_view name);

// Decodes a string literal (with its quotes) as Go's json.Unmarshal does: invalid UTF-8 and
// unpaired surrogates become U+FFFD. nullopt if `raw` is not exactly one string literal.
std::optional<std::string> decode_string(std::string_view raw);

}  // namespace narad::json_scan
