// PartitionLog::open and recovery (see the "Recovery" paragraph of partition_log.h).
#include <zstd.h>

#include <set>

#include "base/log.h"
#include "base/mutex.h"
#include "storage/log_impl.h"
#include "storage/offset_index.h"

namespace narad::storage {

Result<std::unique_ptr<PartitionLog>> PartitionLog::open(io::FileSystem& fs, Clock& clock,
                                                         std::string directory, LogOptions options,
                                                         RecoveryReport* report) {
    if (options.segment_bytes_max == 0 || options.segment_bytes_max > kSegmentBytesMaxLimit) {
        return Status(Errc::invalid_argument, "segment_bytes_max must be in [1, 1 GiB]");
    }
    if (options.codec == Codec::zstd && (options.compression_level < ZSTD_minCLevel() ||
                                         options.compression_level > ZSTD_maxCLevel())) {
        return Status(Errc::invalid_argument, "compression_level out of zstd's range");
    }
    if (options.sealed_segments_cached == 0 || options.sealed_segments_cached > 1024) {
        return Status(Errc::invalid_argument, "sealed_segments_cached must be in [1, 1024]");
    }
    auto log = std::make_unique<detail::PartitionLogImpl>(fs, clock, std::move(directory), options);
    RecoveryReport local;
    Status status = log->recover(local);
    if (!status.is_ok()) return status.with_context("opening partition log " + log->directory());
    if (report != nullptr) *report = local;
    return std::unique_ptr<PartitionLog>(std::move(log));
}

namespace detail {

PartitionLogImpl::PartitionLogImpl(io::FileSystem& fs, Clock& clock, std::string directory,
                                   LogOptions options)
    : fs_(fs),
      clock_(clock),
      directory_(std::move(directory)),
      options_(options),
      metrics_(storage_metrics()),
      log_metrics_({options.metrics_topic, options.metrics_partition}),
      producers_path_(io::join_path(directory_, kProducersFileName)) {}

PartitionLogImpl::~PartitionLogImpl() {
    // No flushing here: dropping a log without close() is like a crash, which recovery handles.
    if (counted_open_.exchange(false)) metrics_.open_logs.add(-1);
}

Status PartitionLogImpl::prepare_directory() {
    if (fs_.exists(directory_)) return Status::ok();
    NARAD_RETURN_IF_ERROR(fs_.create_directories(directory_));
    NARAD_RETURN_IF_ERROR(fs_.sync_directory(directory_));
    return fs_.sync_directory(io::parent_path(directory_));
}

Result<std::shared_ptr<Segment>> PartitionLogImpl::create_segment(Offset base) {
    auto segment =
        std::make_shared<Segment>(base, io::join_path(directory_, segment_log_name(base)),
                                  io::join_path(directory_, segment_index_name(base)));
    // Truncate: a file left by a failed roll under this name never held committed records (its
    // base is the HWM).
    NARAD_ASSIGN_OR_RETURN(
        auto file, fs_.open(segment->log_path,
                            io::OpenOptions{.write = true, .create = true, .truncate = true}));
    segment->file = std::move(file);
    segment->end = base;
    MutexLock lock(segment->index_mutex);  // not shared yet; the analysis checks the rule anyway
    segment->positions_live = true;
    return segment;
}

FrameVisitor PartitionLogImpl::replay_visitor(Offset replay_from) {
    return [this, replay_from](const FrameHeader& header, std::string_view payload) -> Status {
        if (header.end() <= replay_from) return Status::ok();
        std::vector<ProducerStamp> stamps;
        Status status = frame_stamps(header, payload, stamps);
        if (!status.is_ok()) {
            // The checksum verified but the batch body does not parse; reads will report these
            // offsets as corrupt, and their stamps are lost to dedup.
            NARAD_LOG_WARN("partition log {}: frame at offset {}: {}", directory_,
                           header.base.value(), status.to_string());
            return Status::ok();
        }
        MutexLock lock(producers_mutex_);
        for (size_t i = 0; i < stamps.size(); ++i) {
            if (header.base + i >= replay_from) producers_.commit(stamps[i]);
        }
        return Status::ok();
    };
}

Status PartitionLogImpl::check_sealed_segment(Segment& segment, Offset replay_from,
                                              const FrameVisitor& visitor, RecoveryReport& report) {
    NARAD_ASSIGN_OR_RETURN(io::FileInfo info, fs_.stat(segment.log_path));
    segment.size_bytes = info.size;
    segment.sealed = true;
    uint64_t expected = segment.end.distance_from(segment.base);
    bool index_ok = false;
    auto bytes = io::read_file(fs_, segment.index_path);
    if (bytes.is_ok()) {
        auto positions = decode_index(*bytes, segment.base, info.size, expected);
        index_ok = positions.is_ok();
        if (!index_ok) {
            NARAD_LOG_WARN("partition log {}: rebuilding an index: {}", directory_,
                           positions.status().message());
        }
    } else if (bytes.code() == Errc::not_found) {
        NARAD_LOG_WARN("partition log {}: index of segment {} is missing; rebuilding it",
                       directory_, segment.base.value());
    } else {
        return bytes.status();
    }
    bool replay = segment.end > replay_from;
    if (index_ok && !replay) return Status::ok();

    NARAD_ASSIGN_OR_RETURN(auto file, fs_.open(segment.log_path, io::kRead));
    NARAD_ASSIGN_OR_RETURN(
        SegmentScan scan,
        scan_sealed_segment(*file, segment.base, segment.end, replay ? visitor : FrameVisitor()));
    if (scan.corrupt_frames > 0) {
        NARAD_LOG_WARN(
            "partition log {}: sealed segment {} has {} damaged region(s) covering {} offset(s); "
            "reads report them as corrupt",
            directory_, segment.base.value(), scan.corrupt_frames, scan.corrupt_offsets);
        report.corrupt_frames += scan.corrupt_frames;
        MutexLock lock(corrupt_mutex_);
        corrupt_frames_seen_ += scan.corrupt_frames;
        for (uint32_t position : scan.corrupt_positions) {
            if (corrupt_seen_.size() < kCorruptRememberedMax) {
                corrupt_seen_.emplace(segment.base.value(), position);
            }
        }
    }
    if (!index_ok) {
        NARAD_RETURN_IF_ERROR(write_index(segment, info.size, scan.positions));
        ++report.indexes_rebuilt;
    }
    return Status::ok();
}

Status PartitionLogImpl::recover_active_segment(Segment& segment, const FrameVisitor& visitor,
                                                RecoveryReport& report) {
    NARAD_ASSIGN_OR_RETURN(auto file, fs_.open(segment.log_path, io::kReadWrite));
    NARAD_ASSIGN_OR_RETURN(SegmentScan scan, scan_active_segment(*file, segment.base, visitor));
    if (scan.good_bytes < scan.file_bytes) {
        uint64_t cut = scan.file_bytes - scan.good_bytes;
        NARAD_LOG_WARN(
            "partition log {}: cutting {} torn or corrupt byte(s) from the tail of segment {} "
            "(it ends at byte {}; high watermark {})",
            directory_, cut, segment.base.value(), scan.good_bytes, scan.end.value());
        NARAD_RETURN_IF_ERROR(file->truncate(scan.good_bytes));
        NARAD_RETURN_IF_ERROR(file->sync());
        report.tail_bytes_cut = cut;
    }
    segment.file = std::move(file);
    segment.end = scan.end;
    segment.size_bytes = scan.good_bytes;
    MutexLock lock(segment.index_mutex);
    segment.positions = std::move(scan.positions);
    segment.positions_live = true;
    return Status::ok();
}

Status PartitionLogImpl::rebuild_producers() {
    {
        MutexLock lock(producers_mutex_);
        producers_.clear();
    }
    FrameVisitor visitor = replay_visitor(segments_.front()->base);
    for (const auto& segment : segments_) {
        if (segment->sealed) {
            NARAD_ASSIGN_OR_RETURN(auto file, fs_.open(segment->log_path, io::kRead));
            NARAD_RETURN_IF_ERROR(
                scan_sealed_segment(*file, segment->base, segment->end, visitor).status());
        } else {
            NARAD_RETURN_IF_ERROR(
                scan_active_segment(*segment->file, segment->base, visitor).status());
        }
    }
    return Status::ok();
}

Status PartitionLogImpl::recover(RecoveryReport& report) {
    // The log is not shared yet; the lock keeps the rule for state_mutex_'s data checkable.
    WriterLock lock(state_mutex_);
    NARAD_RETURN_IF_ERROR(prepare_directory());
    NARAD_ASSIGN_OR_RETURN(auto names, fs_.list_directory(directory_));
    std::vector<Offset> bases;  // sorted: the names are zero-padded and listed sorted
    std::set<Offset> index_bases;
    for (const std::string& name : names) {
        Offset base;
        if (parse_segment_name(name, kLogSuffix, base)) {
            bases.push_back(base);
        } else if (parse_segment_name(name, kIndexSuffix, base)) {
            index_bases.insert(base);
        } else if (name == std::string(kProducersFileName) + ".tmp" ||
                   (name.ends_with(".tmp") &&
                    parse_segment_name(std::string_view(name).substr(0, name.size() - 4),
                                       kIndexSuffix, base))) {
            // Leftovers of an interrupted atomic write; the file they were replacing is intact.
            (void)fs_.remove(io::join_path(directory_, name));
        }
    }
    for (Offset base : index_bases) {
        bool has_log = std::binary_search(bases.begin(), bases.end(), base);
        bool is_active = !bases.empty() && base == bases.back();
        // An index without its segment is an orphan; one for the active segment is stale (the
        // active segment is always scanned, and its index is written again when it is sealed).
        if (!has_log || is_active) {
            (void)fs_.remove(io::join_path(directory_, segment_index_name(base)));
        }
    }
    if (bases.empty()) {
        NARAD_ASSIGN_OR_RETURN(auto segment, create_segment(Offset(0)));
        NARAD_RETURN_IF_ERROR(fs_.sync_directory(directory_));
        segments_.push_back(std::move(segment));
        high_watermark_ = Offset(0);
        report.high_watermark = high_watermark_;
        metrics_.open_logs.add(1);
        counted_open_.store(true);
        return Status::ok();
    }

    // The dedup table: the sidecar says which offsets it covers; the frames after that are
    // replayed while the segments are checked (normally only the active segment's).
    Offset replay_from = bases.front();
    std::optional<Offset> covered;
    auto sidecar = io::read_file(fs_, producers_path_);
    if (sidecar.is_ok()) {
        MutexLock producers_lock(producers_mutex_);
        auto decoded = ProducerTable::decode(*sidecar, producers_);
        if (decoded.is_ok()) {
            covered = *decoded;
            replay_from = std::max(*covered, bases.front());
        } else {
            producers_.clear();
            NARAD_LOG_WARN("partition log {}: {}; rebuilding the dedup table from every segment",
                           directory_, decoded.status().message());
        }
    } else if (sidecar.code() == Errc::not_found) {
        NARAD_LOG_INFO(
            "partition log {}: no producers sidecar; rebuilding the dedup table from "
            "every segment",
            directory_);
    } else {
        return sidecar.status();
    }
    FrameVisitor visitor = replay_visitor(replay_from);

    for (size_t i = 0; i < bases.size(); ++i) {
        auto segment = std::make_shared<Segment>(
            bases[i], io::join_path(directory_, segment_log_name(bases[i])),
            io::join_path(directory_, segment_index_name(bases[i])));
        if (i + 1 < bases.size()) {
            segment->end = bases[i + 1];
            NARAD_RETURN_IF_ERROR(check_sealed_segment(*segment, replay_from, visitor, report));
        } else {
            NARAD_RETURN_IF_ERROR(recover_active_segment(*segment, visitor, report));
            high_watermark_ = segment->end;
        }
        segments_.push_back(std::move(segment));
    }

    if (covered && *covered > high_watermark_) {
        // The sidecar vouches for offsets the log no longer holds: trust the frames instead.
        NARAD_LOG_WARN(
            "partition log {}: producers sidecar covers offset {} past the high watermark {}; "
            "rebuilding the dedup table from every segment",
            directory_, covered->value(), high_watermark_.value());
        NARAD_RETURN_IF_ERROR(rebuild_producers());
    }
    report.high_watermark = high_watermark_;
    metrics_.open_logs.add(1);
    counted_open_.store(true);
    return Status::ok();
}

}  // namespace detail
}  // namespace narad::storage
