// Retention, statistics, the append listener and close.
#include "base/log.h"
#include "base/mutex.h"
#include "storage/log_impl.h"

namespace narad::storage::detail {

Offset PartitionLogImpl::high_watermark() const {
    ReaderLock lock(state_mutex_);
    return high_watermark_;
}

Offset PartitionLogImpl::oldest_offset() const {
    ReaderLock lock(state_mutex_);
    return segments_.empty() ? high_watermark_ : segments_.front()->base;
}

LogStats PartitionLogImpl::stats() const {
    LogStats stats;
    std::string oldest_path;
    {
        ReaderLock lock(state_mutex_);
        stats.segments = static_cast<uint32_t>(segments_.size());
        stats.high_watermark = high_watermark_;
        stats.oldest_offset = segments_.empty() ? high_watermark_ : segments_.front()->base;
        for (const auto& segment : segments_) stats.size_bytes += segment->size_bytes;
        if (!segments_.empty()) oldest_path = segments_.front()->log_path;
    }
    if (!oldest_path.empty()) {
        auto info = fs_.stat(oldest_path);
        if (info.is_ok()) stats.oldest_segment_at = info->modified;
    }
    {
        MutexLock lock(cache_mutex_);
        stats.sealed_segments_cached = static_cast<uint32_t>(sealed_cache_.size());
    }
    MutexLock lock(corrupt_mutex_);
    stats.corrupt_frames_seen = corrupt_frames_seen_;
    return stats;
}

std::vector<SegmentInfo> PartitionLogImpl::segments() const {
    std::vector<SegmentInfo> infos;
    std::vector<std::string> paths;
    {
        ReaderLock lock(state_mutex_);
        for (const auto& segment : segments_) {
            infos.push_back(SegmentInfo{segment->base, segment->size_bytes, segment->sealed, {}});
            paths.push_back(segment->log_path);
        }
    }
    for (size_t i = 0; i < infos.size(); ++i) {
        auto info = fs_.stat(paths[i]);
        if (info.is_ok()) infos[i].modified = info->modified;
    }
    return infos;
}

Result<RetentionResult> PartitionLogImpl::enforce_retention(Millis retention) {
    MutexLock retention_lock(retention_mutex_);
    MonoTime start = clock_.now();
    WallTime cutoff = clock_.wall_now() - retention;
    std::vector<std::shared_ptr<Segment>> sealed;
    {
        ReaderLock lock(state_mutex_);
        if (closed_) return Status(Errc::shutting_down, "partition log is closed");
        for (const auto& segment : segments_) {
            if (segment->sealed) sealed.push_back(segment);
        }
    }
    // Only a prefix may go: offsets stay contiguous from oldest_offset() to the HWM, so a young
    // segment keeps every later one, whatever their times.
    std::vector<std::shared_ptr<Segment>> doomed;
    for (const auto& segment : sealed) {
        NARAD_ASSIGN_OR_RETURN(io::FileInfo info, fs_.stat(segment->log_path));
        if (info.modified >= cutoff) break;
        doomed.push_back(segment);
    }
    RetentionResult result;
    if (doomed.empty()) {
        log_metrics_.retention_run_seconds.observe(
            std::chrono::duration<double>(clock_.now() - start).count());
        return result;
    }
    // Forget them first, so readers answer `gone` rather than fail on a missing file; a reader
    // already inside one keeps its open file.
    std::vector<Offset> bases;
    {
        WriterLock lock(state_mutex_);
        for (const auto& segment : doomed) {
            NARAD_ASSERT(segments_.front() == segment, "retention must remove a prefix");
            segments_.erase(segments_.begin());
            bases.push_back(segment->base);
            result.records_deleted += segment->end.distance_from(segment->base);
            result.bytes_deleted += segment->size_bytes;
            ++result.segments_deleted;
        }
    }
    forget_segments(bases);
    Status status;
    for (const auto& segment : doomed) {
        // The log file first: a crash in between leaves an index orphan, which open() removes.
        Status removed = fs_.remove(segment->log_path);
        if (removed.is_ok() || removed.code() == Errc::not_found) {
            removed = fs_.remove(segment->index_path);
        }
        if (!removed.is_ok() && removed.code() != Errc::not_found && status.is_ok()) {
            status = removed;
        }
    }
    if (status.is_ok()) status = fs_.sync_directory(directory_);
    log_metrics_.retention_bytes_deleted.inc(static_cast<double>(result.bytes_deleted));
    log_metrics_.retention_messages_deleted.inc(static_cast<double>(result.records_deleted));
    log_metrics_.retention_run_seconds.observe(
        std::chrono::duration<double>(clock_.now() - start).count());
    NARAD_LOG_INFO("partition log {}: retention deleted {} segment(s), {} record(s), {} byte(s)",
                   directory_, result.segments_deleted, result.records_deleted,
                   result.bytes_deleted);
    if (!status.is_ok()) return status;
    return result;
}

void PartitionLogImpl::forget_segments(const std::vector<Offset>& bases) {
    auto doomed = [&](Offset base) {
        return std::find(bases.begin(), bases.end(), base) != bases.end();
    };
    {
        MutexLock lock(cache_mutex_);
        sealed_cache_.remove_if([&](const auto& entry) { return doomed(entry.first); });
    }
    MutexLock lock(decode_mutex_);
    decode_cache_.remove_if([&](const CachedBatch& entry) { return doomed(entry.segment_base); });
}

void PartitionLogImpl::set_append_listener(std::function<void(Offset)> listener) {
    MutexLock lock(listener_mutex_);
    listener_ = std::move(listener);
}

WalSeq PartitionLogImpl::committed_sequence(IngressId ingress) const {
    MutexLock lock(producers_mutex_);
    return producers_.committed(ingress);
}

Status PartitionLogImpl::close() {
    {
        MutexLock lock(writer_mutex_);
        if (closing_) return Status::ok();
        closing_ = true;
        writers_idle_.wait(lock, [&]() REQUIRES(writer_mutex_) { return writers_.empty(); });
    }
    // No appender is left and none can start: the dedup table is final. Save it so the next
    // open replays nothing.
    Status status;
    Offset high_watermark;
    {
        ReaderLock lock(state_mutex_);
        high_watermark = high_watermark_;
    }
    if (!failed_.load()) {
        std::string sidecar;
        {
            MutexLock lock(producers_mutex_);
            sidecar = producers_.encode(high_watermark);
        }
        status = io::write_file_atomically(fs_, producers_path_, sidecar);
        if (!status.is_ok()) {
            NARAD_LOG_WARN("partition log {}: saving the producers sidecar at close failed: {}",
                           directory_, status.to_string());
        }
    }
    {
        WriterLock lock(state_mutex_);
        closed_ = true;
        for (const auto& segment : segments_) segment->file.reset();
    }
    {
        MutexLock lock(cache_mutex_);
        sealed_cache_.clear();
    }
    {
        MutexLock lock(decode_mutex_);
        decode_cache_.clear();
    }
    if (counted_open_.exchange(false)) metrics_.open_logs.add(-1);
    return status;
}

}  // namespace narad::storage::detail
