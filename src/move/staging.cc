#include "move/staging.h"

#include <future>
#include <thread>

#include "base/failpoint.h"
#include "base/log.h"
#include "base/names.h"
#include "fanout/cursor_file.h"
#include "move/quarantine.h"
#include "queue/consumer_offset_file.h"
#include "storage/frame_format.h"
#include "storage/partition_log.h"
#include "storage/segment_scan.h"

namespace narad::move {
namespace {

constexpr Millis kFutureTolerance{3'600'000};

std::string file_of(const std::string& directory, Offset base, ChunkKind kind) {
    return io::join_path(directory, kind == ChunkKind::log ? storage::segment_log_name(base)
                                                           : storage::segment_index_name(base));
}

Status sync_file(io::FileSystem& fs, const std::string& path) {
    NARAD_ASSIGN_OR_RETURN(auto file, fs.open(path, io::kReadWrite));
    return file->sync();
}

constexpr const char* kStagingMetaFile = "staging.meta";
constexpr std::string_view kStagingMagic = "narad-staging 1";

std::string staging_meta(const IncarnationId& incarnation, const NodeId& source) {
    return std::string(kStagingMagic) + "\nincarnation " + incarnation.value() + "\nsource " +
           source.value() + "\n";
}

}  // namespace

StagedCopy::StagedCopy(io::FileSystem& fs, Clock& clock, std::string directory, CopyLimits limits)
    : fs_(fs), clock_(clock), directory_(std::move(directory)), limits_(limits) {}

Status StagedCopy::reset(const IncarnationId& incarnation, const NodeId& source) {
    incarnation_ = incarnation;
    source_ = source;
    staged_.clear();
    if (fs_.exists(directory_)) NARAD_RETURN_IF_ERROR(fs_.remove_all(directory_));
    NARAD_RETURN_IF_ERROR(fs_.create_directories(directory_));
    NARAD_RETURN_IF_ERROR(io::write_file_atomically(
        fs_, io::join_path(directory_, kStagingMetaFile), staging_meta(incarnation, source)));
    return fs_.sync_directory(io::parent_path(directory_));
}

Result<uint64_t> StagedCopy::resume(const IncarnationId& incarnation, const NodeId& source) {
    auto meta = io::read_file(fs_, io::join_path(directory_, kStagingMetaFile));
    if (!meta.is_ok() || *meta != staging_meta(incarnation, source)) {
        NARAD_RETURN_IF_ERROR(reset(incarnation, source));
        return uint64_t{0};
    }
    incarnation_ = incarnation;
    source_ = source;
    staged_.clear();
    NARAD_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_.list_directory(directory_));
    uint64_t kept = 0;
    for (const std::string& name : names) {
        std::string path = io::join_path(directory_, name);
        Offset base;
        if (name == kStagingMetaFile) continue;
        if (!storage::parse_segment_name(name, storage::kLogSuffix, base)) {
            // Indexes, the dedup sidecar, the position and the marker are made again.
            NARAD_RETURN_IF_ERROR(fs_.remove_all(path));
            continue;
        }
        // A chunk may have been cut anywhere, and a crash may leave unsynced bytes: keep the
        // whole frames only (the copy is byte for byte the source's, so its frames are too).
        NARAD_ASSIGN_OR_RETURN(auto file, fs_.open(path, io::kReadWrite));
        auto scan = storage::scan_active_segment(*file, base, nullptr);
        if (!scan.is_ok()) {
            NARAD_RETURN_IF_ERROR(reset(incarnation, source));
            return uint64_t{0};
        }
        NARAD_ASSIGN_OR_RETURN(uint64_t size, file->size());
        if (size != scan->good_bytes) {
            NARAD_RETURN_IF_ERROR(file->truncate(scan->good_bytes));
            NARAD_RETURN_IF_ERROR(file->sync());
        }
        staged_[base] = Staged{scan->good_bytes, 0, false};
        kept += scan->good_bytes;
    }
    return kept;
}

uint64_t StagedCopy::staged_bytes() const {
    uint64_t total = 0;
    for (const auto& [base, staged] : staged_) total += staged.size + staged.index_size;
    return total;
}

void StagedCopy::throttle(uint64_t bytes) {
    if (limits_.bytes_per_second == 0) return;
    if (throttled_bytes_ == 0) throttle_start_ = clock_.now();
    throttled_bytes_ += bytes;
    auto due =
        throttle_start_ +
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(
            static_cast<double>(throttled_bytes_) / static_cast<double>(limits_.bytes_per_second)));
    auto ahead = due - clock_.now();
    if (ahead > std::chrono::nanoseconds(0)) clock_.sleep_for(ahead);
}

