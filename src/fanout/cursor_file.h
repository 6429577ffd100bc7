// The fanout-<child>.offset file: where one child's fan-out cursor stands in one parent partition
// (docs/formats/fanout-cursor.md), and the attach epoch it belongs to. Written with write-temp,
// fsync, rename, fsync-directory and a checksum, so a crash leaves the previous or the new
// position, and a torn or damaged file reads as corrupt, never as a position. Pure functions over
// the FileSystem seam.
#pragma once

#include <string>
#include <string_view>

#include "base/ids.h"
#include "base/status.h"
#include "io/file_system.h"

namespace narad::fanout {

inline constexpr size_t kMaxEpochBytes = 64;

struct CursorPosition {
    std::string epoch;  // the link's attach epoch
    Offset next;        // the next parent offset to fan out
    bool operator==(const CursorPosition&) const = default;
};

// "fanout-<child>.offset".
std::string cursor_file_name(std::string_view child);
// The child named by a cursor file name, or empty when `file` is not one.
std::string child_of_cursor_file(std::string_view file);

std::string encode_cursor(const CursorPosition& position);
// corrupt (naming `what`) on a short file, a checksum mismatch, a bad magic or version.
Result<CursorPosition> decode_cursor(std::string_view bytes, std::string_view what);

// invalid_argument for an epoch longer than kMaxEpochBytes.
Status write_cursor(io::FileSystem& fs, const std::string& path, const CursorPosition& position);
// not_found when there is no file; corrupt when it fails its checks.
Result<CursorPosition> read_cursor(io::FileSystem& fs, const std::string& path);

}  // namespace narad::fanout
