#include "wal/wal_recovery.h"

#include <algorithm>

#include "base/log.h"
#include "wal/wal_format.h"

namespace narad::wal {
namespace {

// Sequential reads through a window, so a segment of small records costs a few large reads.
class WindowReader {
  public:
    explicit WindowReader(const io::File& file) : file_(file) {}

    // The `size` bytes at `offset`, or fewer at end of file. Valid until the next call.
    Result<std::string_view> read(uint64_t offset, size_t size) {
        if (offset < start_ || offset + size > start_ + buffer_.size()) {
            buffer_.resize(std::max(size, kWindowBytes));
            NARAD_ASSIGN_OR_RETURN(size_t got,
                                   file_.read_at(offset, buffer_.data(), buffer_.size()));
            buffer_.resize(got);
            start_ = offset;
        }
        std::string_view window(buffer_);
        window.remove_prefix(offset - start_);
        return window.substr(0, size);
    }

  private:
    static constexpr size_t kWindowBytes = 1 << 20;
    const io::File& file_;
    std::string buffer_;
    uint64_t start_ = 0;
};

// Scans one segment. Stops at the first record that is incomplete, corrupt or out of order, and
// says why in `damage` (empty if the segment ends cleanly).
Result<RecoveredSegment> scan_segment(io::FileSystem& fs, std::string path, WalSeq first,
                                      uint64_t last_sequence, std::string& damage) {
    RecoveredSegment segment;
    segment.first = first;
    segment.path = std::move(path);
    NARAD_ASSIGN_OR_RETURN(auto file, fs.open(segment.path, io::kRead));
    NARAD_ASSIGN_OR_RETURN(segment.file_bytes, file->size());
    WindowReader reader(*file);

    NARAD_ASSIGN_OR_RETURN(std::string_view header, reader.read(0, format::kSegmentHeaderBytes));
    auto header_first = format::decode_segment_header(header);
    if (!header_first.is_ok()) {
        damage = header_first.status().message();
        return segment;
    }
    if (*header_first != first) {
        damage = "segment header names another first sequence";
        return segment;
    }
    uint64_t offset = format::kSegmentHeaderBytes;
    segment.valid_bytes = offset;
    while (offset < segment.file_bytes) {
        NARAD_ASSIGN_OR_RETURN(std::string_view prefix_bytes,
                               reader.read(offset, format::kFramePrefixBytes));
        if (prefix_bytes.size() < format::kFramePrefixBytes) {
            damage = "incomplete record length";
            break;
        }
        format::FramePrefix prefix = format::decode_prefix(prefix_bytes.data());
        if (prefix.body_bytes < format::kBodyFixedBytes ||
            prefix.body_bytes > format::kMaxBodyBytes) {
            damage = "impossible record length";
            break;
        }
        NARAD_ASSIGN_OR_RETURN(std::string_view body,
                               reader.read(offset + format::kFramePrefixBytes, prefix.body_bytes));
        if (body.size() < prefix.body_bytes) {
            damage = "incomplete record";
            break;
        }
        auto record = format::decode_body(body, prefix);
        if (!record.is_ok()) {
            damage = record.status().message();
            break;
        }
        if (record->sequence < first || record->sequence.value() <= last_sequence) {
            damage = "record sequence out of order";
            break;
        }
        last_sequence = record->sequence.value();
        segment.records.push_back(std::make_shared<const IngressRecord>(std::move(*record)));
        offset += format::kFramePrefixBytes + prefix.body_bytes;
        segment.valid_bytes = offset;
    }
    return segment;
}

}  // namespace

Result<Recovery> recover_segments(io::FileSystem& fs, const std::string& directory,
                                  const std::vector<std::string>& names) {
    std::vector<WalSeq> firsts;
    for (const auto& name : names) {
        if (auto first = format::parse_segment_file_name(name)) firsts.push_back(*first);
    }
    std::sort(firsts.begin(), firsts.end());

    Recovery recovery;
    uint64_t last_sequence = 0;
    uint64_t floor = 1;  // the next sequence can be no lower than any segment name
    for (size_t i = 0; i < firsts.size(); ++i) {
        bool is_last = i + 1 == firsts.size();
        std::string path = io::join_path(directory, format::segment_file_name(firsts[i]));
        std::string damage;
        NARAD_ASSIGN_OR_RETURN(RecoveredSegment segment,
                               scan_segment(fs, path, firsts[i], last_sequence, damage));
        floor = std::max(floor, firsts[i].value());
        if (!segment.records.empty()) last_sequence = segment.records.back()->sequence.value();
        uint64_t bad_bytes = segment.file_bytes - segment.valid_bytes;
        if (!damage.empty() && is_last) {
            recovery.tail_bytes_cut = bad_bytes;
            NARAD_LOG_WARN("ingress WAL {}: cutting {} bytes at offset {} of the last segment: {}",
                           directory, bad_bytes, segment.valid_bytes, damage);
            // A torn header held no records; after a good header, the cut bytes may have been
            // records, so skip every sequence they could have held (see the format doc).
            if (segment.valid_bytes > 0) {
                floor = std::max(floor, last_sequence + 1) +
                        (bad_bytes + format::kMinFrameBytes - 1) / format::kMinFrameBytes;
            }
        } else if (!damage.empty()) {
            ++recovery.damaged_segments;
            NARAD_LOG_ERROR(
                "ingress WAL {}: segment {} is damaged at offset {} ({}); skipping its last {} "
                "bytes, whose records are lost",
                directory, path, segment.valid_bytes, damage, bad_bytes);
        }
        recovery.segments.push_back(std::move(segment));
    }
    recovery.next_sequence = WalSeq(std::max(floor, last_sequence + 1));
    return recovery;
}

}  // namespace narad::wal
