// The consumer.offset file: a partition's persisted ConsumerPosition
// (docs/formats/consumer-offset.md), written with write-temp, fsync, rename, fsync-directory and a
// checksum, so a crash at any point leaves either the previous or the new position readable. Pure
// functions over the FileSystem seam.
#pragma once

#include <string>

#include "io/file_system.h"
#include "queue/partition_queue.h"

namespace narad::queue {

inline constexpr const char* kConsumerOffsetFile = "consumer.offset";

// The most acked-ahead offsets a file holds: bounds the file (8 MiB) and what a reader allocates.
// Topics cap max_acked_ahead far below this; only skip() of many corrupt frames can pass it, and
// then the writer keeps the lowest entries: the dropped ones are redelivered after a restart, which
// at-least-once allows, and none is skipped.
inline constexpr uint32_t kMaxPersistedAckedAhead = 1u << 20;

// invalid_argument if `position.acked_ahead` is not strictly increasing or has an entry below the
// frontier (a caller's bug: such a file would read back as corrupt).
Status write_consumer_position(io::FileSystem& fs, const std::string& path,
                               const ConsumerPosition& position);
// not_found when there is no file (a partition never consumed); corrupt when it fails its checksum.
Result<ConsumerPosition> read_consumer_position(io::FileSystem& fs, const std::string& path);

}  // namespace narad::queue