Result<uint64_t> StagedCopy::fetch(SourceClient& source, const NodeId& node,
                                   const std::string& topic, PartitionId partition, Offset base,
                                   ChunkKind kind, uint64_t& staged, uint64_t to,
                                   const std::function<bool()>& cancelled,
                                   const std::function<void(uint64_t)>& on_bytes) {
    uint64_t from = staged;
    if (from >= to) return uint64_t{0};
    NARAD_ASSIGN_OR_RETURN(auto file, fs_.open(file_of(directory_, base, kind), io::kCreate));
    // The next chunk is on its way while this one is written: the network and the disk overlap.
    auto request = [&](uint64_t at) {
        uint64_t want = std::min(limits_.chunk_bytes, to - at);
        return std::async(
            std::launch::async, [&source, &node, &topic, partition, base, kind, at, want] {
                return source.read_chunk(node, topic, partition, base, kind, at, want);
            });
    };
    uint64_t at = from;
    auto pending = request(at);
    while (at < to) {
        uint64_t want = std::min(limits_.chunk_bytes, to - at);
        Result<std::string> chunk = pending.get();
        if (!chunk.is_ok()) return chunk.status();
        if (chunk->empty() || chunk->size() > want) {
            return Status(
                Errc::unavailable,
                fmt::format("segment {} is shorter at the source than it listed", base.value()));
        }
        uint64_t next = at + chunk->size();
        if (next < to && !cancelled()) pending = request(next);
        NARAD_RETURN_IF_ERROR(file->write_at(at, *chunk));
        staged = next;  // kept across a failed pass: the next attempt resumes here
        on_bytes(chunk->size());
        throttle(chunk->size());
        at = next;
        if (cancelled()) {
            if (pending.valid()) (void)pending.get();
            return Status(Errc::shutting_down, "move cancelled");
        }
    }
    return to - from;
}

Result<uint64_t> StagedCopy::pass(SourceClient& source, const NodeId& node,
                                  const std::string& topic, PartitionId partition,
                                  const TransferListing& listing,
                                  const std::function<bool()>& cancelled,
                                  const std::function<void(uint64_t)>& on_bytes) {
    uint64_t copied = 0;
    // Segments the source no longer lists were deleted by its retention.
    for (auto it = staged_.begin(); it != staged_.end();) {
        bool listed = std::any_of(listing.segments.begin(), listing.segments.end(),
                                  [&](const SegmentListing& s) { return s.base == it->first; });
        if (listed) {
            ++it;
            continue;
        }
        (void)fs_.remove(file_of(directory_, it->first, ChunkKind::log));
        (void)fs_.remove(file_of(directory_, it->first, ChunkKind::index));
        it = staged_.erase(it);
    }
    for (const SegmentListing& segment : listing.segments) {
        Staged& staged = staged_[segment.base];
        if (staged.size > segment.size_bytes) {
            // Never keep more than the source vouches for.
            NARAD_ASSIGN_OR_RETURN(
                auto file,
                fs_.open(file_of(directory_, segment.base, ChunkKind::log), io::kCreate));
            NARAD_RETURN_IF_ERROR(file->truncate(segment.size_bytes));
            staged.size = segment.size_bytes;
            staged.complete = false;
        }
        NARAD_ASSIGN_OR_RETURN(uint64_t got,
                               fetch(source, node, topic, partition, segment.base, ChunkKind::log,
                                     staged.size, segment.size_bytes, cancelled, on_bytes));
        copied += got;
        if (segment.sealed && !staged.complete) {
            staged.index_size = 0;  // an index is fetched whole, once its segment is sealed
            NARAD_ASSIGN_OR_RETURN(
                uint64_t index,
                fetch(source, node, topic, partition, segment.base, ChunkKind::index,
                      staged.index_size, segment.index_bytes, cancelled, on_bytes));
            copied += index;
            NARAD_RETURN_IF_ERROR(
                sync_file(fs_, file_of(directory_, segment.base, ChunkKind::log)));
            if (index > 0) {
                NARAD_RETURN_IF_ERROR(
                    sync_file(fs_, file_of(directory_, segment.base, ChunkKind::index)));
            }
            staged.complete = true;
        } else if (!segment.sealed && got > 0) {
            // Synced now, so the freeze only waits for the last tail's sync.
            NARAD_RETURN_IF_ERROR(
                sync_file(fs_, file_of(directory_, segment.base, ChunkKind::log)));
        }
    }
    return copied;
}

Result<Offset> StagedCopy::open_and_close() {
    storage::RecoveryReport report;
    auto log = storage::PartitionLog::open(fs_, clock_, directory_, storage::LogOptions{}, &report);
    if (!log.is_ok()) return log.status();
    Offset recovered = (*log)->high_watermark();
    NARAD_RETURN_IF_ERROR((*log)->close());
    return recovered;
}

Status StagedCopy::warm_up() { return open_and_close().status(); }

Result<Offset> StagedCopy::recovered_end() {
    auto recovered = open_and_close();
    if (!recovered.is_ok()) {
        return Status(Errc::corrupt, "the staged copy does not open: " +
                                         std::string(recovered.status().message()));
    }
    return *recovered;
}

