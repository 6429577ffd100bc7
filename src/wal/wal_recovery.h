// Reads the ingress WAL's segments at open (docs/formats/wal.md, "Recovery"): the records each one
// holds, where its good bytes end, and the next sequence to issue. Reading only: the caller
// (IngressWal::open) cuts the torn tail and deletes empty segments. Called from one thread, before
// the WAL serves anyone.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/ids.h"
#include "base/status.h"
#include "io/file_system.h"
#include "wal/ingress_wal.h"

namespace narad::wal {

struct RecoveredSegment {
    WalSeq first;  // from the file name
    std::string path;
    uint64_t file_bytes = 0;
    uint64_t valid_bytes = 0;  // header and whole good records; 0 if the header is bad
    std::vector<std::shared_ptr<const IngressRecord>> records;  // sequence order
};

struct Recovery {
    std::vector<RecoveredSegment> segments;  // by first sequence
    WalSeq next_sequence;                    // never 0
    uint64_t tail_bytes_cut = 0;             // bad bytes at the end of the last segment
    uint32_t damaged_segments = 0;           // earlier segments whose rest was skipped
};

// Reads the segments named in `names` (a directory listing; other names are ignored).
Result<Recovery> recover_segments(io::FileSystem& fs, const std::string& directory,
                                  const std::vector<std::string>& names);

}  // namespace narad::wal
