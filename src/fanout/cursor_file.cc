#include "fanout/cursor_file.h"

#include "base/bytes.h"
#include "base/checksum.h"

namespace narad::fanout {
namespace {

// docs/formats/fanout-cursor.md
constexpr uint32_t kMagic = 0x4346524e;  // "NRFC" little-endian
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 4 + 4 + 8 + 2;  // magic, version, next, epoch length
constexpr size_t kChecksumBytes = 8;
constexpr std::string_view kPrefix = "fanout-";
constexpr std::string_view kSuffix = ".offset";

Status corrupt(std::string_view what, const std::string& why) {
    return Status(Errc::corrupt, std::string(what) + ": " + why);
}

}  // namespace

std::string cursor_file_name(std::string_view child) {
    return std::string(kPrefix) + std::string(child) + std::string(kSuffix);
}

std::string child_of_cursor_file(std::string_view file) {
    if (file.size() <= kPrefix.size() + kSuffix.size() || !file.starts_with(kPrefix) ||
        !file.ends_with(kSuffix)) {
        return "";
    }
    return std::string(file.substr(kPrefix.size(), file.size() - kPrefix.size() - kSuffix.size()));
}

std::string encode_cursor(const CursorPosition& position) {
    std::string bytes;
    bytes.reserve(kHeaderBytes + position.epoch.size() + kChecksumBytes);
    put_u32(bytes, kMagic);
    put_u32(bytes, kVersion);
    put_u64(bytes, position.next.value());
    put_u16(bytes, static_cast<uint16_t>(position.epoch.size()));
    bytes.append(position.epoch);
    put_u64(bytes, checksum64(bytes));
    return bytes;
}

Result<CursorPosition> decode_cursor(std::string_view bytes, std::string_view what) {
    if (bytes.size() < kHeaderBytes + kChecksumBytes) {
        return corrupt(what, "too short (" + std::to_string(bytes.size()) + " bytes)");
    }
    size_t body_bytes = bytes.size() - kChecksumBytes;
    if (checksum64(bytes.data(), body_bytes) != load_u64(bytes.data() + body_bytes)) {
        return corrupt(what, "checksum mismatch");
    }
    ByteReader reader(bytes.substr(0, body_bytes));
    if (reader.u32() != kMagic) return corrupt(what, "bad magic");
    if (uint32_t version = reader.u32(); version != kVersion) {
        return corrupt(what, "unknown version " + std::to_string(version));
    }
    CursorPosition position;
    position.next = Offset(reader.u64());
    uint16_t epoch_bytes = reader.u16();
    if (epoch_bytes > kMaxEpochBytes || reader.remaining() != epoch_bytes) {
        return corrupt(what,
                       "epoch length " + std::to_string(epoch_bytes) + " does not match the file");
    }
    position.epoch = std::string(bytes.substr(kHeaderBytes, epoch_bytes));
    return position;
}

Status write_cursor(io::FileSystem& fs, const std::string& path, const CursorPosition& position) {
    if (position.epoch.size() > kMaxEpochBytes) {
        return Status(Errc::invalid_argument, "attach epoch too long");
    }
    return io::write_file_atomically(fs, path, encode_cursor(position));
}

Result<CursorPosition> read_cursor(io::FileSystem& fs, const std::string& path) {
    NARAD_ASSIGN_OR_RETURN(std::string bytes, io::read_file(fs, path));
    return decode_cursor(bytes, path);
}

}  // namespace narad::fanout
