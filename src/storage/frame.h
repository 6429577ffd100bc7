// The frame codec (docs/formats/frame.md): encodes records into checksummed frames and decodes
// frames back, rejecting anything torn or damaged. A plain frame holds one record; a zstd frame
// holds a batch of consecutive records, compressed together, each with its own producer stamp.
// Pure functions over buffers (zstd contexts are per thread), callable from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "storage/frame_format.h"
#include "storage/partition_log.h"
#include "storage/record.h"

namespace narad::storage {

struct FrameHeader {
    uint32_t length = 0;  // whole frame, header included
    uint64_t checksum = 0;
    Offset base;
    int64_t timestamp_ms = 0;
    ProducerStamp producer;
    uint32_t record_count = 0;
    uint32_t key_length = 0;    // zstd: the uncompressed batch body length
    uint32_t value_length = 0;  // zstd: the compressed payload length
    Codec codec = Codec::none;

    Offset end() const { return base + record_count; }
};

enum class FrameCheck {
    ok,         // the frame is whole, its checksum and fields verify
    need_more,  // the header looks sane but the buffer holds fewer than `needed` bytes
    bad,  // not a frame: wrong magic or version, length out of bounds, checksum or fields wrong
};

struct FrameDecode {
    FrameCheck check = FrameCheck::bad;
    size_t needed = 0;  // need_more: bytes the whole frame (or its header) takes
    FrameHeader header;
    std::string_view payload;  // ok: the bytes after the header
};

// Decodes the frame at the start of `bytes` (which may hold more after it).
FrameDecode decode_frame(std::string_view bytes);

// A record decoded from a frame.
struct DecodedRecord {
    Offset offset;
    int64_t timestamp_ms = 0;
    ProducerStamp producer;
    std::string key;
    std::string value;
};

// The records of a verified frame (decode_frame returned ok), decompressing a batch. Fails with
// corrupt if the payload does not decode to exactly `record_count` well-formed records.
Status unpack_frame(const FrameHeader& header, std::string_view payload,
                    std::vector<DecodedRecord>& out);

// The producer stamps of a verified frame's records, in offset order (decompresses a batch).
Status frame_stamps(const FrameHeader& header, std::string_view payload,
                    std::vector<ProducerStamp>& out);

// Frames for some records, encoded back to back, before their offsets are known: an appender
// encodes (and compresses) outside the log's locks, and the group-commit leader stamps the offsets.
struct EncodedBatch {
    struct Frame {
        uint32_t position = 0;  // within `bytes`
        uint32_t records = 0;
    };
    std::string bytes;
    std::vector<Frame> frames;
    uint32_t records = 0;
};

// Appends the frames for `records` to `out` (one per record with Codec::none; zstd batches of up to
// kBatchBodyBytesTarget uncompressed bytes with Codec::zstd). Offsets are left zero.
Status encode_records(std::span<const Record> records, Codec codec, int compression_level,
                      EncodedBatch& out);

// Stamps the frames with their offsets, the first getting `first`, and seals their checksums.
void assign_offsets(EncodedBatch& batch, Offset first);

// Recomputes the checksum of the whole frame at `frame` (its length field must be set).
void seal_frame_checksum(char* frame);

}  // namespace narad::storage
