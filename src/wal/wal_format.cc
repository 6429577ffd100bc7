#include "wal/wal_format.h"

#include <fmt/format.h>

#include "base/bytes.h"
#include "base/checksum.h"

namespace narad::wal::format {
namespace {

// magic (8) + version (u32) + a u64, then the XXH3 of those 20 bytes: the shape of both the id file
// and the segment header.
std::string encode_tagged(std::string_view magic, uint64_t value) {
    std::string out(magic);
    put_u32(out, kVersion);
    put_u64(out, value);
    put_u64(out, checksum64(out));
    return out;
}

Result<uint64_t> decode_tagged(std::string_view bytes, std::string_view magic,
                               std::string_view what) {
    if (bytes.size() < 28) {
        return Status(Errc::corrupt,
                      fmt::format("{} is {} bytes, shorter than 28", what, bytes.size()));
    }
    if (bytes.substr(0, 8) != magic)
        return Status(Errc::corrupt, fmt::format("{}: bad magic", what));
    if (load_u64(bytes.data() + 20) != checksum64(bytes.substr(0, 20))) {
        return Status(Errc::corrupt, fmt::format("{}: checksum mismatch", what));
    }
    uint32_t version = load_u32(bytes.data() + 8);
    if (version != kVersion) {
        return Status(Errc::corrupt, fmt::format("{}: unsupported version {}", what, version));
    }
    return load_u64(bytes.data() + 12);
}

}  // namespace

std::string encode_id_file(IngressId id) { return encode_tagged(kIdMagic, id.value()); }

Result<IngressId> decode_id_file(std::string_view bytes) {
    if (bytes.size() != kIdFileBytes) {
        return Status(Errc::corrupt,
                      fmt::format("WAL id file is {} bytes, not {}", bytes.size(), kIdFileBytes));
    }
    NARAD_ASSIGN_OR_RETURN(uint64_t id, decode_tagged(bytes, kIdMagic, "WAL id file"));
    if (id == 0) return Status(Errc::corrupt, "WAL id file holds id 0");
    return IngressId(id);
}

std::string encode_segment_header(WalSeq first) {
    return encode_tagged(kSegmentMagic, first.value());
}

Result<WalSeq> decode_segment_header(std::string_view bytes) {
    NARAD_ASSIGN_OR_RETURN(uint64_t first, decode_tagged(bytes, kSegmentMagic, "segment header"));
    return WalSeq(first);
}

Status check_limits(const IngressRecord& record) {
    if (record.topic.size() > kMaxNameBytes || record.incarnation.size() > kMaxNameBytes) {
        return Status(Errc::invalid_argument, "topic or incarnation name too long for the WAL");
    }
    if (record.key.size() + record.value.size() > kMaxPayloadBytes) {
        return Status(Errc::payload_too_large,
                      fmt::format("record key and value exceed {} bytes", kMaxPayloadBytes));
    }
    return Status::ok();
}

uint64_t frame_bytes(const IngressRecord& record) {
    return kFramePrefixBytes + kBodyFixedBytes + record.topic.size() + record.incarnation.size() +
           record.key.size() + record.value.size();
}

void append_frame(std::string& out, const IngressRecord& record) {
    size_t start = out.size();
    uint64_t body_bytes = frame_bytes(record) - kFramePrefixBytes;
    out.resize(start + kFramePrefixBytes);  // filled in once the body is there
    put_u64(out, record.sequence.value());
    put_u64(out, static_cast<uint64_t>(record.timestamp_ms));
    put_u32(out, record.partition.value());
    put_u16(out, static_cast<uint16_t>(record.topic.size()));
    out.append(record.topic);
    put_u16(out, static_cast<uint16_t>(record.incarnation.size()));
    out.append(record.incarnation);
    put_u32(out, static_cast<uint32_t>(record.key.size()));
    out.append(record.key);
    put_u32(out, static_cast<uint32_t>(record.value.size()));
    out.append(record.value);
    std::string_view body(out.data() + start + kFramePrefixBytes, body_bytes);
    store_u32(out.data() + start, static_cast<uint32_t>(body_bytes));
    store_u64(out.data() + start + 4, checksum64(body));
}

FramePrefix decode_prefix(const char* bytes) {
    return FramePrefix{load_u32(bytes), load_u64(bytes + 4)};
}

Result<IngressRecord> decode_body(std::string_view body, const FramePrefix& prefix) {
    if (body.size() != prefix.body_bytes) {
        return Status(Errc::corrupt, "record body shorter than its length");
    }
    if (checksum64(body) != prefix.checksum)
        return Status(Errc::corrupt, "record checksum mismatch");
    ByteReader reader(body);
    IngressRecord record;
    record.sequence = WalSeq(reader.u64());
    record.timestamp_ms = static_cast<int64_t>(reader.u64());
    record.partition = PartitionId(reader.u32());
    record.topic = std::string(reader.bytes(reader.u16()));
    record.incarnation = std::string(reader.bytes(reader.u16()));
    record.key = std::string(reader.bytes(reader.u32()));
    record.value = std::string(reader.bytes(reader.u32()));
    // A matching checksum over inconsistent lengths means a writer bug, not a torn write; either
    // way the record cannot be trusted.
    if (!reader.ok() || reader.remaining() != 0) {
        return Status(Errc::corrupt, "record field lengths do not match its length");
    }
    if (record.sequence.value() == 0) return Status(Errc::corrupt, "record with sequence 0");
    return record;
}

std::string segment_file_name(WalSeq first) { return fmt::format("{:020}.wal", first.value()); }

std::optional<WalSeq> parse_segment_file_name(std::string_view name) {
    if (name.size() != 24 || !name.ends_with(".wal")) return std::nullopt;
    uint64_t value = 0;
    for (char c : name.substr(0, 20)) {
        if (c < '0' || c > '9') return std::nullopt;
        uint64_t digit = static_cast<uint64_t>(c - '0');
        if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
        value = value * 10 + digit;
    }
    return WalSeq(value);
}

}  // namespace narad::wal::format
