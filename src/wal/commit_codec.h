// The body of a node-to-node commit (POST /internal/v1/commit, docs/formats/commit-rpc.md): one
// batch of records for one partition, each with its producer stamp, so the owner deduplicates a
// retried batch exactly as it would a local one. Little-endian, checksummed with XXH3 over
// everything before the checksum, and strictly bounded: a body that is short, long, has trailing
// bytes, a wrong magic/version/checksum, or lengths past the limits is refused whole.
// Pure functions, any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "storage/record.h"

namespace narad::wal::commit_codec {

inline constexpr std::string_view kMagic = "NRCB";
inline constexpr uint16_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 4 + 2 + 2 + 4;           // magic, version, flags, count
inline constexpr size_t kRecordFixedBytes = 4 + 4 + 8 + 8 + 8;  // lengths, time, stamp
inline constexpr size_t kTrailerBytes = 8;                      // checksum
inline constexpr uint32_t kMaxRecords = 100'000;
inline constexpr uint64_t kMaxRecordPayloadBytes = 64ull << 20;  // key + value, as the WAL
inline constexpr uint64_t kMaxBodyBytes = 64ull << 20;

// The encoded size of `records` (to check against kMaxBodyBytes before encoding).
uint64_t encoded_size(std::span<const storage::Record> records);
// invalid_argument when the batch is empty or past a limit.
Result<std::string> encode(std::span<const storage::Record> records);
// The records, whose key/value views point into `body` (keep it alive while they are used).
// invalid_argument naming the first problem.
Result<std::vector<storage::Record>> decode(std::string_view body);

}  // namespace narad::wal::commit_codec
