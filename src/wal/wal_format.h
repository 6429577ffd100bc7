// The ingress WAL's on-disk encoding (docs/formats/wal.md, version 1): the `id` file, the segment
// header and the record frame, plus segment file names. Pure functions over bytes, any thread; the
// files themselves are read and written by ingress_wal.cc and wal_recovery.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/ids.h"
#include "base/status.h"
#include "wal/ingress_wal.h"

namespace narad::wal::format {

inline constexpr uint32_t kVersion = 1;
inline constexpr std::string_view kIdMagic = "NRDWALID";
inline constexpr std::string_view kSegmentMagic = "NRDWALSG";
inline constexpr size_t kIdFileBytes = 28;
inline constexpr size_t kSegmentHeaderBytes = 28;
// length (u32) + checksum (u64), in front of every record body.
inline constexpr size_t kFramePrefixBytes = 12;
// sequence, timestamp, partition and the four length fields.
inline constexpr size_t kBodyFixedBytes = 8 + 8 + 4 + 2 + 2 + 4 + 4;
// The smallest possible record: recovery uses it to bound how many sequences a cut tail could hold.
inline constexpr size_t kMinFrameBytes = kFramePrefixBytes + kBodyFixedBytes;
inline constexpr size_t kMaxNameBytes = 65535;             // topic and incarnation (u16 length)
inline constexpr uint64_t kMaxPayloadBytes = 64ull << 20;  // key + value of one record
inline constexpr uint64_t kMaxBodyBytes = kBodyFixedBytes + 2 * kMaxNameBytes + kMaxPayloadBytes;

std::string encode_id_file(IngressId id);
// Errc::corrupt unless the bytes are a valid version-1 id file with a non-zero id.
Result<IngressId> decode_id_file(std::string_view bytes);

std::string encode_segment_header(WalSeq first);
// Errc::corrupt unless the bytes start with a valid version-1 header; returns its first sequence.
Result<WalSeq> decode_segment_header(std::string_view bytes);

// invalid_argument if the record cannot be framed (a name or payload over its limit).
Status check_limits(const IngressRecord& record);
// The bytes the record's frame takes on disk (prefix included).
uint64_t frame_bytes(const IngressRecord& record);
// Appends the record's frame (prefix included) to `out`. The record must pass check_limits.
void append_frame(std::string& out, const IngressRecord& record);

struct FramePrefix {
    uint32_t body_bytes = 0;
    uint64_t checksum = 0;
};
FramePrefix decode_prefix(const char* bytes);  // reads kFramePrefixBytes
// Decodes a body read after `prefix`; Errc::corrupt if the checksum or the field lengths are wrong.
Result<IngressRecord> decode_body(std::string_view body, const FramePrefix& prefix);

// "00000000000000000042.wal" for sequence 42.
std::string segment_file_name(WalSeq first);
// The first sequence a segment file name encodes, or nothing if the name is not a segment's.
std::optional<WalSeq> parse_segment_file_name(std::string_view name);

}  // namespace narad::wal::format
