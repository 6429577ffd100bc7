// The generated part of docs/benchmarks.md: `narad-compare` owns only the text between
// `<!-- compare:begin -->` and `<!-- compare:end -->` and replaces it on each run, leaving the
// hand-written sections alone. When the markers are missing it adds them, under the heading
// kCompareHeading, right after the "## Machine" section (or at the end when there is none).
// Pure string functions plus one file update (written to a temporary file, then renamed). Any
// thread.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace narad::compare {

inline constexpr std::string_view kBeginMarker = "<!-- compare:begin -->";
inline constexpr std::string_view kEndMarker = "<!-- compare:end -->";
inline constexpr std::string_view kCompareHeading =
    "## Side by side with NATS JetStream and Redis Streams (issue 5)";
inline constexpr std::string_view kMachineHeading = "## Machine";

// `document` with the text between the markers replaced by `generated` (framed by one newline
// on each side). Errors: only one of the markers, markers out of order, or a marker twice.
Result<std::string> replace_generated(std::string_view document, std::string_view generated);

// replace_generated on the file at `path` (which must exist).
Status update_markdown_file(const std::string& path, std::string_view generated);

// Writes `text` to `path` through a temporary file and a rename.
Status write_file_atomically(const std::string& path, std::string_view text);

}  // namespace narad::compare
