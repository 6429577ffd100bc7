// Small text helpers that reproduce the Go `narad` CLI's output byte for byte: pflag's integer
// parsing and error texts, Go's %q and JSON string quoting, rune-counted padding as in "%-32s",
// humanBytes, %.0f, %x and url.QueryEscape/PathEscape (JSON quoting and base64 are
// base/json_text.h). Pure functions; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/json_text.h"
#include "base/status.h"

namespace narad::cli {

// strconv.ParseInt(text, 0, 64) as pflag's int flags use it (base prefixes 0x/0o/0b/0 and `_`
// separators allowed). Errors read `strconv.ParseInt: parsing "x": invalid syntax` or
// `...: value out of range`.
Result<int64_t> parse_go_int(std::string_view text);

// pflag's wrapper around a flag value error: `invalid argument "v" for "--name" flag: <error>`.
std::string flag_error(std::string_view value, std::string_view flag, std::string_view error);

// Go's %q (strconv.Quote) for a UTF-8 string.
std::string go_quote(std::string_view text);

// Number of runes (UTF-8 code points, invalid bytes counting one each), as Go's width padding
// counts them.
size_t rune_count(std::string_view text);
// "%-Ns" and "%Ns": pad with spaces to `width` runes on the right or on the left.
std::string pad_right(std::string_view text, size_t width);
std::string pad_left(std::string_view text, size_t width);

// Whether a size puts a space between the number and its unit ("12.3 MiB") or not ("12.3MiB").
enum class UnitGap { none, space };
// The CLI's humanBytes: "<n>B" below 1024, else "%.1f" with KiB, MiB, GiB... (base 1024).
std::string human_bytes(int64_t bytes, UnitGap gap = UnitGap::none);

// Go's %.0f (including "+Inf", "-Inf" and "NaN").
std::string format_float0(double value);
// Go's %.1f.
std::string format_float1(double value);

// Go's %x of a byte string: lowercase hex, two digits per byte.
std::string hex_encode(std::string_view bytes);

// url.QueryEscape (space becomes '+') and url.PathEscape (one path segment).
std::string query_escape(std::string_view text);
std::string path_escape(std::string_view text);

}  // namespace narad::cli
