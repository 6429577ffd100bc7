#include "storage/frame.h"

#include <zstd.h>

#include <cstring>
#include <memory>

#include "base/bytes.h"
#include "base/checksum.h"

namespace narad::storage {
namespace {

struct CctxDeleter {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DctxDeleter {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// One context per thread: creating one per call costs more than compressing a small batch.
ZSTD_CCtx* compression_context() {
    thread_local std::unique_ptr<ZSTD_CCtx, CctxDeleter> context(ZSTD_createCCtx());
    return context.get();
}
ZSTD_DCtx* decompression_context() {
    thread_local std::unique_ptr<ZSTD_DCtx, DctxDeleter> context(ZSTD_createDCtx());
    return context.get();
}

Status corrupt(std::string message) { return Status(Errc::corrupt, std::move(message)); }

// Writes a header with a zero base offset and checksum; assign_offsets() fills both.
void put_header(std::string& out, uint32_t length, int64_t timestamp_ms, ProducerStamp producer,
                uint32_t record_count, uint32_t key_length, uint32_t value_length, uint8_t flags) {
    out.append(kFrameMagic);
    out.push_back(static_cast<char>(kFrameVersion));
    put_u32(out, length);
    put_u64(out, 0);  // checksum
    put_u64(out, 0);  // base offset
    put_u64(out, static_cast<uint64_t>(timestamp_ms));
    put_u64(out, producer.ingress.value());
    put_u64(out, producer.sequence.value());
    put_u32(out, record_count);
    put_u32(out, key_length);
    put_u32(out, value_length);
    out.push_back(static_cast<char>(flags));
    out.append(3, '\0');
}

// The uncompressed body of a zstd batch: per record ts, ingress, sequence, key length, value
// length, key, value.
void put_batch_record(std::string& body, const Record& record) {
    put_u64(body, static_cast<uint64_t>(record.timestamp_ms));
    put_u64(body, record.producer.ingress.value());
    put_u64(body, record.producer.sequence.value());
    put_u32(body, static_cast<uint32_t>(record.key.size()));
    put_u32(body, static_cast<uint32_t>(record.value.size()));
    body.append(record.key);
    body.append(record.value);
}

Status encode_zstd_frame(std::span<const Record> records, int level, EncodedBatch& out) {
    std::string body;
    for (const Record& record : records) put_batch_record(body, record);
    size_t bound = ZSTD_compressBound(body.size());
    std::string compressed(bound, '\0');
    size_t n = ZSTD_compressCCtx(compression_context(), compressed.data(), bound, body.data(),
                                 body.size(), level);
    if (ZSTD_isError(n)) {
        return Status(Errc::internal, std::string("zstd compress: ") + ZSTD_getErrorName(n));
    }
    compressed.resize(n);
    size_t length = kFrameHeaderBytes + compressed.size();
    NARAD_ASSERT(length <= kFrameBytesMax && body.size() <= kBatchBodyBytesMax,
                 "zstd batch frame over its bound");
    out.frames.push_back(
        {static_cast<uint32_t>(out.bytes.size()), static_cast<uint32_t>(records.size())});
    put_header(out.bytes, static_cast<uint32_t>(length), records.front().timestamp_ms,
               ProducerStamp{}, static_cast<uint32_t>(records.size()),
               static_cast<uint32_t>(body.size()), static_cast<uint32_t>(compressed.size()),
               kFlagCodecZstd);
    out.bytes.append(compressed);
    return Status::ok();
}

Status parse_batch_body(const FrameHeader& header, std::string_view body,
                        std::vector<DecodedRecord>* records, std::vector<ProducerStamp>* stamps) {
    ByteReader reader(body);
    for (uint32_t i = 0; i < header.record_count; ++i) {
        int64_t timestamp_ms = static_cast<int64_t>(reader.u64());
        ProducerStamp producer{IngressId(reader.u64()), WalSeq(reader.u64())};
        uint32_t key_length = reader.u32();
        uint32_t value_length = reader.u32();
        std::string_view key = reader.bytes(key_length);
        std::string_view value = reader.bytes(value_length);
        if (!reader.ok()) return corrupt("zstd batch body ends inside a record");
        if (stamps != nullptr) stamps->push_back(producer);
        if (records != nullptr) {
            records->push_back(DecodedRecord{header.base + i, timestamp_ms, producer,
                                             std::string(key), std::string(value)});
        }
    }
    if (reader.remaining() != 0) return corrupt("zstd batch body has bytes after its records");
    return Status::ok();
}

Result<std::string> decompress(const FrameHeader& header, std::string_view payload) {
    unsigned long long declared = ZSTD_getFrameContentSize(payload.data(), payload.size());
    if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN ||
        declared != header.key_length) {
        return corrupt("zstd batch declares a size different from its header");
    }
    std::string body(header.key_length, '\0');
    size_t n = ZSTD_decompressDCtx(decompression_context(), body.data(), body.size(),
                                   payload.data(), payload.size());
    if (ZSTD_isError(n) || n != body.size()) return corrupt("zstd batch does not decompress");
    return body;
}

}  // namespace

void seal_frame_checksum(char* frame) {
    uint32_t length = load_u32(frame + kFrameLengthAt);
    uint64_t sum = checksum64(frame + kFrameChecksumEnd, length - kFrameChecksumEnd);
    store_u64(frame + kFrameChecksumAt, sum);
}

FrameDecode decode_frame(std::string_view bytes) {
    FrameDecode result;
    // Reject a wrong magic as soon as its bytes are there, so garbage is never "need more".
    size_t magic_seen = std::min(bytes.size(), kFrameMagic.size() + 1);
    char expected[4] = {kFrameMagic[0], kFrameMagic[1], kFrameMagic[2],
                        static_cast<char>(kFrameVersion)};
    if (std::memcmp(bytes.data(), expected, magic_seen) != 0) return result;
    if (bytes.size() < kFrameHeaderBytes) {
        result.check = FrameCheck::need_more;
        result.needed = kFrameHeaderBytes;
        return result;
    }
    const char* p = bytes.data();
    uint32_t length = load_u32(p + kFrameLengthAt);
    if (length < kFrameHeaderBytes || length > kFrameBytesMax) return result;
    if (bytes.size() < length) {
        result.check = FrameCheck::need_more;
        result.needed = length;
        return result;
    }
    uint64_t stored = load_u64(p + kFrameChecksumAt);
    if (checksum64(p + kFrameChecksumEnd, length - kFrameChecksumEnd) != stored) return result;

    FrameHeader& h = result.header;
    h.length = length;
    h.checksum = stored;
    h.base = Offset(load_u64(p + kFrameBaseOffsetAt));
    h.timestamp_ms = static_cast<int64_t>(load_u64(p + kFrameTimestampAt));
    h.producer = ProducerStamp{IngressId(load_u64(p + kFrameIngressAt)),
                               WalSeq(load_u64(p + kFrameSequenceAt))};
    h.record_count = load_u32(p + kFrameRecordCountAt);
    h.key_length = load_u32(p + kFrameKeyLengthAt);
    h.value_length = load_u32(p + kFrameValueLengthAt);
    uint8_t flags = static_cast<uint8_t>(p[kFrameFlagsAt]);
    if ((flags & ~kFlagCodecMask) != 0) return result;
    if (p[kFrameReservedAt] != 0 || p[kFrameReservedAt + 1] != 0 || p[kFrameReservedAt + 2] != 0) {
        return result;
    }
    // A checksum that verifies still does not prove the fields agree (a writer bug would be
    // caught here rather than by a reader walking off the end).
    uint64_t payload_length = length - kFrameHeaderBytes;
    switch (flags & kFlagCodecMask) {
        case kFlagCodecNone:
            h.codec = Codec::none;
            if (h.record_count != 1 || uint64_t{h.key_length} + h.value_length != payload_length ||
                uint64_t{h.key_length} + h.value_length > kRecordBytesMax) {
                return result;
            }
            break;
        case kFlagCodecZstd:
            h.codec = Codec::zstd;
            if (h.record_count == 0 || h.record_count > kBatchRecordsMax ||
                h.value_length != payload_length || h.key_length > kBatchBodyBytesMax ||
                h.key_length < uint64_t{h.record_count} * kBatchRecordOverheadBytes ||
                !h.producer.empty()) {
                return result;
            }
            break;
        default:
            return result;
    }
    if (h.base.value() > UINT64_MAX - h.record_count) return result;
    result.check = FrameCheck::ok;
    result.payload = bytes.substr(kFrameHeaderBytes, payload_length);
    return result;
}

Status unpack_frame(const FrameHeader& header, std::string_view payload,
                    std::vector<DecodedRecord>& out) {
    if (header.codec == Codec::none) {
        out.push_back(DecodedRecord{header.base, header.timestamp_ms, header.producer,
                                    std::string(payload.substr(0, header.key_length)),
                                    std::string(payload.substr(header.key_length))});
        return Status::ok();
    }
    NARAD_ASSIGN_OR_RETURN(std::string body, decompress(header, payload));
    size_t before = out.size();
    Status status = parse_batch_body(header, body, &out, nullptr);
    if (!status.is_ok()) out.resize(before);
    return status;
}

Status frame_stamps(const FrameHeader& header, std::string_view payload,
                    std::vector<ProducerStamp>& out) {
    if (header.codec == Codec::none) {
        out.push_back(header.producer);
        return Status::ok();
    }
    NARAD_ASSIGN_OR_RETURN(std::string body, decompress(header, payload));
    size_t before = out.size();
    Status status = parse_batch_body(header, body, nullptr, &out);
    if (!status.is_ok()) out.resize(before);
    return status;
}

Status encode_records(std::span<const Record> records, Codec codec, int compression_level,
                      EncodedBatch& out) {
    for (const Record& record : records) {
        if (record.key.size() + record.value.size() > kRecordBytesMax) {
            return Status(Errc::payload_too_large, "a record's key and value exceed 8 MiB");
        }
    }
    if (codec == Codec::none) {
        for (const Record& record : records) {
            size_t length = kFrameHeaderBytes + record.key.size() + record.value.size();
            out.frames.push_back({static_cast<uint32_t>(out.bytes.size()), 1});
            put_header(out.bytes, static_cast<uint32_t>(length), record.timestamp_ms,
                       record.producer, 1, static_cast<uint32_t>(record.key.size()),
                       static_cast<uint32_t>(record.value.size()), kFlagCodecNone);
            out.bytes.append(record.key);
            out.bytes.append(record.value);
        }
    } else {
        size_t start = 0;
        while (start < records.size()) {
            size_t end = start;
            size_t body = 0;
            while (end < records.size()) {
                size_t next =
                    kBatchRecordOverheadBytes + records[end].key.size() + records[end].value.size();
                if (end > start &&
                    (body + next > kBatchBodyBytesTarget || end - start >= kBatchRecordsMax)) {
                    break;
                }
                body += next;
                ++end;
            }
            NARAD_RETURN_IF_ERROR(
                encode_zstd_frame(records.subspan(start, end - start), compression_level, out));
            start = end;
        }
    }
    out.records += static_cast<uint32_t>(records.size());
    return Status::ok();
}

void assign_offsets(EncodedBatch& batch, Offset first) {
    Offset next = first;
    for (const auto& frame : batch.frames) {
        char* p = batch.bytes.data() + frame.position;
        store_u64(p + kFrameBaseOffsetAt, next.value());
        seal_frame_checksum(p);
        next = next + frame.records;
    }
}

}  // namespace narad::storage
