// OffsetCommitter: the periodic component that persists every registered partition's consumer
// position (every 100 ms of its clock by default), skipping queues whose position has not changed
// since the last write. It runs on its own thread; add/remove/flush may be called from any thread.
//
// A failed write is retried at the next tick (the queue still counts as changed), logged at most
// once per kFailureLogInterval and counted in narad_errors_total{component="offset_committer",
// kind="write"}. Writes are serialised (write_mutex_), so a tick, flush() and remove() never write
// the same file at once.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/periodic.h"
#include "io/file_system.h"
#include "queue/partition_queue.h"

namespace narad::queue {

inline constexpr Millis kDefaultCommitInterval{100};

// What becomes of a partition's last position when it stops being tracked: written, or discarded
// because the partition's data is being deleted or replaced.
enum class LastPosition { write, discard };

class OffsetCommitter {
  public:
    // Passes run every `interval` of `clock`, which also rate-limits the failure log.
    OffsetCommitter(io::FileSystem& fs, Clock& clock, Millis interval);
    ~OffsetCommitter();  // stops
    OffsetCommitter(const OffsetCommitter&) = delete;
    OffsetCommitter& operator=(const OffsetCommitter&) = delete;

    void start();
    void stop();  // writes what changed, then stops the thread

    // Persists `queue`'s position to `path` from now on.
    void add(const std::string& path, std::shared_ptr<PartitionQueue> queue);
    // Stops tracking the path, writing or discarding its last position as `last` says.
    void remove(const std::string& path, LastPosition last);
    // Writes every changed position now; returns the first error.
    Status flush();
    // Write failures so far (also logged).
    uint64_t failures() const;

    // Passes of the background thread completed so far.
    uint64_t ticks() const;

  private:
    struct Entry {
        std::shared_ptr<PartitionQueue> queue;
        std::optional<uint64_t> written_version;  // none until the first successful write
    };

    // The background pass.
    void tick();
    // Writes every changed queue; returns the first error.
    Status write_pass();
    // Writes `entry`'s position to `path` if it changed since `entry.written_version`; on success
    // records the version written (in `entry` and, if still registered, in entries_). Caller holds
    // write_mutex_.
    Status write_if_changed(const std::string& path, Entry& entry);
    void note_failure(const std::string& path, const Status& status);

    io::FileSystem& fs_;
    Clock& clock_;

    // Held across a whole write pass; taken before mutex_ when both are needed.
    Mutex write_mutex_ ACQUIRED_BEFORE(mutex_);

    mutable Mutex mutex_;
    std::map<std::string, Entry> entries_ GUARDED_BY(mutex_);
    uint64_t ticks_ GUARDED_BY(mutex_) = 0;
    PeriodicTask task_;      // started and stopped under lifecycle_mutex_
    Mutex lifecycle_mutex_;  // serialises start() and stop()

    std::atomic<uint64_t> failures_{0};
    Mutex log_mutex_;
    std::optional<MonoTime> last_failure_log_ GUARDED_BY(log_mutex_);
    uint64_t unlogged_failures_ GUARDED_BY(log_mutex_) = 0;
};

}  // namespace narad::queue
