// The constants of the on-disk frame, index and producers formats (docs/formats/frame.md and
// docs/formats/segment.md), in one place so the encoder, the decoder and the docs agree. Plain
// constants, no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace narad::storage {

// ---- Frame (docs/formats/frame.md) ----
inline constexpr std::string_view kFrameMagic = "NRF";  // 3 bytes, then the version byte
inline constexpr uint8_t kFrameVersion = 1;
inline constexpr size_t kFrameHeaderBytes = 64;
// The checksum covers every byte after the checksum field: [kFrameChecksumEnd, length).
inline constexpr size_t kFrameChecksumEnd = 16;

// Field positions inside the header.
inline constexpr size_t kFrameLengthAt = 4;
inline constexpr size_t kFrameChecksumAt = 8;
inline constexpr size_t kFrameBaseOffsetAt = 16;
inline constexpr size_t kFrameTimestampAt = 24;
inline constexpr size_t kFrameIngressAt = 32;
inline constexpr size_t kFrameSequenceAt = 40;
inline constexpr size_t kFrameRecordCountAt = 48;
inline constexpr size_t kFrameKeyLengthAt = 52;
inline constexpr size_t kFrameValueLengthAt = 56;
inline constexpr size_t kFrameFlagsAt = 60;
inline constexpr size_t kFrameReservedAt = 61;  // 3 bytes, zero

// flags: bits 0-1 the codec, the other bits must be zero.
inline constexpr uint8_t kFlagCodecMask = 0x03;
inline constexpr uint8_t kFlagCodecNone = 0;
inline constexpr uint8_t kFlagCodecZstd = 1;

// Limits. A record's key plus value may not exceed kRecordBytesMax (the HTTP body cap is 1 MiB, so
// this leaves room); a zstd batch gathers records up to kBatchBodyBytesTarget uncompressed (one
// larger record goes alone); no frame may exceed kFrameBytesMax, which is what bounds a length
// read from a damaged header before its checksum is checked.
inline constexpr uint32_t kRecordBytesMax = 8u << 20;
inline constexpr uint32_t kBatchBodyBytesTarget = 1u << 20;
inline constexpr size_t kBatchRecordOverheadBytes = 32;  // ts, ingress, sequence, two lengths
inline constexpr uint32_t kBatchBodyBytesMax = kRecordBytesMax + kBatchBodyBytesTarget;
inline constexpr uint32_t kBatchRecordsMax = 1u << 16;
inline constexpr uint32_t kFrameBytesMax = 16u << 20;

// ---- Offset index (docs/formats/segment.md) ----
inline constexpr std::string_view kIndexMagic = "NRX";  // then the version byte
inline constexpr uint8_t kIndexVersion = 1;
inline constexpr size_t kIndexHeaderBytes = 32;

// ---- Producers sidecar (docs/formats/segment.md) ----
inline constexpr std::string_view kProducersMagic = "NRP";  // then the version byte
inline constexpr uint8_t kProducersVersion = 1;
inline constexpr size_t kProducersHeaderBytes = 24;
inline constexpr size_t kProducersEntryBytes = 16;
// At most this many ingress WALs are remembered per partition; the least recently committed one is
// dropped beyond it (its retries would then no longer be recognised as duplicates).
inline constexpr uint32_t kProducersMax = 4096;

// ---- Segment files ----
inline constexpr std::string_view kLogSuffix = ".log";
inline constexpr std::string_view kIndexSuffix = ".index";
inline constexpr std::string_view kProducersFileName = "producers";
inline constexpr size_t kSegmentNameDigits = 20;

// Bounds of a segment and of an append. Index positions are u32, so a segment must stay below
// 4 GiB: segment_bytes_max is at most kSegmentBytesMaxLimit and one commit group adds at most
// kAppendBytesMax (plus frame headers) past it. A segment also rolls before it would hold more than
// kSegmentRecordsMax offsets, which bounds the in-memory index of the active segment (4 bytes per
// offset) even when zstd packs many tiny records into few bytes.
inline constexpr uint64_t kSegmentBytesMaxLimit = 1ull << 30;
inline constexpr uint64_t kSegmentRecordsMax = 1ull << 24;
inline constexpr size_t kAppendRecordsMax = 1u << 20;
inline constexpr uint64_t kAppendBytesMax = 64ull << 20;  // keys and values of one append

}  // namespace narad::storage
