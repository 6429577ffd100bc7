// PartitionLog: one partition's durable, append-only log of records, addressed by dense offsets.
//
// On disk it is a directory of segment files named by their base offset (docs/formats/segment.md),
// each a sequence of checksummed frames (docs/formats/frame.md), with an offset index per segment
// so a read at any offset costs one seek; the active (last) segment rolls at `segment_bytes_max`.
//
// Durability: append() writes its frames, fdatasyncs, reads them back to check them, asks
// LogOptions::before_publish, and only then advances the high watermark (HWM, the offset after the
// last durable record). Concurrent appends
// share one fdatasync (group commit: the first waiting appender writes and syncs for everyone
// queued behind it). A failed append truncates its frames and leaves the log exactly as it was.
// Reads never return a record at or past the HWM.
//
// Recovery (open): the active segment is scanned; a torn or corrupt tail is cut (logged with the
// bytes cut) and the HWM is the offset after the last good frame. A corrupt frame inside a sealed
// segment is not fatal: it is reported by read() in `corrupt` so the consumer skips it, and
// counted.
//
// Thread-safety: all methods may be called from any thread concurrently. append() blocks on disk
// I/O, so it must not run on the HTTP threads.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "io/file_system.h"
#include "storage/record.h"

namespace narad::storage {

enum class Codec { none, zstd };

struct LogOptions {
    uint64_t segment_bytes_max = 64ull << 20;
    Codec codec = Codec::none;
    int compression_level = 1;  // zstd level when codec is zstd
    // Sealed segments kept open with their offset index loaded (an LRU cache per log). A segment
    // enters it when read, or when it seals if the log was read since the previous seal: a log
    // nobody reads (a backlog) holds none, however many segments it seals.
    uint32_t sealed_segments_cached = 8;
    // The {topic, partition} labels of this log's metrics (set by the LogManager).
    std::string metrics_topic;
    std::string metrics_partition;
    // Asked after a commit's fdatasync, before the high watermark advances: a failure rolls the
    // commit back (its frames truncated, nothing made visible) and fails it with that status. The
    // owner's self-fence (docs/moves.md): a node whose liveness lease lapsed while it synced
    // acknowledges nothing.
    std::function<Status()> before_publish;
};

struct AppendResult {
    Offset first;             // offset given to the first appended record (= HWM before)
    uint32_t appended = 0;    // records appended
    uint32_t duplicates = 0;  // records skipped because their producer stamp was committed
    Offset high_watermark;    // HWM after this append
};

struct ReadResult {
    std::vector<StoredRecord> records;  // in offset order, all below the HWM
    std::vector<Offset> corrupt;  // offsets in the range read whose frames failed their checksum
    Offset next;                  // where the next read should start
};

struct SegmentInfo {
    Offset base;
    uint64_t size_bytes = 0;  // committed bytes only (the active segment up to the HWM)
    bool sealed = false;
    WallTime modified;
};

struct LogStats {
    uint32_t segments = 0;
    Offset oldest_offset;  // first offset still retained
    Offset high_watermark;
    uint64_t size_bytes = 0;
    WallTime oldest_segment_at;  // modification time of the oldest segment
    uint64_t corrupt_frames_seen = 0;
    uint32_t sealed_segments_cached = 0;  // sealed segments held open with their index loaded
};

struct RecoveryReport {
    Offset high_watermark;
    uint64_t tail_bytes_cut = 0;   // torn/corrupt bytes removed from the active segment
    uint32_t indexes_rebuilt = 0;  // segment indexes that were missing or damaged
    uint32_t corrupt_frames = 0;   // corrupt frames found in sealed segments while rebuilding
};

struct RetentionResult {
    uint32_t segments_deleted = 0;
    uint64_t bytes_deleted = 0;
    uint64_t records_deleted = 0;
};

class PartitionLog {
  public:
    // Opens the log in `directory` (created if missing), recovering it as described above.
    static Result<std::unique_ptr<PartitionLog>> open(io::FileSystem& fs, Clock& clock,
                                                      std::string directory, LogOptions options,
                                                      RecoveryReport* report = nullptr);
    virtual ~PartitionLog() = default;

    // Appends the records as one atomic batch (see the file comment). Records whose producer stamp
    // is already committed are skipped and counted in `duplicates`.
    virtual Result<AppendResult> append(std::span<const Record> records) = 0;

    // Reads records starting at `from`, stopping after `max_records` records or once `max_bytes` of
    // values and keys are gathered (at least one record is returned if any is available). A read at
    // or past the HWM returns nothing with next = from. A read below the oldest retained offset
    // fails with Errc::gone.
    virtual Result<ReadResult> read(Offset from, size_t max_records, size_t max_bytes) = 0;

    virtual Offset high_watermark() const = 0;
    virtual Offset oldest_offset() const = 0;
    virtual LogStats stats() const = 0;
    virtual std::vector<SegmentInfo> segments() const = 0;

    // Deletes whole sealed segments whose modification time is older than now - retention. The
    // active segment is never deleted.
    virtual Result<RetentionResult> enforce_retention(Millis retention) = 0;

    // Called after each successful append with the new HWM (outside the log's locks).
    virtual void set_append_listener(std::function<void(Offset)> listener) = 0;

    // The highest sequence committed per ingress WAL, for tests and the transfer of a partition.
    virtual WalSeq committed_sequence(IngressId ingress) const = 0;

    // Flushes what is cached (sealed indexes, dedup state) and closes the files. The log must not
    // be used afterwards.
    virtual Status close() = 0;

    virtual const std::string& directory() const = 0;
};

}  // namespace narad::storage
