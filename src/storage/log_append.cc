// Appends: group commit with a writer queue (LevelDB's DBImpl::Write). Each appender encodes its
// frames outside every lock, then queues; the appender at the front is the leader: it takes a
// group of queued batches, drops duplicates, writes them with one pwritev, fdatasyncs once, reads
// the bytes back to check them, and only then publishes the new HWM and wakes the group.
#include <unordered_map>

#include "base/failpoint.h"
#include "base/log.h"
#include "base/mutex.h"
#include "storage/log_impl.h"
#include "storage/offset_index.h"

namespace narad::storage::detail {

struct PartitionLogImpl::Writer {
    std::span<const Record> records;
    EncodedBatch encoded;
    uint64_t bytes = 0;                   // keys and values
    std::vector<ProducerStamp> accepted;  // stamps of the records kept (leader)
    Result<AppendResult> result{Errc::internal, "append not run"};
    bool done =
        false;  // under the log's writer_mutex_ (another object's, which the analysis cannot name)
    CondVar cv;
};

namespace {

Status verify_written(io::File& file, uint64_t position, std::span<const std::string_view> parts,
                      uint64_t bytes) {
    std::string back(bytes, '\0');
    NARAD_ASSIGN_OR_RETURN(size_t got, file.read_at(position, back.data(), back.size()));
    if (got != bytes) {
        return Status(Errc::io_error, "read-back of a commit came up short in " + file.path());
    }
    size_t at = 0;
    for (std::string_view part : parts) {
        if (std::string_view(back).substr(at, part.size()) != part) {
            return Status(Errc::io_error,
                          "read-back of a commit differs from what was written in " + file.path());
        }
        at += part.size();
    }
    return Status::ok();
}

}  // namespace

Result<AppendResult> PartitionLogImpl::append(std::span<const Record> records) {
    if (records.size() > kAppendRecordsMax) {
        return Status(Errc::invalid_argument, "more than 1048576 records in one append");
    }
    Writer writer;
    writer.records = records;
    for (const Record& record : records) writer.bytes += record.key.size() + record.value.size();
    if (writer.bytes > kAppendBytesMax) {
        return Status(Errc::payload_too_large, "one append may carry at most 64 MiB");
    }
    if (failed_.load()) {
        return Status(Errc::io_error, "partition log " + directory_ +
                                          " refuses appends after a failed truncate; reopen it");
    }
    NARAD_RETURN_IF_ERROR(
        encode_records(records, options_.codec, options_.compression_level, writer.encoded));

    MutexLock lock(writer_mutex_);
    if (closing_) return Status(Errc::shutting_down, "partition log is closed");
    writers_.push_back(&writer);
    // Tests use this to hold a leader until followers have queued; a hook here must not call
    // into this log (writer_mutex_ is held).
    NARAD_FAILPOINT("storage.append.enqueued");
    while (!writer.done && &writer != writers_.front()) writer.cv.wait(lock);
    if (writer.done) return std::move(writer.result);

    std::vector<Writer*> group = take_group();
    lock.unlock();
    Offset high_watermark = commit_group(group);
    bool appended = false;
    for (Writer* member : group) {
        appended = appended || (member->result.is_ok() && member->result->appended > 0);
    }
    lock.lock();
    for (Writer* member : group) {
        NARAD_ASSERT(writers_.front() == member, "commit group is not the queue's prefix");
        writers_.pop_front();
        if (member != &writer) {
            member->done = true;
            member->cv.notify_one();
        }
    }
    if (!writers_.empty()) {
        writers_.front()->cv.notify_one();
    } else {
        writers_idle_.notify_all();
    }
    lock.unlock();

    if (appended) {
        std::function<void(Offset)> listener;
        {
            MutexLock listener_lock(listener_mutex_);
            listener = listener_;
        }
        if (listener) listener(high_watermark);
    }
    return std::move(writer.result);
}

std::vector<PartitionLogImpl::Writer*> PartitionLogImpl::take_group() {
    std::vector<Writer*> group;
    uint64_t bytes = 0;
    uint64_t records = 0;
    for (Writer* writer : writers_) {
        uint64_t size = writer->encoded.bytes.size();
        if (!group.empty() && (group.size() >= kGroupWritersMax || bytes + size > kGroupBytesMax ||
                               records + writer->records.size() > kAppendRecordsMax)) {
            break;
        }
        group.push_back(writer);
        bytes += size;
        records += writer->records.size();
    }
    return group;
}

void PartitionLogImpl::fail_group(const std::vector<Writer*>& group, const Status& status) {
    for (Writer* writer : group) writer->result = status;
}

void PartitionLogImpl::filter_duplicates(const std::vector<Writer*>& group) {
    // The leader alone changes producers_, and it checks the whole group against it plus the
    // stamps earlier in the group, so two concurrent retries of one record cannot both land.
    std::unordered_map<uint64_t, uint64_t> pending;  // ingress -> highest sequence in the group
    std::vector<std::vector<Record>> kept(group.size());
    std::vector<uint32_t> duplicates(group.size(), 0);
    {
        MutexLock lock(producers_mutex_);
        for (size_t g = 0; g < group.size(); ++g) {
            Writer& writer = *group[g];
            for (const Record& record : writer.records) {
                ProducerStamp stamp = record.producer;
                bool duplicate = false;
                if (!stamp.empty()) {
                    auto it = pending.find(stamp.ingress.value());
                    duplicate = producers_.is_duplicate(stamp) ||
                                (it != pending.end() && stamp.sequence.value() <= it->second);
                }
                if (duplicate) {
                    ++duplicates[g];
                    continue;
                }
                if (!stamp.empty()) {
                    uint64_t& highest = pending[stamp.ingress.value()];
                    highest = std::max(highest, stamp.sequence.value());
                }
                kept[g].push_back(record);
                writer.accepted.push_back(stamp);
            }
        }
    }
    for (size_t g = 0; g < group.size(); ++g) {
        Writer& writer = *group[g];
        AppendResult result;
        result.duplicates = duplicates[g];
        writer.result = result;
        if (duplicates[g] == 0) continue;
        // Rare (a retry): encode again without the duplicates.
        writer.encoded = EncodedBatch{};
        Status status =
            encode_records(kept[g], options_.codec, options_.compression_level, writer.encoded);
        if (!status.is_ok()) {
            writer.accepted.clear();
            writer.result = status;
        }
    }
}

Offset PartitionLogImpl::commit_group(const std::vector<Writer*>& group) {
    Offset high_watermark;
    std::shared_ptr<Segment> active;
    std::shared_ptr<io::File> file;
    {
        ReaderLock lock(state_mutex_);
        high_watermark = high_watermark_;
        active = segments_.back();
        file = active->file;
    }
    if (failed_.load()) {
        fail_group(group, Status(Errc::io_error, "partition log " + directory_ +
                                                     " refuses appends after a failed truncate; "
                                                     "reopen it"));
        return high_watermark;
    }
    filter_duplicates(group);

    // Offsets, and the parts to write.
    Offset next = high_watermark;
    uint64_t bytes = 0;
    uint64_t records = 0;
    std::vector<std::string_view> parts;
    for (Writer* writer : group) {
        if (!writer->result.is_ok()) continue;
        writer->result->first = next;
        writer->result->appended = writer->encoded.records;
        if (writer->encoded.records == 0) continue;
        assign_offsets(writer->encoded, next);
        next = next + writer->encoded.records;
        parts.push_back(writer->encoded.bytes);
        bytes += writer->encoded.bytes.size();
        records += writer->encoded.records;
    }
    auto finish = [&](Offset hwm) {
        for (Writer* writer : group) {
            if (writer->result.is_ok()) writer->result->high_watermark = hwm;
        }
    };
    if (records == 0) {
        finish(high_watermark);
        return high_watermark;
    }

    uint64_t active_bytes;
    uint64_t active_records;
    {
        ReaderLock lock(state_mutex_);
        active_bytes = active->size_bytes;
        active_records = active->end.distance_from(active->base);
    }
    if (active_bytes > 0 && (active_bytes + bytes > options_.segment_bytes_max ||
                             active_records + records > kSegmentRecordsMax)) {
        Status rolled = roll(active, high_watermark);
        if (!rolled.is_ok()) {
            NARAD_LOG_ERROR("partition log {}: rolling a segment failed: {}", directory_,
                            rolled.to_string());
            fail_group(group, rolled);
            return high_watermark;
        }
        ReaderLock lock(state_mutex_);
        active = segments_.back();
        file = active->file;
        active_bytes = 0;
    }

    MonoTime start = clock_.now();
    Status written = write_sync_verify(*file, active_bytes, parts, bytes);
    if (!written.is_ok()) {
        NARAD_LOG_ERROR("partition log {}: commit of {} record(s) failed: {}", directory_, records,
                        written.to_string());
        roll_back(*file, active_bytes, written);
        fail_group(group, written);
        return high_watermark;
    }
    log_metrics_.flush_seconds.observe(std::chrono::duration<double>(clock_.now() - start).count());
    log_metrics_.flush_bytes.inc(static_cast<double>(bytes));
    if (options_.before_publish) {
        Status allowed = options_.before_publish();
        if (!allowed.is_ok()) {
            roll_back(*file, active_bytes, allowed);
            fail_group(group, allowed);
            return high_watermark;
        }
    }

    // Publish: the index first, then the dedup table, then the HWM, so a reader that sees the
    // new HWM finds every position it needs.
    {
        MutexLock lock(active->index_mutex);
        uint64_t at = active_bytes;
        for (Writer* writer : group) {
            if (!writer->result.is_ok()) continue;
            for (const auto& frame : writer->encoded.frames) {
                uint64_t position = at + frame.position;
                NARAD_ASSERT(position <= UINT32_MAX, "segment position past 4 GiB");
                active->positions.insert(active->positions.end(), frame.records,
                                         static_cast<uint32_t>(position));
            }
            at += writer->encoded.bytes.size();
        }
    }
    {
        MutexLock lock(producers_mutex_);
        for (Writer* writer : group) {
            if (!writer->result.is_ok()) continue;
            for (ProducerStamp stamp : writer->accepted) producers_.commit(stamp);
        }
    }
    {
        WriterLock lock(state_mutex_);
        active->size_bytes = active_bytes + bytes;
        active->end = next;
        high_watermark_ = next;
    }
    finish(next);
    return next;
}

Status PartitionLogImpl::write_sync_verify(io::File& file, uint64_t position,
                                           std::span<const std::string_view> parts,
                                           uint64_t bytes) {
    NARAD_RETURN_IF_ERROR(file.write_at(position, parts));
    NARAD_FAILPOINT_RETURN("storage.append.after_write");
    MonoTime start = clock_.now();
    NARAD_RETURN_IF_ERROR(file.sync());
    log_metrics_.fsync_seconds.observe(std::chrono::duration<double>(clock_.now() - start).count());
    NARAD_FAILPOINT_RETURN("storage.append.after_sync");
    return verify_written(file, position, parts, bytes);
}

void PartitionLogImpl::roll_back(io::File& file, uint64_t size, const Status& cause) {
    Status status = file.truncate(size);
    if (status.is_ok()) status = file.sync();
    if (status.is_ok()) return;
    // The file may now hold bytes past the HWM that no sync vouches for. Reads never pass the
    // HWM, so they stay safe; appends would write after garbage, so they stop until a reopen,
    // whose recovery cuts the tail.
    failed_.store(true);
    NARAD_LOG_ERROR(
        "partition log {}: could not truncate {} back to {} bytes after a failed commit ({}): "
        "{}; refusing appends until the log is reopened",
        directory_, file.path(), size, cause.to_string(), status.to_string());
}

Status PartitionLogImpl::roll(const std::shared_ptr<Segment>& active, Offset next_base) {
    // Seal the active segment: its index, then the dedup table as of its end, then the new
    // segment file and the directory entry. Until the new segment is published nothing in memory
    // changes, so a failure here leaves the log as it was.
    std::string index_bytes;
    uint64_t active_bytes;
    {
        ReaderLock lock(state_mutex_);
        active_bytes = active->size_bytes;
    }
    {
        MutexLock lock(active->index_mutex);
        index_bytes = encode_index(active->base, active_bytes, active->positions);
    }
    {
        MutexLock lock(index_write_mutex_);
        NARAD_RETURN_IF_ERROR(io::write_file_atomically(fs_, active->index_path, index_bytes));
    }
    std::string sidecar;
    {
        MutexLock lock(producers_mutex_);
        sidecar = producers_.encode(next_base);
    }
    NARAD_RETURN_IF_ERROR(io::write_file_atomically(fs_, producers_path_, sidecar));
    NARAD_ASSIGN_OR_RETURN(auto segment, create_segment(next_base));
    Status created = [&]() -> Status {
        NARAD_FAILPOINT_RETURN("storage.roll.after_create");
        return fs_.sync_directory(directory_);
    }();
    if (!created.is_ok()) {
        segment->file.reset();
        (void)fs_.remove(segment->log_path);
        return created;
    }

    auto handle = std::make_shared<SealedHandle>();
    {
        WriterLock lock(state_mutex_);
        handle->file = active->file;
        active->sealed = true;
        active->file.reset();
        segments_.push_back(segment);
    }
    {
        MutexLock lock(active->index_mutex);
        handle->positions = std::move(active->positions);
        active->positions = {};
        active->positions_live = false;
    }
    if (read_since_seal_.exchange(false, std::memory_order_relaxed)) {
        // Someone reads this log, likely near its tail: keep the index it is about to need.
        MutexLock lock(cache_mutex_);
        // A reader may have loaded it from the new index file already.
        sealed_cache_.remove_if([&](const auto& entry) { return entry.first == active->base; });
        sealed_cache_.emplace_front(active->base, std::move(handle));
        while (sealed_cache_.size() > options_.sealed_segments_cached) sealed_cache_.pop_back();
    }
    NARAD_LOG_DEBUG("partition log {}: sealed segment {} ({} bytes), new segment {}", directory_,
                    active->base.value(), active_bytes, next_base.value());
    return Status::ok();
}

}  // namespace narad::storage::detail
