#include "queue/consumer_offset_file.h"

#include <algorithm>

#include "base/bytes.h"
#include "base/checksum.h"

namespace narad::queue {
namespace {

// docs/formats/consumer-offset.md
constexpr uint32_t kMagic = 0x4643524e;  // "NRCF" little-endian
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 4 + 4 + 8 + 4;  // magic, version, frontier, count
constexpr size_t kChecksumBytes = 8;

Status corrupt(const std::string& path, const std::string& why) {
    return Status(Errc::corrupt, path + ": " + why);
}

}  // namespace

Status write_consumer_position(io::FileSystem& fs, const std::string& path,
                               const ConsumerPosition& position) {
    Offset previous = position.frontier;
    for (size_t i = 0; i < position.acked_ahead.size(); ++i) {
        Offset offset = position.acked_ahead[i];
        if (offset < position.frontier || (i > 0 && offset <= previous)) {
            return Status(Errc::invalid_argument,
                          "acked-ahead offsets must be increasing and at or above the frontier");
        }
        previous = offset;
    }
    // Keep the lowest entries: a dropped acked offset is only delivered again after a restart.
    size_t count = std::min<size_t>(position.acked_ahead.size(), kMaxPersistedAckedAhead);

    std::string bytes;
    bytes.reserve(kHeaderBytes + 8 * count + kChecksumBytes);
    put_u32(bytes, kMagic);
    put_u32(bytes, kVersion);
    put_u64(bytes, position.frontier.value());
    put_u32(bytes, static_cast<uint32_t>(count));
    for (size_t i = 0; i < count; ++i) put_u64(bytes, position.acked_ahead[i].value());
    put_u64(bytes, checksum64(bytes));
    return io::write_file_atomically(fs, path, bytes);
}

Result<ConsumerPosition> read_consumer_position(io::FileSystem& fs, const std::string& path) {
    NARAD_ASSIGN_OR_RETURN(std::string bytes, io::read_file(fs, path));
    if (bytes.size() < kHeaderBytes + kChecksumBytes) {
        return corrupt(path, "too short (" + std::to_string(bytes.size()) + " bytes)");
    }
    size_t body_bytes = bytes.size() - kChecksumBytes;
    if (checksum64(bytes.data(), body_bytes) != load_u64(bytes.data() + body_bytes)) {
        return corrupt(path, "checksum mismatch");
    }
    ByteReader reader(std::string_view(bytes).substr(0, body_bytes));
    if (reader.u32() != kMagic) return corrupt(path, "bad magic");
    if (uint32_t version = reader.u32(); version != kVersion) {
        return corrupt(path, "unknown version " + std::to_string(version));
    }
    ConsumerPosition position;
    position.frontier = Offset(reader.u64());
    uint32_t count = reader.u32();
    if (count > kMaxPersistedAckedAhead || reader.remaining() != 8 * static_cast<size_t>(count)) {
        return corrupt(path, "count " + std::to_string(count) + " does not match the length");
    }
    position.acked_ahead.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
        Offset offset(reader.u64());
        if (offset < position.frontier ||
            (!position.acked_ahead.empty() && offset <= position.acked_ahead.back())) {
            return corrupt(path, "acked-ahead offsets out of order");
        }
        position.acked_ahead.push_back(offset);
    }
    return position;
}

}  // namespace narad::queue
