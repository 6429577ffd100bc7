// move.marker: written into a partition's directory by the install of a moved copy
// (docs/formats/move-marker.md). It records where the copy came from, the high watermark it was
// promoted at, whether that was a force-promote, the child links that existed at install time,
// when the copy was durable, and which install put it there. Pure functions over the FileSystem
// seam.
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
    // Names this one install (random hex), so taking it back off the partition's path can check
    // that the path still holds this copy and not a successor's. Empty in a version 1 marker.
    std::string install;
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
