// PartitionLogImpl: the implementation behind PartitionLog (see partition_log.h for the contract).
// Internal to storage/; its methods are spread over log_open.cc (recovery), log_append.cc (group
// commit and roll), log_read.cc (reads and the caches) and log_maintenance.cc (retention, stats,
// close).
//
// Locks, always taken in this order when nested (never two at once otherwise):
//   writer_mutex_    the queue of appenders; the writer at its front is the *leader*, the only
//                    thread that writes files, rolls segments, or changes producers_ or a segment's
//                    in-memory index (it releases writer_mutex_ while it does I/O).
//   retention_mutex_ one retention pass at a time.
//   state_mutex_     (shared) the segment list, the HWM and each segment's end/size/sealed/file.
//   Segment::index_mutex, producers_mutex_, cache_mutex_, decode_mutex_, corrupt_mutex_,
//   listener_mutex_: leaves, held briefly, nothing taken inside them.
//   index_write_mutex_: a leaf held across one index file write (lazy rebuilds may race a roll).
// The failpoint "storage.append.enqueued" runs under writer_mutex_: its hook must not call the log.
#pragma once

#include <atomic>
#include <deque>
#include <list>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "storage/frame.h"
#include "storage/partition_log.h"
#include "storage/producer_table.h"
#include "storage/segment_scan.h"
#include "storage/storage_metrics.h"

namespace narad::storage::detail {

// Appends gathered into one commit group: at most this many bytes (the first appender always
// goes) and this many appenders, so the group is written with one pwritev.
inline constexpr uint64_t kGroupBytesMax = 8ull << 20;
inline constexpr size_t kGroupWritersMax = 64;
// Decoded zstd batches kept per log, so sequential single-record reads decompress a batch once.
inline constexpr size_t kDecodeCacheBatches = 4;
// Distinct corrupt frames remembered so repeated reads of one count it once.
inline constexpr size_t kCorruptRememberedMax = 4096;

struct Segment {
    Segment(Offset base_offset, std::string log, std::string index)
        : base(base_offset), log_path(std::move(log)), index_path(std::move(index)) {}

    const Offset base;
    const std::string log_path;
    const std::string index_path;

    // Guarded by the owning log's state_mutex_ (another object's mutex, which the analysis
    // cannot name here):
    Offset end;               // the offset after its last committed record
    uint64_t size_bytes = 0;  // committed bytes (the active segment: up to the HWM)
    bool sealed = false;
    std::shared_ptr<io::File> file;  // the active segment's file; sealed ones go through the cache

    Mutex index_mutex;
    std::vector<uint32_t> positions GUARDED_BY(index_mutex);  // the active segment's index
    bool positions_live GUARDED_BY(index_mutex) = false;      // positions is the index
};

// A sealed segment opened for reading, with its index loaded.
struct SealedHandle {
    std::shared_ptr<io::File> file;
    std::vector<uint32_t> positions;
};

// What a read needs of one segment, taken under state_mutex_.
struct SegmentView {
    std::shared_ptr<Segment> segment;
    std::shared_ptr<io::File> file;
    std::shared_ptr<const SealedHandle> sealed;
    Offset end;
    uint64_t size_bytes = 0;
};

class PartitionLogImpl final : public PartitionLog {
  public:
    PartitionLogImpl(io::FileSystem& fs, Clock& clock, std::string directory, LogOptions options);
    ~PartitionLogImpl() override;

    Status recover(RecoveryReport& report);

    Result<AppendResult> append(std::span<const Record> records) override;
    Result<ReadResult> read(Offset from, size_t max_records, size_t max_bytes) override;
    Offset high_watermark() const override;
    Offset oldest_offset() const override;
    LogStats stats() const override;
    std::vector<SegmentInfo> segments() const override;
    Result<RetentionResult> enforce_retention(Millis retention) override;
    void set_append_listener(std::function<void(Offset)> listener) override;
    WalSeq committed_sequence(IngressId ingress) const override;
    Status close() override;
    const std::string& directory() const override { return directory_; }

  private:
    struct Writer;
    struct ReadState;

