// Reads: find the segment, look the offset up in its index, read a chunk there and decode frames
// from it; never past the committed size of the segment, so never past the HWM. A frame that
// fails to decode is reported in `corrupt` (with every offset its index entry covers) and the read
// goes on at the next offset whose index entry points elsewhere.
#include <algorithm>

#include "base/log.h"
#include "base/mutex.h"
#include "storage/log_impl.h"
#include "storage/offset_index.h"

namespace narad::storage::detail {

struct PartitionLogImpl::ReadState {
    size_t max_records = 0;
    size_t max_bytes = 0;
    size_t chunk_bytes = 0;
    size_t bytes = 0;  // keys and values gathered
    Offset next;
    ReadResult result;

    bool full() const { return result.records.size() + result.corrupt.size() >= max_records; }
    // Whether a record of `size` bytes may still be taken: at least one always is.
    bool fits(size_t size) const {
        return !full() && (result.records.empty() || bytes + size <= max_bytes);
    }
    void take(Offset offset, int64_t timestamp_ms, std::string_view key, std::string_view value) {
        result.records.push_back(
            StoredRecord{offset, timestamp_ms, std::string(key), std::string(value)});
        bytes += key.size() + value.size();
        next = offset + 1;
    }
};

Result<ReadResult> PartitionLogImpl::read(Offset from, size_t max_records, size_t max_bytes) {
    if (!read_since_seal_.load(std::memory_order_relaxed)) {
        read_since_seal_.store(true, std::memory_order_relaxed);
    }
    Offset high_watermark;
    {
        ReaderLock lock(state_mutex_);
        if (closed_) return Status(Errc::shutting_down, "partition log is closed");
        high_watermark = high_watermark_;
        if (from < segments_.front()->base) {
            return Status(Errc::gone, "offset " + std::to_string(from.value()) +
                                          " is below the oldest retained offset " +
                                          std::to_string(segments_.front()->base.value()));
        }
    }
    ReadState state;
    state.max_records = max_records;
    state.max_bytes = max_bytes;
    state.chunk_bytes = std::clamp<size_t>(max_bytes, 16u << 10, 1u << 20);
    state.next = from;
    while (state.next < high_watermark && !state.full()) {
        SegmentView view;
        {
            ReaderLock lock(state_mutex_);
            if (closed_) return Status(Errc::shutting_down, "partition log is closed");
            auto it = std::upper_bound(
                segments_.begin(), segments_.end(), state.next,
                [](Offset offset, const auto& segment) { return offset < segment->base; });
            if (it == segments_.begin()) {
                // Retention removed the segment while we were reading.
                if (state.result.records.empty() && state.result.corrupt.empty()) {
                    return Status(Errc::gone, "offset " + std::to_string(state.next.value()) +
                                                  " was removed by retention");
                }
                break;
            }
            const auto& segment = *std::prev(it);
            view.segment = segment;
            view.end = segment->end;
            view.size_bytes = segment->size_bytes;
            view.file = segment->file;
        }
        if (state.next >= view.end) break;  // cannot happen: segments are contiguous up to HWM
        if (view.file == nullptr) {
            auto handle = sealed_handle(view.segment);
            if (!handle.is_ok()) {
                if (handle.code() == Errc::not_found && state.next < oldest_offset()) {
                    // Retention deleted the segment between our look-up and its opening.
                    if (state.result.records.empty() && state.result.corrupt.empty()) {
                        return Status(Errc::gone, "offset " + std::to_string(state.next.value()) +
                                                      " was removed by retention");
                    }
                    break;
                }
                return handle.status();
            }
            view.sealed = std::move(*handle);
            view.file = view.sealed->file;
        }
        NARAD_ASSIGN_OR_RETURN(bool more, read_segment(view, state));
        if (!more) break;
    }
    state.result.next = state.next;
    return std::move(state.result);
}

Result<bool> PartitionLogImpl::read_segment(SegmentView& view, ReadState& state) {
    const Offset segment_base = view.segment->base;
    // Read about as far as the wanted records reach, not a whole chunk for a few small records:
    // the last wanted offset's frame ends at or before the frame of the offset after it (a frame
    // of several records may end past it, and is then read on).
    size_t chunk_bytes = state.chunk_bytes;
    if (state.next < view.end) {
        const uint64_t wanted =
            state.max_records - state.result.records.size() - state.result.corrupt.size();
        NARAD_ASSIGN_OR_RETURN(uint32_t first, lookup(view, state.next));
        uint64_t last_end = view.size_bytes;
        if (state.next.value() + wanted < view.end.value()) {
            // A damaged index only costs the estimate; the loop reports it where it matters.
            if (auto stop = lookup(view, state.next + wanted); stop.is_ok()) last_end = *stop;
        }
        // Every wanted record in the frame at `first` (a frame of several records): its length
        // is unknown until its header is read, so read a whole chunk.
        if (last_end > first) {
            chunk_bytes = static_cast<size_t>(
                std::clamp<uint64_t>(last_end - first, kFrameHeaderBytes, state.chunk_bytes));
        }
    }
    ChunkReader reader(*view.file, view.size_bytes, chunk_bytes);

    // Reports the offsets from state.next that share the damaged frame's index entry.
    auto corrupt_run = [&](uint32_t position, Offset stop) -> Status {
        note_corrupt(segment_base, position);
        Offset offset = state.next;
        while (true) {
            state.result.corrupt.push_back(offset);
            offset = offset.next();
            if (offset >= view.end || offset >= stop || state.full()) break;
            NARAD_ASSIGN_OR_RETURN(uint32_t at, lookup(view, offset));
            if (at != position) break;
        }
        state.next = offset;
        return Status::ok();
    };

    while (state.next < view.end) {
        if (state.full()) return false;
        const Offset offset = state.next;
        NARAD_ASSIGN_OR_RETURN(uint32_t position, lookup(view, offset));
        auto batch = cached_batch(segment_base, position);
        if (batch == nullptr) {
            NARAD_ASSIGN_OR_RETURN(std::string_view bytes,
                                   reader.view(position, kFrameHeaderBytes));
            FrameDecode decoded = decode_frame(bytes);
            if (decoded.check == FrameCheck::need_more && bytes.size() == kFrameHeaderBytes) {
                NARAD_ASSIGN_OR_RETURN(bytes, reader.view(position, decoded.needed));
                decoded = decode_frame(bytes);
            }
            const FrameHeader& header = decoded.header;
            if (decoded.check != FrameCheck::ok || offset < header.base || offset >= header.end()) {
                Offset stop = view.end;
                if (decoded.check == FrameCheck::ok && header.base > offset) stop = header.base;
                NARAD_RETURN_IF_ERROR(corrupt_run(position, stop));
                continue;
            }
            if (header.codec == Codec::none) {
                std::string_view key = decoded.payload.substr(0, header.key_length);
                std::string_view value = decoded.payload.substr(header.key_length);
                if (!state.fits(key.size() + value.size())) return false;
                state.take(offset, header.timestamp_ms, key, value);
                continue;
            }
            auto records = std::make_shared<std::vector<DecodedRecord>>();
            Status unpacked = unpack_frame(header, decoded.payload, *records);
            if (!unpacked.is_ok()) {
                NARAD_RETURN_IF_ERROR(corrupt_run(position, view.end));
                continue;
            }
            cache_batch(segment_base, position, records);
            batch = std::move(records);
        }
        const Offset batch_base = batch->front().offset;
        if (offset < batch_base || offset.distance_from(batch_base) >= batch->size()) {
            NARAD_RETURN_IF_ERROR(corrupt_run(position, view.end));
            continue;
        }
        for (size_t i = offset.distance_from(batch_base); i < batch->size(); ++i) {
            const DecodedRecord& record = (*batch)[i];
            if (record.offset >= view.end) break;
            if (!state.fits(record.key.size() + record.value.size())) return false;
            state.take(record.offset, record.timestamp_ms, record.key, record.value);
        }
    }
    return true;
}

Result<uint32_t> PartitionLogImpl::lookup(SegmentView& view, Offset offset) {
    const Segment& segment = *view.segment;
    uint64_t i = offset.distance_from(segment.base);
    if (view.sealed == nullptr) {
        MutexLock lock(view.segment->index_mutex);
        if (view.segment->positions_live) {
            NARAD_ASSERT(i < view.segment->positions.size(), "committed offset missing from index");
            return view.segment->positions[i];
        }
        // Sealed since the read began: its index now lives in the cache.
    }
    if (view.sealed == nullptr) {
        NARAD_ASSIGN_OR_RETURN(view.sealed, sealed_handle(view.segment));
    }
    if (i >= view.sealed->positions.size()) {
        return Status(Errc::corrupt, "offset " + std::to_string(offset.value()) +
                                         " is missing from the index of segment " +
                                         std::to_string(segment.base.value()));
    }
    return view.sealed->positions[i];
}

Result<std::shared_ptr<const SealedHandle>> PartitionLogImpl::sealed_handle(
    const std::shared_ptr<Segment>& segment) {
    {
        MutexLock lock(cache_mutex_);
        for (auto it = sealed_cache_.begin(); it != sealed_cache_.end(); ++it) {
            if (it->first == segment->base) {
                sealed_cache_.splice(sealed_cache_.begin(), sealed_cache_, it);
                return sealed_cache_.front().second;
            }
        }
    }
    Offset end;
    uint64_t size_bytes;
    {
        ReaderLock lock(state_mutex_);
        NARAD_ASSERT(segment->sealed, "only a sealed segment is loaded through the cache");
        end = segment->end;
        size_bytes = segment->size_bytes;
    }
    auto handle = std::make_shared<SealedHandle>();
    NARAD_ASSIGN_OR_RETURN(handle->file, fs_.open(segment->log_path, io::kRead));
    auto bytes = io::read_file(fs_, segment->index_path);
    if (!bytes.is_ok() && bytes.code() != Errc::not_found) return bytes.status();
    Result<std::vector<uint32_t>> positions =
        bytes.is_ok()
            ? decode_index(*bytes, segment->base, size_bytes, end.distance_from(segment->base))
            : Result<std::vector<uint32_t>>(bytes.status());
    if (positions.is_ok()) {
        handle->positions = std::move(*positions);
    } else {
        // Damaged since open (checked then): rebuild it, as recovery would have.
        NARAD_LOG_WARN("partition log {}: index of segment {} unusable ({}); rebuilding it",
                       directory_, segment->base.value(), positions.status().message());
        NARAD_ASSIGN_OR_RETURN(SegmentScan scan,
                               scan_sealed_segment(*handle->file, segment->base, end, {}));
        for (uint32_t position : scan.corrupt_positions) note_corrupt(segment->base, position);
        Status written = write_index(*segment, size_bytes, scan.positions);
        if (!written.is_ok()) {
            NARAD_LOG_WARN("partition log {}: could not write the rebuilt index: {}", directory_,
                           written.to_string());
        }
        handle->positions = std::move(scan.positions);
    }
    MutexLock lock(cache_mutex_);
    for (const auto& [base, cached] : sealed_cache_) {
        if (base == segment->base) return cached;  // another reader loaded it meanwhile
    }
    sealed_cache_.emplace_front(segment->base, handle);
    while (sealed_cache_.size() > options_.sealed_segments_cached) sealed_cache_.pop_back();
    return std::shared_ptr<const SealedHandle>(std::move(handle));
}

Status PartitionLogImpl::write_index(const Segment& segment, uint64_t segment_bytes,
                                     std::span<const uint32_t> positions) {
    MutexLock lock(index_write_mutex_);
    return io::write_file_atomically(fs_, segment.index_path,
                                     encode_index(segment.base, segment_bytes, positions));
}

std::shared_ptr<const std::vector<DecodedRecord>> PartitionLogImpl::cached_batch(
    Offset base, uint32_t position) {
    MutexLock lock(decode_mutex_);
    for (auto it = decode_cache_.begin(); it != decode_cache_.end(); ++it) {
        if (it->segment_base == base && it->position == position) {
            decode_cache_.splice(decode_cache_.begin(), decode_cache_, it);
            return decode_cache_.front().records;
        }
    }
    return nullptr;
}

void PartitionLogImpl::cache_batch(Offset base, uint32_t position,
                                   std::shared_ptr<const std::vector<DecodedRecord>> records) {
    if (records->empty()) return;
    MutexLock lock(decode_mutex_);
    decode_cache_.push_front(CachedBatch{base, position, std::move(records)});
    while (decode_cache_.size() > kDecodeCacheBatches) decode_cache_.pop_back();
}

void PartitionLogImpl::note_corrupt(Offset segment_base, uint32_t position) {
    MutexLock lock(corrupt_mutex_);
    auto key = std::make_pair(segment_base.value(), position);
    if (corrupt_seen_.contains(key)) return;
    if (corrupt_seen_.size() < kCorruptRememberedMax) corrupt_seen_.insert(key);
    ++corrupt_frames_seen_;
    NARAD_LOG_WARN("partition log {}: corrupt frame at byte {} of segment {}", directory_, position,
                   segment_base.value());
}

}  // namespace narad::storage::detail