Status StagedCopy::verify(Offset hwm) {
    NARAD_FAILPOINT_RETURN("move.verify");
    NARAD_ASSIGN_OR_RETURN(Offset recovered, recovered_end());
    if (recovered != hwm) {
        return Status(Errc::corrupt, fmt::format("the staged copy recovers to offset {}, not the "
                                                 "source's high watermark {}",
                                                 recovered.value(), hwm.value()));
    }
    return Status::ok();
}

Result<bool> StagedCopy::finish(const TransferListing& listing, WallTime listed_at,
                                const MoveMarker& marker) {
    // The position never runs past the copy: frontier at most the HWM, acked-ahead below it.
    queue::ConsumerPosition position;
    bool clamped = listing.frontier > listing.high_watermark;
    position.frontier = clamped ? listing.high_watermark : listing.frontier;
    for (Offset acked : listing.acked_ahead) {
        if (acked >= position.frontier && acked < listing.high_watermark) {
            position.acked_ahead.push_back(acked);
        }
    }
    NARAD_RETURN_IF_ERROR(queue::write_consumer_position(
        fs_, io::join_path(directory_, queue::kConsumerOffsetFile), position));
    // The fan-out cursors go in last, after the final pass: each is checked again, and lowered to
    // the copy's high watermark if it ran past it. One that does not verify is left out, and the
    // marker's link rule resumes it from the oldest offset.
    for (const CursorSidecar& sidecar : listing.cursors) {
        if (!validate_topic_name(sidecar.child).is_ok()) {
            NARAD_LOG_WARN(
                "move: a fan-out cursor for a child with an invalid name arrived; "
                "left out");
            continue;
        }
        std::string name = fanout::cursor_file_name(sidecar.child);
        auto cursor = fanout::decode_cursor(sidecar.bytes, name);
        if (!cursor.is_ok()) {
            NARAD_LOG_WARN("move: the fan-out cursor for child {} arrived damaged; left out",
                           sidecar.child);
            continue;
        }
        cursor->next = std::min(cursor->next, listing.high_watermark);
        NARAD_RETURN_IF_ERROR(fanout::write_cursor(fs_, io::join_path(directory_, name), *cursor));
    }
    // Every file is synced before the marker says the copy is durable.
    NARAD_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_.list_directory(directory_));
    for (const std::string& name : names) {
        if (name == kMoveMarkerFile) continue;
        NARAD_RETURN_IF_ERROR(sync_file(fs_, io::join_path(directory_, name)));
    }
    // Retention judges a segment by its file's time: keep the age it had at the source.
    for (const SegmentListing& segment : listing.segments) {
        if (listing.source_clock_ns == 0 || segment.modified_ns == 0) continue;
        auto age = std::chrono::nanoseconds(listing.source_clock_ns - segment.modified_ns);
        if (age < -kFutureTolerance) continue;
        if (age < std::chrono::nanoseconds(0)) age = std::chrono::nanoseconds(0);
        auto when = listed_at - std::chrono::duration_cast<WallTime::duration>(age);
        (void)fs_.set_modified(file_of(directory_, segment.base, ChunkKind::log), when);
    }
    NARAD_RETURN_IF_ERROR(write_marker(fs_, directory_, marker));
    NARAD_RETURN_IF_ERROR(fs_.sync_directory(directory_));
    return clamped;
}

Status install_copy(io::FileSystem& fs, Clock& clock, const std::string& staged,
                    const std::string& partition_directory, Millis retention) {
    if (fs.exists(partition_directory)) {
        if (holds_unexpired_records(fs, clock, partition_directory, retention)) {
            NARAD_ASSIGN_OR_RETURN(
                std::string aside,
                set_aside(fs, clock, partition_directory, partition_directory + kQuarantineSuffix));
            NARAD_LOG_ERROR(
                "move: the partition's path held an earlier copy with unexpired records; "
                "quarantined instead of replaced, since it may hold records the incoming copy "
                "lacks. Operator action required (partition_dir={}, quarantine_dir={})",
                partition_directory, aside);
        } else {
            NARAD_RETURN_IF_ERROR(fs.remove_all(partition_directory));
        }
    }
    NARAD_RETURN_IF_ERROR(fs.rename(staged, partition_directory));
    NARAD_RETURN_IF_ERROR(fs.sync_directory(io::parent_path(partition_directory)));
    return fs.sync_directory(io::parent_path(staged));
}

Status uninstall_copy(io::FileSystem& fs, const std::string& partition_directory,
                      const std::string& staged) {
    if (fs.exists(staged)) NARAD_RETURN_IF_ERROR(fs.remove_all(staged));
    NARAD_RETURN_IF_ERROR(fs.rename(partition_directory, staged));
    NARAD_RETURN_IF_ERROR(fs.sync_directory(io::parent_path(partition_directory)));
    return fs.sync_directory(io::parent_path(staged));
}

}  // namespace narad::move
