// StagedCopy: the destination's copy of one partition while it is being moved, in
// <data>/.moves/<topic>-<partition>/ (docs/moves.md, "The destination").
//
// A pass brings each staged segment up to the size a listing gave (never beyond it: committed
// bytes only), cuts back a segment listed shorter than staged, drops segments the source no longer
// lists (retention), and copies a sealed segment's index once the segment is whole, syncing both.
// verify() reopens the staged copy as a partition log and requires it to end exactly at the
// listing's high watermark. resume() picks up what an earlier run of the same move left staged
// (same topic incarnation, same source, per its staging.meta), cut back to whole frames, so a
// restarted destination fetches only what it lacks. finish() adds what the install needs: the
// consumer position (clamped below the high watermark), each segment's age as the source saw it,
// the sync of every file, and the move marker. install() swaps the copy into the partition's path;
// uninstall() takes it back.
//
// Not thread-safe: one move worker owns it.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "base/clock.h"
#include "base/ids.h"
#include "base/status.h"
#include "io/file_system.h"
#include "move/marker.h"
#include "move/source_client.h"

namespace narad::move {

struct CopyLimits {
    uint64_t chunk_bytes = 4ull << 20;
    uint64_t bytes_per_second = 0;  // 0: unthrottled (a throttle is for tests and benchmarks)
};

class StagedCopy {
  public:
    StagedCopy(io::FileSystem& fs, Clock& clock, std::string directory, CopyLimits limits);

    const std::string& directory() const { return directory_; }
    // Removes whatever is staged and starts empty, for a copy of `incarnation` from `source`
    // (recorded in the staging directory's staging.meta; the last ones given are kept).
    Status reset(const IncarnationId& incarnation, const NodeId& source);
    Status reset() { return reset(incarnation_, source_); }
    // Keeps what is staged when staging.meta names this incarnation and source (every segment
    // cut back to its last whole frame, everything but the segments dropped); otherwise reset().
    // Returns the staged bytes kept.
    Result<uint64_t> resume(const IncarnationId& incarnation, const NodeId& source);
    // One pass towards `listing`; returns the bytes copied. `cancelled` is checked per chunk;
    // `on_bytes` is told of every chunk (progress).
    Result<uint64_t> pass(SourceClient& source, const NodeId& node, const std::string& topic,
                          PartitionId partition, const TransferListing& listing,
                          const std::function<bool()>& cancelled,
                          const std::function<void(uint64_t)>& on_bytes);
    // Staged bytes (segments and indexes).
    uint64_t staged_bytes() const;
    // Opens and closes the staged copy once before the freeze, so the indexes and the dedup
    // sidecar it writes leave verify() only the tail to replay.
    Status warm_up();
    // corrupt unless the staged copy recovers to exactly `hwm`.
    Status verify(Offset hwm);
    // Where the staged copy recovers to (its next offset); corrupt when it does not open.
    Result<Offset> recovered_end();
    // Consumer position, segment ages (listing taken at `listed_at` on this node's wall clock),
    // syncs and the marker. Returns true when the frontier had to be clamped.
    Result<bool> finish(const TransferListing& listing, WallTime listed_at,
                        const MoveMarker& marker);

  private:
    struct Staged {
        uint64_t size = 0;
        uint64_t index_size = 0;
        bool complete = false;  // sealed, whole, index copied, synced
    };
    // Copies [staged, to) of one file, advancing `staged` chunk by chunk (so a failed pass keeps
    // what it wrote).
    Result<uint64_t> fetch(SourceClient& source, const NodeId& node, const std::string& topic,
                           PartitionId partition, Offset base, ChunkKind kind, uint64_t& staged,
                           uint64_t to, const std::function<bool()>& cancelled,
                           const std::function<void(uint64_t)>& on_bytes);
    void throttle(uint64_t bytes);
    // Opens the staged copy as a partition log (recovering it) and closes it again.
    Result<Offset> open_and_close();

    io::FileSystem& fs_;
    Clock& clock_;
    std::string directory_;
    CopyLimits limits_;
    std::map<Offset, Staged> staged_;
    IncarnationId incarnation_;
    NodeId source_;
    MonoTime throttle_start_;
    uint64_t throttled_bytes_ = 0;
};

// Installs the staged directory at `partition_directory`: an empty copy already there is removed;
// one holding unexpired records (`retention`, 0: forever) is set aside next to it as a
// quarantined copy (move/quarantine.h), logged at error: it may hold records nobody else has.
// Syncs the directories involved.
Status install_copy(io::FileSystem& fs, Clock& clock, const std::string& staged,
                    const std::string& partition_directory, Millis retention);
// Takes an installed copy back to staging (the flip did not commit).
Status uninstall_copy(io::FileSystem& fs, const std::string& partition_directory,
                      const std::string& staged);

}  // namespace narad::move
