// The values a move passes between its source and its destination (docs/moves.md): the source's
// transfer listing of one partition, and the freeze token PrepareHandoff returns. Plain data; the
// wire form (JSON on the cluster port) is api/'s business.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/ids.h"
#include "move/marker.h"

namespace narad::move {

struct SegmentListing {
    Offset base;
    uint64_t size_bytes = 0;   // committed bytes only: the active segment up to the HWM
    uint64_t index_bytes = 0;  // the sealed segment's offset index (0: none to copy)
    bool sealed = false;
    int64_t modified_ns = 0;  // the file's modification time on the source's wall clock
};

// A parent partition's fan-out cursor file, shipped with the listing as its verified bytes
// (docs/formats/fanout-cursor.md).
struct CursorSidecar {
    std::string child;
    std::string bytes;
    bool operator==(const CursorSidecar&) const = default;
};

// What the source reports about one partition, read in this order so it never runs ahead of the
// bytes it lists: the consumer position and the fan-out cursors, then the high watermark, then the
// segments.
struct TransferListing {
    Offset frontier;                     // every offset below it is acked (in-memory, current)
    std::vector<Offset> acked_ahead;     // acked offsets at or above the frontier
    std::vector<CursorSidecar> cursors;  // each checked against its checksum before it was listed
    Offset high_watermark;
    std::vector<SegmentListing> segments;  // by base offset
    int64_t source_clock_ns = 0;           // the source's wall clock when it listed
    // The owner's move.marker, when its copy was installed by a move (the stale-copy sweep asks
    // for it before it reclaims an old copy).
    std::optional<MoveMarker> marker;
    int64_t marker_written_ns = 0;  // the marker file's modification time (source's wall clock)

    uint64_t total_bytes() const {
        uint64_t total = 0;
        for (const auto& segment : segments) total += segment.size_bytes + segment.index_bytes;
        return total;
    }
};

// PrepareHandoff's answer: the freeze token and the listing read under the freeze.
struct Handoff {
    FreezeToken token;
    TransferListing listing;
};

enum class ChunkKind { log, index };

}  // namespace narad::move
