// A FileSystem for tests that wraps the real one and can (a) fail chosen operations on chosen
// paths, (b) tear a write, keeping only its first bytes, and (c) simulate a machine crash:
// drop_unsynced_data() cuts every file back to what its last sync covered, deletes files whose
// creation was never made durable by a directory sync, and undoes renames that no directory sync
// covered (LevelDB's fault_injection_test.cc). Thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "io/file_system.h"

namespace narad::io {

enum class FsOp { open, write, read, sync, truncate, rename, remove, sync_directory, list };

class FaultInjectionFileSystem final : public FileSystem {
  public:
    explicit FaultInjectionFileSystem(FileSystem& base = posix_file_system()) : base_(base) {}

    // The next `count` calls of `op` on a path containing `path_part` fail with `code`.
    void fail(FsOp op, std::string path_part, int count = 1, Errc code = Errc::io_error);
    // The next write to a path containing `path_part` writes only its first `keep_bytes` bytes and
    // then fails, as a crash or a full disk in the middle of a write would leave it.
    void tear_next_write(std::string path_part, size_t keep_bytes);
    // Removes every pending failure.
    void heal();

    // Simulates a crash of the machine; see the file comment. Open File objects must not be used
    // after.
    Status drop_unsynced_data();
    // Simulates a machine crash under a running process (the chaos suite's power cut): waits for
    // the operations in flight, drops unsynced data as drop_unsynced_data() does, and from then on
    // blocks every operation forever, so nothing reaches the disk past the crash point. The
    // caller ends the process next.
    Status crash();
    // Bytes the crashes so far dropped (cut off files and unsynced creates).
    uint64_t dropped_bytes() const {
        MutexLock lock(mutex_);
        return dropped_bytes_;
    }

    // How many times `op` was called (on any path).
    int count(FsOp op) const;
    // Bytes every read_at so far returned (on any path).
    uint64_t bytes_read() const { return bytes_read_.load(); }

    Result<std::unique_ptr<File>> open(const std::string& path, OpenOptions options) override;
    Status rename(const std::string& from, const std::string& to) override;
    Status remove(const std::string& path) override;
    Status remove_all(const std::string& path) override;
    Status create_directories(const std::string& path) override;
    Status sync_directory(const std::string& path) override;
    Result<std::vector<std::string>> list_directory(const std::string& path) override;
    Result<FileInfo> stat(const std::string& path) override;
    Status set_modified(const std::string& path, WallTime time) override;
    Result<SpaceInfo> space(const std::string& path) override;

  private:
    class TrackedFile;
    friend class TrackedFile;

    struct Failure {
        FsOp op;
        std::string path_part;
        int remaining;
        Errc code;
    };
    struct PendingRename {
        std::string from;
        std::string to;
        std::string backup;  // the replaced file's contents, kept as a hard link; empty if none
    };

    // Returns the injected failure for (op, path), consuming one use of it.
    Status check(FsOp op, const std::string& path);
    size_t take_tear(const std::string& path);  // bytes to keep, or SIZE_MAX for none
    void note_synced(const std::string& path, uint64_t size);
    void note_written(const std::string& path);
    Status drop_unsynced_locked();  // the caller holds the gate

    // Held shared by every operation and exclusively by crash(), which never releases it; once a
    // crash has begun, an operation that has not entered yet blocks forever.
    std::shared_lock<SharedMutex> enter() const;

    FileSystem& base_;
    mutable SharedMutex gate_;
    mutable Mutex crash_mutex_;  // locked by crash() and never unlocked
    std::atomic<bool> crashing_{false};
    mutable Mutex mutex_;
    std::vector<Failure> failures_ GUARDED_BY(mutex_);
    std::vector<std::pair<std::string, size_t>> tears_ GUARDED_BY(mutex_);
    std::map<std::string, uint64_t> synced_size_ GUARDED_BY(mutex_);  // files written to
    std::set<std::string> unsynced_creates_ GUARDED_BY(mutex_);       // entry not yet durable
    std::vector<PendingRename> pending_renames_ GUARDED_BY(mutex_);
    std::map<FsOp, int> counts_ GUARDED_BY(mutex_);
    std::atomic<uint64_t> bytes_read_{0};
    int backup_sequence_ GUARDED_BY(mutex_) = 0;
    uint64_t dropped_bytes_ GUARDED_BY(mutex_) = 0;
};

}  // namespace narad::io
