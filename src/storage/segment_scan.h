// Scanning a segment file frame by frame, as recovery and index rebuilding do. Two modes:
//  - active: stops at the first frame that is torn, corrupt or out of sequence; everything from
//    there on is the tail that recovery cuts.
//  - sealed: the segment's end offset is known (the next segment's base), so a corrupt frame is
//    skipped: the scan resyncs at the next frame whose header and checksum verify and whose
//    offsets fall where expected; the offsets in between are marked corrupt (their index entries
//    point at the damaged bytes, so a read reports them in ReadResult::corrupt).
// Also ChunkReader, the buffered positional reader both scans and reads use. Stateless functions;
// a ChunkReader belongs to one thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/file_system.h"
#include "storage/frame.h"

namespace narad::storage {

// Reads a file through a buffer so consecutive small frames cost one pread per chunk.
class ChunkReader {
  public:
    // `limit`: bytes of the file that may be read (the committed size).
    ChunkReader(const io::File& file, uint64_t limit, size_t chunk_bytes)
        : file_(file), limit_(limit), chunk_bytes_(chunk_bytes) {}

    // Up to `size` bytes at `position` (fewer only at the limit). Valid until the next call.
    Result<std::string_view> view(uint64_t position, size_t size);
    uint64_t limit() const { return limit_; }
    uint64_t reads() const { return reads_; }

  private:
    const io::File& file_;
    uint64_t limit_;
    size_t chunk_bytes_;
    std::unique_ptr<char[]> buffer_;
    size_t buffer_capacity_ = 0;
    size_t buffer_size_ = 0;  // bytes of the buffer holding the file from buffer_position_
    uint64_t buffer_position_ = 0;
    uint64_t reads_ = 0;
};

// What a scan found.
struct SegmentScan {
    std::vector<uint32_t> positions;  // file position of the frame holding base + i
    Offset end;                       // the offset after the last one scanned
    uint64_t good_bytes = 0;          // active: where the last good frame ends (the cut point)
    uint64_t file_bytes = 0;
    uint32_t corrupt_frames = 0;  // sealed: damaged regions skipped
    uint64_t corrupt_offsets = 0;
    std::vector<uint32_t> corrupt_positions;  // where damaged regions start (the first 1024)
};

// Called for every good frame in order (e.g. to replay producer stamps). A failed Status stops the
// scan with that error.
using FrameVisitor = std::function<Status(const FrameHeader&, std::string_view payload)>;

// Scans the active segment `base` from its start. Fails with corrupt if its first frame verifies
// but does not carry offset `base` (the file does not belong under its name).
Result<SegmentScan> scan_active_segment(const io::File& file, Offset base,
                                        const FrameVisitor& visitor);

// Scans a sealed segment that must hold exactly the offsets [base, end). Fails with corrupt if its
// first good frame at position 0 carries another offset, if frames overlap the next segment, or
// if the file ends cleanly short of `end` (a gap).
Result<SegmentScan> scan_sealed_segment(const io::File& file, Offset base, Offset end,
                                        const FrameVisitor& visitor);

// Segment file names: "<base:020>.log" and "<base:020>.index".
std::string segment_log_name(Offset base);
std::string segment_index_name(Offset base);
// The base offset a segment or index file name encodes, if `name` is one ("<20 digits><suffix>").
bool parse_segment_name(std::string_view name, std::string_view suffix, Offset& base);

}  // namespace narad::storage
