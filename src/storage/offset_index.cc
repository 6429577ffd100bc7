#include "storage/offset_index.h"

#include <fmt/format.h>

#include <cstring>

#include "base/bytes.h"
#include "base/checksum.h"
#include "storage/frame_format.h"

namespace narad::storage {
namespace {

constexpr size_t kChecksumAt = 24;

uint64_t index_checksum(std::string_view header_prefix, std::string_view entries) {
    Checksummer sum;
    sum.update(header_prefix);
    sum.update(entries);
    return sum.digest();
}

}  // namespace

std::string encode_index(Offset base, uint64_t segment_bytes, std::span<const uint32_t> positions) {
    std::string out;
    out.reserve(kIndexHeaderBytes + positions.size() * 4);
    out.append(kIndexMagic);
    out.push_back(static_cast<char>(kIndexVersion));
    put_u32(out, static_cast<uint32_t>(positions.size()));
    put_u64(out, base.value());
    put_u64(out, segment_bytes);
    put_u64(out, 0);  // checksum, below
    for (uint32_t position : positions) put_u32(out, position);
    std::string_view view(out);
    store_u64(out.data() + kChecksumAt,
              index_checksum(view.substr(0, kChecksumAt), view.substr(kIndexHeaderBytes)));
    return out;
}

Result<std::vector<uint32_t>> decode_index(std::string_view bytes, Offset base,
                                           uint64_t segment_bytes, uint64_t expected_count) {
    auto bad = [&](std::string_view why) {
        return Status(Errc::corrupt, fmt::format("index of segment {}: {}", base.value(), why));
    };
    if (bytes.size() < kIndexHeaderBytes) return bad("shorter than its header");
    if (bytes.substr(0, 3) != kIndexMagic || static_cast<uint8_t>(bytes[3]) != kIndexVersion) {
        return bad("wrong magic or version");
    }
    uint32_t count = load_u32(bytes.data() + 4);
    if (bytes.size() != kIndexHeaderBytes + uint64_t{count} * 4) return bad("short or long");
    if (load_u64(bytes.data() + kChecksumAt) !=
        index_checksum(bytes.substr(0, kChecksumAt), bytes.substr(kIndexHeaderBytes))) {
        return bad("checksum mismatch");
    }
    if (load_u64(bytes.data() + 8) != base.value()) return bad("names another segment");
    if (load_u64(bytes.data() + 16) != segment_bytes) return bad("the segment's size changed");
    if (count != expected_count) return bad("wrong number of offsets");
    std::vector<uint32_t> positions(count);
    const char* p = bytes.data() + kIndexHeaderBytes;
    for (uint32_t i = 0; i < count; ++i) {
        positions[i] = load_u32(p + 4 * i);
        if (positions[i] >= segment_bytes) return bad("a position lies past the segment's end");
        if (i > 0 && positions[i] < positions[i - 1]) return bad("positions go backwards");
    }
    return positions;
}

}  // namespace narad::storage
