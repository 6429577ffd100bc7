// move.marker: written into a partition's directory by the install of a moved copy
// (docs/formats/move-marker.md). It records where the copy came from, the high watermark it was
// promoted at, whether that was a force-promote, the child links that existed at install time, and
// when the copy was durable. Pure functions over the FileSystem seam.
#pragma once

#include <string>
#include <vector>

#include "base/ids.h"
#include "io/file_system.h"

namespace narad::move {

inline constexpr const char* kMoveMarkerFile = "move.marker";

struct ChildLink {
    std::string child;
    std::string attach_epoch;
    bool operator==(const ChildLink&) const = default;
};

struct MoveMarker {
    NodeId source;
    Offset promoted_high_watermark;
    bool force_promote = false;
    std::vector<ChildLink> children;
    int64_t durable_at_ms = 0;  // wall time the copy was made durable; 0: unknown (older release)
    bool operator==(const MoveMarker&) const = default;
};

std::string encode_marker(const MoveMarker& marker);
// corrupt on a bad checksum, an unknown version or a malformed line.
Result<MoveMarker> decode_marker(std::string_view text);

// Writes the marker into `directory` durably (write-temp, sync, rename, sync the directory).
Status write_marker(io::FileSystem& fs, const std::string& directory, const MoveMarker& marker);
// not_found without a marker.
Result<MoveMarker> read_marker(io::FileSystem& fs, const std::string& directory);

}  // namespace narad::move
