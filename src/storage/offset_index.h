// The offset index of a sealed segment (docs/formats/segment.md): one u32 file position per offset,
// so a read at any offset costs one seek. The active segment keeps its index in memory; sealing
// writes it here, atomically, with a checksummed header. Pure encode/decode functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "base/status.h"

namespace narad::storage {

// The index file of segment `base`, whose log file is `segment_bytes` long when sealed.
std::string encode_index(Offset base, uint64_t segment_bytes, std::span<const uint32_t> positions);

// The positions in an index file. Fails with corrupt if the file is short, fails its checksum, or
// does not describe segment `base` of `segment_bytes` bytes holding `expected_count` offsets (so a
// stale index, say from before a tail cut, is rebuilt rather than trusted).
Result<std::vector<uint32_t>> decode_index(std::string_view bytes, Offset base,
                                           uint64_t segment_bytes, uint64_t expected_count);

}  // namespace narad::storage
