#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/failpoint.h"
#include "io/file_system.h"

namespace narad::io {
namespace {

Status errno_status(int error, std::string_view what, std::string_view path) {
    std::string message(what);
    message += " ";
    message += path;
    message += ": ";
    message += std::strerror(error);
    switch (error) {
        case ENOENT:
            return Status(Errc::not_found, std::move(message));
        case EEXIST:
            return Status(Errc::already_exists, std::move(message));
        case ENOSPC:
        case EDQUOT:
            return Status(Errc::no_space, std::move(message));
        default:
            return Status(Errc::io_error, std::move(message));
    }
}

class PosixFile final : public File {
  public:
    PosixFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
    ~PosixFile() override { ::close(fd_); }

    const std::string& path() const override { return path_; }

    Status write_at(uint64_t offset, std::string_view data) override {
        const char* p = data.data();
        size_t left = data.size();
        while (left > 0) {
            ssize_t n = ::pwrite(fd_, p, left, static_cast<off_t>(offset));
            if (n < 0) {
                if (errno == EINTR) continue;
                return errno_status(errno, "write", path_);
            }
            p += n;
            left -= static_cast<size_t>(n);
            offset += static_cast<uint64_t>(n);
        }
        return Status::ok();
    }

    Status write_at(uint64_t offset, std::span<const std::string_view> parts) override {
        constexpr size_t kMaxIov = 64;
        size_t index = 0;
        size_t skip = 0;  // bytes of parts[index] already written
        while (index < parts.size()) {
            iovec iov[kMaxIov];
            size_t count = 0;
            for (size_t i = index; i < parts.size() && count < kMaxIov; ++i) {
                size_t start = i == index ? skip : 0;
                if (parts[i].size() == start) continue;
                iov[count].iov_base = const_cast<char*>(parts[i].data() + start);
                iov[count].iov_len = parts[i].size() - start;
                ++count;
            }
            if (count == 0) break;
            ssize_t n = ::pwritev(fd_, iov, static_cast<int>(count), static_cast<off_t>(offset));
            if (n < 0) {
                if (errno == EINTR) continue;
                return errno_status(errno, "write", path_);
            }
            offset += static_cast<uint64_t>(n);
            size_t advance = static_cast<size_t>(n);
            while (index < parts.size() && advance > 0) {
                size_t left = parts[index].size() - skip;
                if (advance >= left) {
                    advance -= left;
                    ++index;
                    skip = 0;
                } else {
                    skip += advance;
                    advance = 0;
                }
            }
            while (index < parts.size() && parts[index].size() == skip) {
                ++index;
                skip = 0;
            }
        }
        return Status::ok();
    }

    Result<size_t> read_at(uint64_t offset, char* buffer, size_t size) const override {
        size_t done = 0;
        while (done < size) {
            ssize_t n = ::pread(fd_, buffer + done, size - done, static_cast<off_t>(offset + done));
            if (n < 0) {
                if (errno == EINTR) continue;
                return errno_status(errno, "read", path_);
            }
            if (n == 0) break;
            done += static_cast<size_t>(n);
        }
        return done;
    }

    Status sync() override {
        NARAD_FAILPOINT_RETURN("io.sync");
        if (::fdatasync(fd_) != 0) return errno_status(errno, "sync", path_);
        return Status::ok();
    }

    Status truncate(uint64_t size) override {
        if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
            return errno_status(errno, "truncate", path_);
        }
        return Status::ok();
    }

    Result<uint64_t> size() const override {
        struct stat st;
        if (::fstat(fd_, &st) != 0) return errno_status(errno, "stat", path_);
        return static_cast<uint64_t>(st.st_size);
    }

  private:
    std::string path_;
    int fd_;
};

class PosixFileSystem final : public FileSystem {
  public:
    Result<std::unique_ptr<File>> open(const std::string& path, OpenOptions options) override {
        int flags = O_CLOEXEC | (options.write ? O_RDWR : O_RDONLY);
        if (options.create) flags |= O_CREAT;
        if (options.create && options.exclusive) flags |= O_EXCL;
        if (options.truncate) flags |= O_TRUNC;
        int fd = ::open(path.c_str(), flags, options.owner_only ? 0600 : 0644);
        if (fd < 0) return errno_status(errno, "open", path);
        return std::unique_ptr<File>(std::make_unique<PosixFile>(path, fd));
    }

    Status rename(const std::string& from, const std::string& to) override {
        if (::rename(from.c_str(), to.c_str()) != 0) return errno_status(errno, "rename", from);
        return Status::ok();
    }