    // ---- log_open.cc ----
    Status prepare_directory();
    Status check_sealed_segment(Segment& segment, Offset replay_from, const FrameVisitor& visitor,
                                RecoveryReport& report);
    Status recover_active_segment(Segment& segment, const FrameVisitor& visitor,
                                  RecoveryReport& report);
    Status rebuild_producers() REQUIRES(state_mutex_);
    FrameVisitor replay_visitor(Offset replay_from);
    Result<std::shared_ptr<Segment>> create_segment(Offset base);

    // ---- log_append.cc ----
    std::vector<Writer*> take_group() REQUIRES(writer_mutex_);
    Offset commit_group(const std::vector<Writer*>& group);
    void filter_duplicates(const std::vector<Writer*>& group);
    Status write_sync_verify(io::File& file, uint64_t position,
                             std::span<const std::string_view> parts, uint64_t bytes);
    void roll_back(io::File& file, uint64_t size, const Status& cause);
    Status roll(const std::shared_ptr<Segment>& active, Offset next_base);
    void fail_group(const std::vector<Writer*>& group, const Status& status);

    // ---- log_read.cc ----
    Result<bool> read_segment(SegmentView& view, ReadState& state);
    Result<uint32_t> lookup(SegmentView& view, Offset offset);
    Result<std::shared_ptr<const SealedHandle>> sealed_handle(
        const std::shared_ptr<Segment>& segment);
    std::shared_ptr<const std::vector<DecodedRecord>> cached_batch(Offset base, uint32_t position);
    void cache_batch(Offset base, uint32_t position,
                     std::shared_ptr<const std::vector<DecodedRecord>> records);
    void note_corrupt(Offset segment_base, uint32_t position);
    Status write_index(const Segment& segment, uint64_t segment_bytes,
                       std::span<const uint32_t> positions);

    // ---- log_maintenance.cc ----
    void forget_segments(const std::vector<Offset>& bases);

    io::FileSystem& fs_;
    Clock& clock_;
    const std::string directory_;
    const LogOptions options_;
    StorageMetrics& metrics_;
    LogMetrics log_metrics_;
    const std::string producers_path_;

    Mutex writer_mutex_;
    CondVar writers_idle_;
    std::deque<Writer*> writers_ GUARDED_BY(writer_mutex_);
    bool closing_ GUARDED_BY(writer_mutex_) = false;
    // Set when a failed commit could not be truncated away: the file may hold bytes past the HWM
    // that no one vouches for, so the log refuses appends until it is reopened (recovery cuts
    // them).
    std::atomic<bool> failed_{false};

    Mutex retention_mutex_;

    mutable SharedMutex state_mutex_;
    std::vector<std::shared_ptr<Segment>> segments_ GUARDED_BY(state_mutex_);  // oldest first
    Offset high_watermark_ GUARDED_BY(state_mutex_);
    bool closed_ GUARDED_BY(state_mutex_) = false;

    mutable Mutex producers_mutex_;
    ProducerTable producers_ GUARDED_BY(producers_mutex_);  // changed by the leader only

    mutable Mutex cache_mutex_;
    // Most recently used first.
    std::list<std::pair<Offset, std::shared_ptr<const SealedHandle>>> sealed_cache_
        GUARDED_BY(cache_mutex_);
    // Set by every read, cleared by every seal: whether the segment being sealed is worth caching.
    std::atomic<bool> read_since_seal_{false};
    Mutex index_write_mutex_;  // one index file write at a time (lazy rebuilds race)

    struct CachedBatch {
        Offset segment_base;
        uint32_t position;
        std::shared_ptr<const std::vector<DecodedRecord>> records;
    };
    Mutex decode_mutex_;
    std::list<CachedBatch> decode_cache_ GUARDED_BY(decode_mutex_);  // most recent first

    mutable Mutex corrupt_mutex_;
    std::set<std::pair<uint64_t, uint32_t>> corrupt_seen_ GUARDED_BY(corrupt_mutex_);
    uint64_t corrupt_frames_seen_ GUARDED_BY(corrupt_mutex_) = 0;

    Mutex listener_mutex_;
    std::function<void(Offset)> listener_ GUARDED_BY(listener_mutex_);

    std::atomic<bool> counted_open_{false};  // counted in narad_open_partition_logs
};

}  // namespace narad::storage::detail
