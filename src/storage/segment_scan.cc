#include "storage/segment_scan.h"

#include <fmt/format.h>

#include <algorithm>

namespace narad::storage {
namespace {

constexpr size_t kScanChunkBytes = 1u << 20;
constexpr size_t kCorruptPositionsKept = 1024;

// Decodes the frame at `position`, reading as much as its header asks for.
Result<FrameDecode> decode_at(ChunkReader& reader, uint64_t position) {
    NARAD_ASSIGN_OR_RETURN(std::string_view view, reader.view(position, kFrameHeaderBytes));
    FrameDecode decoded = decode_frame(view);
    if (decoded.check == FrameCheck::need_more && decoded.needed > view.size() &&
        view.size() == kFrameHeaderBytes) {
        NARAD_ASSIGN_OR_RETURN(view, reader.view(position, decoded.needed));
        decoded = decode_frame(view);
    }
    return decoded;
}

// Index positions are u32; no segment our writer produces comes near 4 GiB.
Status check_size(const io::File& file, uint64_t size) {
    if (size > UINT32_MAX) {
        return Status(Errc::corrupt, fmt::format("segment {} is larger than 4 GiB", file.path()));
    }
    return Status::ok();
}

Status add_positions(SegmentScan& scan, uint64_t position, uint64_t count, Offset base,
                     const std::string& path) {
    if (scan.positions.size() + count > kSegmentRecordsMax) {
        return Status(Errc::corrupt, fmt::format("segment {} (base {}) holds more than {} offsets",
                                                 path, base.value(), kSegmentRecordsMax));
    }
    scan.positions.insert(scan.positions.end(), count, static_cast<uint32_t>(position));
    return Status::ok();
}

// Finds the next position after `from` holding a frame that verifies and carries offsets in
// [next, end); returns the file size if there is none.
Result<uint64_t> resync(ChunkReader& reader, uint64_t from, Offset next, Offset end) {
    const char magic[4] = {kFrameMagic[0], kFrameMagic[1], kFrameMagic[2],
                           static_cast<char>(kFrameVersion)};
    std::string_view needle(magic, 4);
    uint64_t position = from;
    while (position < reader.limit()) {
        NARAD_ASSIGN_OR_RETURN(std::string_view chunk, reader.view(position, kScanChunkBytes));
        size_t found = chunk.find(needle);
        if (found == std::string_view::npos) {
            if (chunk.size() < needle.size()) break;
            position += chunk.size() - (needle.size() - 1);
            continue;
        }
        uint64_t candidate = position + found;
        NARAD_ASSIGN_OR_RETURN(FrameDecode decoded, decode_at(reader, candidate));
        if (decoded.check == FrameCheck::ok && decoded.header.base >= next &&
            decoded.header.end() <= end) {
            return candidate;
        }
        position = candidate + 1;
    }
    return reader.limit();
}

}  // namespace

Result<std::string_view> ChunkReader::view(uint64_t position, size_t size) {
    if (position >= limit_) return std::string_view();
    size = static_cast<size_t>(std::min<uint64_t>(size, limit_ - position));
    if (position >= buffer_position_ && position + size <= buffer_position_ + buffer_size_) {
        return std::string_view(buffer_.get() + (position - buffer_position_), size);
    }
    size_t want =
        static_cast<size_t>(std::min<uint64_t>(std::max(size, chunk_bytes_), limit_ - position));
    // The buffer is read into, never zero-filled first; it only grows.
    if (want > buffer_capacity_) {
        buffer_ = std::make_unique_for_overwrite<char[]>(want);
        buffer_capacity_ = want;
    }
    buffer_size_ = 0;
    ++reads_;
    NARAD_ASSIGN_OR_RETURN(size_t got, file_.read_at(position, buffer_.get(), want));
    buffer_size_ = got;
    buffer_position_ = position;
    return std::string_view(buffer_.get(), std::min(size, got));
}

Result<SegmentScan> scan_active_segment(const io::File& file, Offset base,
                                        const FrameVisitor& visitor) {
    SegmentScan scan;
    NARAD_ASSIGN_OR_RETURN(scan.file_bytes, file.size());
    NARAD_RETURN_IF_ERROR(check_size(file, scan.file_bytes));
    ChunkReader reader(file, scan.file_bytes, kScanChunkBytes);
    uint64_t position = 0;
    Offset next = base;
    while (position < scan.file_bytes) {
        NARAD_ASSIGN_OR_RETURN(FrameDecode decoded, decode_at(reader, position));
        if (decoded.check != FrameCheck::ok) break;
        const FrameHeader& header = decoded.header;
        if (header.base != next) {
            if (position == 0) {
                return Status(Errc::corrupt,
                              fmt::format("segment {}: its first frame holds offset {}, not {}",
                                          file.path(), header.base.value(), base.value()));
            }
            break;  // a stale or foreign frame: the log ends before it
        }
        if (visitor) NARAD_RETURN_IF_ERROR(visitor(header, decoded.payload));
        NARAD_RETURN_IF_ERROR(
            add_positions(scan, position, header.record_count, base, file.path()));
        position += header.length;
        next = header.end();
    }
    scan.good_bytes = position;
    scan.end = next;
    return scan;
}

Result<SegmentScan> scan_sealed_segment(const io::File& file, Offset base, Offset end,
                                        const FrameVisitor& visitor) {
    SegmentScan scan;
    if (end <= base || end.distance_from(base) > kSegmentRecordsMax) {
        return Status(Errc::corrupt,
                      fmt::format("segment {} would hold offsets [{}, {}): not a valid range",
                                  file.path(), base.value(), end.value()));
    }
    NARAD_ASSIGN_OR_RETURN(scan.file_bytes, file.size());
    NARAD_RETURN_IF_ERROR(check_size(file, scan.file_bytes));
    ChunkReader reader(file, scan.file_bytes, kScanChunkBytes);
    uint64_t position = 0;
    Offset next = base;
    while (next < end && position < scan.file_bytes) {
        NARAD_ASSIGN_OR_RETURN(FrameDecode decoded, decode_at(reader, position));
        if (decoded.check == FrameCheck::ok) {
            const FrameHeader& header = decoded.header;
            if (header.base != next || header.end() > end) {
                // Whole, verified frames in the wrong place are not bit rot: the files do not
                // fit together (a renamed file, a missing segment). Refuse rather than guess.
                return Status(
                    Errc::corrupt,
                    fmt::format("segment {}: the frame at byte {} holds offsets [{}, {}) but "
                                "offset {} was expected (the segment must hold [{}, {}))",
                                file.path(), position, header.base.value(), header.end().value(),
                                next.value(), base.value(), end.value()));
            }
            if (visitor) NARAD_RETURN_IF_ERROR(visitor(header, decoded.payload));
            NARAD_RETURN_IF_ERROR(
                add_positions(scan, position, header.record_count, base, file.path()));
            position += header.length;
            next = header.end();
            continue;
        }
        // Damaged bytes: the offsets up to the next good frame point at them.
        ++scan.corrupt_frames;
        if (scan.corrupt_positions.size() < kCorruptPositionsKept) {
            scan.corrupt_positions.push_back(static_cast<uint32_t>(position));
        }
        NARAD_ASSIGN_OR_RETURN(uint64_t good, resync(reader, position + 1, next, end));
        Offset resume = end;
        if (good < scan.file_bytes) {
            NARAD_ASSIGN_OR_RETURN(FrameDecode found, decode_at(reader, good));
            resume = found.header.base;
        }
        NARAD_RETURN_IF_ERROR(
            add_positions(scan, position, resume.distance_from(next), base, file.path()));
        scan.corrupt_offsets += resume.distance_from(next);
        next = resume;
        position = good;
    }
    if (next < end) {
        return Status(Errc::corrupt,
                      fmt::format("segment {} ends at offset {} but the next segment starts at {}: "
                                  "offsets are missing",
                                  file.path(), next.value(), end.value()));
    }
    if (position < scan.file_bytes) ++scan.corrupt_frames;  // damaged bytes after the last frame
    scan.good_bytes = position;
    scan.end = next;
    return scan;
}

std::string segment_log_name(Offset base) {
    return fmt::format("{:020}{}", base.value(), kLogSuffix);
}

std::string segment_index_name(Offset base) {
    return fmt::format("{:020}{}", base.value(), kIndexSuffix);
}

bool parse_segment_name(std::string_view name, std::string_view suffix, Offset& base) {
    if (name.size() != kSegmentNameDigits + suffix.size() || !name.ends_with(suffix)) return false;
    uint64_t value = 0;
    for (size_t i = 0; i < kSegmentNameDigits; ++i) {
        char c = name[i];
        if (c < '0' || c > '9') return false;
        uint64_t digit = static_cast<uint64_t>(c - '0');
        if (value > (UINT64_MAX - digit) / 10) return false;
        value = value * 10 + digit;
    }
    base = Offset(value);
    return true;
}

}  // namespace narad::storage
