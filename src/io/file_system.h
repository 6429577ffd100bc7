// The FileSystem seam: every file Narad reads or writes goes through this interface, so tests can
// inject failures and simulate a crash that drops unsynced data (io/fault_injection_fs.h). Paths
// are plain strings; names reaching here were validated by the caller. File objects may be shared
// between threads for positional reads and writes (pread/pwrite); sync and truncate are the
// caller's to order.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace narad::io {

struct OpenOptions {
    bool write = false;       // open for writing as well as reading
    bool create = false;      // create the file if it is missing
    bool exclusive = false;   // with create: fail with already_exists if it exists
    bool truncate = false;    // truncate to zero length on open
    bool owner_only = false;  // with create: readable and writable by the owner only (0600)
};

inline constexpr OpenOptions kRead{};
inline constexpr OpenOptions kReadWrite{.write = true};
inline constexpr OpenOptions kCreate{.write = true, .create = true};
inline constexpr OpenOptions kCreateNew{.write = true, .create = true, .exclusive = true};

class File {
  public:
    virtual ~File() = default;
    virtual const std::string& path() const = 0;
    // Writes all of `data` at `offset`, or fails (a partial write is reported as a failure).
    virtual Status write_at(uint64_t offset, std::string_view data) = 0;
    // Writes the parts back to back starting at `offset` (one pwritev where possible).
    virtual Status write_at(uint64_t offset, std::span<const std::string_view> parts) = 0;
    // Reads up to `size` bytes at `offset`; returns the count read, short only at end of file.
    virtual Result<size_t> read_at(uint64_t offset, char* buffer, size_t size) const = 0;
    // Makes the file's data durable (fdatasync).
    virtual Status sync() = 0;
    virtual Status truncate(uint64_t size) = 0;
    virtual Result<uint64_t> size() const = 0;
};

struct FileInfo {
    uint64_t size = 0;
    WallTime modified;
    bool is_directory = false;
};

struct SpaceInfo {
    uint64_t capacity_bytes = 0;
    uint64_t available_bytes = 0;
};

class FileSystem {
  public:
    virtual ~FileSystem() = default;
    virtual Result<std::unique_ptr<File>> open(const std::string& path, OpenOptions options) = 0;
    // Atomically replaces `to` with `from` (rename(2)); the caller syncs the directory.
    virtual Status rename(const std::string& from, const std::string& to) = 0;
    // Removes a file or an empty directory; not_found if it is missing.
    virtual Status remove(const std::string& path) = 0;
    // Removes a directory tree; succeeds if it is already gone.
    virtual Status remove_all(const std::string& path) = 0;
    // Creates a directory and its missing parents; succeeds if it exists.
    virtual Status create_directories(const std::string& path) = 0;
    // Makes a directory's entries (creates, renames, removals) durable.
    virtual Status sync_directory(const std::string& path) = 0;
    // The names in a directory, sorted, without "." and "..".
    virtual Result<std::vector<std::string>> list_directory(const std::string& path) = 0;
    // not_found if the path does not exist.
    virtual Result<FileInfo> stat(const std::string& path) = 0;
    virtual Status set_modified(const std::string& path, WallTime time) = 0;
    virtual Result<SpaceInfo> space(const std::string& path) = 0;

    bool exists(const std::string& path) { return stat(path).is_ok(); }
};

// The real filesystem.
FileSystem& posix_file_system();

// "a/b" from ("a", "b").
std::string join_path(std::string_view directory, std::string_view name);
// "a" from "a/b"; "." from "b".
std::string parent_path(std::string_view path);

// Reads a whole file.
Result<std::string> read_file(FileSystem& fs, const std::string& path);

// Replaces `path` with `contents` so that after a crash the file holds either the old or the new
// contents, never a mix: write a temporary file beside it, sync it, rename it over `path`, sync the
// directory.
Status write_file_atomically(FileSystem& fs, const std::string& path, std::string_view contents);

}  // namespace narad::io
