#include "wal/commit_codec.h"

#include "base/bytes.h"
#include "base/checksum.h"

namespace narad::wal::commit_codec {
namespace {

Status malformed(std::string_view why) {
    return Status(Errc::invalid_argument, "malformed commit body: " + std::string(why));
}

}  // namespace

uint64_t encoded_size(std::span<const storage::Record> records) {
    uint64_t size = kHeaderBytes + kTrailerBytes;
    for (const auto& record : records) {
        size += kRecordFixedBytes + record.key.size() + record.value.size();
    }
    return size;
}

Result<std::string> encode(std::span<const storage::Record> records) {
    if (records.empty()) return malformed("no records");
    if (records.size() > kMaxRecords) return malformed("too many records");
    uint64_t size = encoded_size(records);
    if (size > kMaxBodyBytes) return malformed("body too large");
    std::string out;
    out.reserve(size);
    out.append(kMagic);
    put_u16(out, kVersion);
    put_u16(out, 0);
    put_u32(out, static_cast<uint32_t>(records.size()));
    for (const auto& record : records) {
        if (record.key.size() + record.value.size() > kMaxRecordPayloadBytes) {
            return malformed("record too large");
        }
        put_u32(out, static_cast<uint32_t>(record.key.size()));
        put_u32(out, static_cast<uint32_t>(record.value.size()));
        put_u64(out, static_cast<uint64_t>(record.timestamp_ms));
        put_u64(out, record.producer.ingress.value());
        put_u64(out, record.producer.sequence.value());
        out.append(record.key);
        out.append(record.value);
    }
    put_u64(out, checksum64(out));
    return out;
}

Result<std::vector<storage::Record>> decode(std::string_view body) {
    if (body.size() > kMaxBodyBytes) return malformed("body too large");
    if (body.size() < kHeaderBytes + kTrailerBytes) return malformed("too short");
    size_t checked = body.size() - kTrailerBytes;
    if (load_u64(body.data() + checked) != checksum64(body.substr(0, checked))) {
        return malformed("checksum mismatch");
    }
    if (body.substr(0, 4) != kMagic) return malformed("bad magic");
    if (load_u16(body.data() + 4) != kVersion) return malformed("unsupported version");
    if (load_u16(body.data() + 6) != 0) return malformed("unknown flags");
    uint32_t count = load_u32(body.data() + 8);
    if (count == 0 || count > kMaxRecords) return malformed("record count out of range");
    // Each record takes at least its fixed part: refuse a count the body cannot hold before
    // reserving memory for it.
    if (static_cast<uint64_t>(count) * kRecordFixedBytes > checked - kHeaderBytes) {
        return malformed("record count exceeds the body");
    }
    std::vector<storage::Record> records;
    records.reserve(count);
    size_t at = kHeaderBytes;
    for (uint32_t i = 0; i < count; ++i) {
        if (checked - at < kRecordFixedBytes) return malformed("truncated record header");
        const char* p = body.data() + at;
        uint64_t key_bytes = load_u32(p);
        uint64_t value_bytes = load_u32(p + 4);
        storage::Record record;
        record.timestamp_ms = static_cast<int64_t>(load_u64(p + 8));
        record.producer.ingress = IngressId(load_u64(p + 16));
        record.producer.sequence = WalSeq(load_u64(p + 24));
        at += kRecordFixedBytes;
        if (key_bytes + value_bytes > kMaxRecordPayloadBytes) return malformed("record too large");
        if (checked - at < key_bytes + value_bytes) return malformed("truncated record");
        record.key = body.substr(at, key_bytes);
        record.value = body.substr(at + key_bytes, value_bytes);
        at += key_bytes + value_bytes;
        records.push_back(record);
    }
    if (at != checked) return malformed("trailing bytes");
    return records;
}

}  // namespace narad::wal::commit_codec