    Status remove(const std::string& path) override {
        if (::remove(path.c_str()) != 0) return errno_status(errno, "remove", path);
        return Status::ok();
    }

    Status remove_all(const std::string& path) override {
        std::error_code error;
        std::filesystem::remove_all(path, error);
        if (error) return errno_status(error.value(), "remove", path);
        return Status::ok();
    }

    Status create_directories(const std::string& path) override {
        std::error_code error;
        std::filesystem::create_directories(path, error);
        if (error) return errno_status(error.value(), "create directory", path);
        return Status::ok();
    }

    Status sync_directory(const std::string& path) override {
        int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) return errno_status(errno, "open directory", path);
        int rc = ::fsync(fd);
        int error = errno;
        ::close(fd);
        if (rc != 0) return errno_status(error, "sync directory", path);
        return Status::ok();
    }

    Result<std::vector<std::string>> list_directory(const std::string& path) override {
        DIR* dir = ::opendir(path.c_str());
        if (dir == nullptr) return errno_status(errno, "list", path);
        std::vector<std::string> names;
        while (dirent* entry = ::readdir(dir)) {
            std::string_view name(entry->d_name);
            if (name == "." || name == "..") continue;
            names.emplace_back(name);
        }
        ::closedir(dir);
        std::sort(names.begin(), names.end());
        return names;
    }

    Result<FileInfo> stat(const std::string& path) override {
        struct stat st;
        if (::stat(path.c_str(), &st) != 0) return errno_status(errno, "stat", path);
        FileInfo info;
        info.size = static_cast<uint64_t>(st.st_size);
        info.is_directory = S_ISDIR(st.st_mode);
        info.modified = WallTime(std::chrono::seconds(st.st_mtim.tv_sec) +
                                 std::chrono::nanoseconds(st.st_mtim.tv_nsec));
        return info;
    }

    Status set_modified(const std::string& path, WallTime time) override {
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch());
        timespec times[2];
        times[0].tv_sec = 0;
        times[0].tv_nsec = UTIME_OMIT;
        times[1].tv_sec = static_cast<time_t>(ns.count() / 1'000'000'000);
        times[1].tv_nsec = static_cast<long>(ns.count() % 1'000'000'000);
        if (::utimensat(AT_FDCWD, path.c_str(), times, 0) != 0) {
            return errno_status(errno, "set time of", path);
        }
        return Status::ok();
    }

    Result<SpaceInfo> space(const std::string& path) override {
        struct statvfs st;
        if (::statvfs(path.c_str(), &st) != 0) return errno_status(errno, "statvfs", path);
        SpaceInfo info;
        info.capacity_bytes = static_cast<uint64_t>(st.f_blocks) * st.f_frsize;
        info.available_bytes = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
        return info;
    }
};

}  // namespace

FileSystem& posix_file_system() {
    static PosixFileSystem fs;
    return fs;
}

std::string join_path(std::string_view directory, std::string_view name) {
    std::string out(directory);
    if (!out.empty() && out.back() != '/') out += '/';
    out += name;
    return out;
}

std::string parent_path(std::string_view path) {
    auto slash = path.find_last_of('/');
    if (slash == std::string_view::npos) return ".";
    if (slash == 0) return "/";
    return std::string(path.substr(0, slash));
}

Result<std::string> read_file(FileSystem& fs, const std::string& path) {
    NARAD_ASSIGN_OR_RETURN(auto file, fs.open(path, kRead));
    NARAD_ASSIGN_OR_RETURN(uint64_t size, file->size());
    std::string contents(size, '\0');
    NARAD_ASSIGN_OR_RETURN(size_t read, file->read_at(0, contents.data(), size));
    contents.resize(read);
    return contents;
}

Status write_file_atomically(FileSystem& fs, const std::string& path, std::string_view contents) {
    std::string temporary = path + ".tmp";
    {
        NARAD_ASSIGN_OR_RETURN(
            auto file,
            fs.open(temporary, OpenOptions{.write = true, .create = true, .truncate = true}));
        NARAD_RETURN_IF_ERROR(file->write_at(0, contents));
        NARAD_RETURN_IF_ERROR(file->sync());
    }
    NARAD_FAILPOINT_RETURN("io.atomic_write.before_rename");
    NARAD_RETURN_IF_ERROR(fs.rename(temporary, path));
    return fs.sync_directory(parent_path(path));
}

}  // namespace narad::io
