#include "io/fault_injection_fs.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/mutex.h"

namespace narad::io {

class FaultInjectionFileSystem::TrackedFile final : public File {
  public:
    TrackedFile(FaultInjectionFileSystem& fs, std::unique_ptr<File> base)
        : fs_(fs), base_(std::move(base)) {}

    const std::string& path() const override { return base_->path(); }

    Status write_at(uint64_t offset, std::string_view data) override {
        auto entered = fs_.enter();
        NARAD_RETURN_IF_ERROR(fs_.check(FsOp::write, path()));
        fs_.note_written(path());
        size_t keep = fs_.take_tear(path());
        if (keep != SIZE_MAX) {
            NARAD_RETURN_IF_ERROR(
                base_->write_at(offset, data.substr(0, std::min(keep, data.size()))));
            return Status(Errc::io_error, "torn write (injected) to " + path());
        }
        return base_->write_at(offset, data);
    }

    Status write_at(uint64_t offset, std::span<const std::string_view> parts) override {
        std::string joined;
        for (auto part : parts) joined.append(part);
        return write_at(offset, std::string_view(joined));
    }

    Result<size_t> read_at(uint64_t offset, char* buffer, size_t size) const override {
        NARAD_RETURN_IF_ERROR(fs_.check(FsOp::read, path()));
        NARAD_ASSIGN_OR_RETURN(size_t read, base_->read_at(offset, buffer, size));
        fs_.bytes_read_ += read;
        return read;
    }

    Status sync() override {
        auto entered = fs_.enter();
        NARAD_RETURN_IF_ERROR(fs_.check(FsOp::sync, path()));
        NARAD_RETURN_IF_ERROR(base_->sync());
        NARAD_ASSIGN_OR_RETURN(uint64_t size, base_->size());
        fs_.note_synced(path(), size);
        return Status::ok();
    }

    Status truncate(uint64_t size) override {
        auto entered = fs_.enter();
        NARAD_RETURN_IF_ERROR(fs_.check(FsOp::truncate, path()));
        fs_.note_written(path());
        return base_->truncate(size);
    }

    Result<uint64_t> size() const override { return base_->size(); }

  private:
    FaultInjectionFileSystem& fs_;
    std::unique_ptr<File> base_;
};

void FaultInjectionFileSystem::fail(FsOp op, std::string path_part, int count, Errc code) {
    MutexLock lock(mutex_);
    failures_.push_back(Failure{op, std::move(path_part), count, code});
}

void FaultInjectionFileSystem::tear_next_write(std::string path_part, size_t keep_bytes) {
    MutexLock lock(mutex_);
    tears_.emplace_back(std::move(path_part), keep_bytes);
}

void FaultInjectionFileSystem::heal() {
    MutexLock lock(mutex_);
    failures_.clear();
    tears_.clear();
}

int FaultInjectionFileSystem::count(FsOp op) const {
    MutexLock lock(mutex_);
    auto it = counts_.find(op);
    return it == counts_.end() ? 0 : it->second;
}

Status FaultInjectionFileSystem::check(FsOp op, const std::string& path) {
    MutexLock lock(mutex_);
    ++counts_[op];
    for (auto it = failures_.begin(); it != failures_.end(); ++it) {
        if (it->op != op || path.find(it->path_part) == std::string::npos) continue;
        Errc code = it->code;
        if (--it->remaining <= 0) failures_.erase(it);
        return Status(code, "injected failure on " + path);
    }
    return Status::ok();
}

size_t FaultInjectionFileSystem::take_tear(const std::string& path) {
    MutexLock lock(mutex_);
    for (auto it = tears_.begin(); it != tears_.end(); ++it) {
        if (path.find(it->first) == std::string::npos) continue;
        size_t keep = it->second;
        tears_.erase(it);
        return keep;
    }
    return SIZE_MAX;
}

void FaultInjectionFileSystem::note_synced(const std::string& path, uint64_t size) {
    MutexLock lock(mutex_);
    synced_size_[path] = size;
}

void FaultInjectionFileSystem::note_written(const std::string& path) {
    MutexLock lock(mutex_);
    synced_size_.try_emplace(path, UINT64_MAX);  // UINT64_MAX: written, size at open not yet known
}

Result<std::unique_ptr<File>> FaultInjectionFileSystem::open(const std::string& path,
                                                             OpenOptions options) {
    auto entered = enter();
    NARAD_RETURN_IF_ERROR(check(FsOp::open, path));
    bool existed = base_.exists(path);
    NARAD_ASSIGN_OR_RETURN(auto file, base_.open(path, options));
    if (options.write) {
        NARAD_ASSIGN_OR_RETURN(uint64_t size, file->size());
        MutexLock lock(mutex_);
        auto [it, inserted] = synced_size_.try_emplace(path, size);
        if (!inserted && it->second == UINT64_MAX) it->second = size;
        if (!existed) {
            unsynced_creates_.insert(path);
            synced_size_[path] = 0;
        } else if (options.truncate) {
            synced_size_[path] = 0;
        }
    }
    return std::unique_ptr<File>(std::make_unique<TrackedFile>(*this, std::move(file)));
}

Status FaultInjectionFileSystem::rename(const std::string& from, const std::string& to) {
    auto entered = enter();
    NARAD_RETURN_IF_ERROR(check(FsOp::rename, from));
    PendingRename pending{from, to, ""};
    {
        MutexLock lock(mutex_);
        if (base_.exists(to) && !base_.stat(to)->is_directory) {
            pending.backup = to + ".fault-backup-" + std::to_string(++backup_sequence_);
            if (::link(to.c_str(), pending.backup.c_str()) != 0) {
                return Status(Errc::io_error, std::string("link: ") + std::strerror(errno));
            }
        }
    }
    NARAD_RETURN_IF_ERROR(base_.rename(from, to));
    MutexLock lock(mutex_);
    // The renamed file carries its sync state to its new name.
    if (auto it = synced_size_.find(from); it != synced_size_.end()) {
        synced_size_[to] = it->second;
        synced_size_.erase(it);
    }
    if (unsynced_creates_.erase(from) > 0) unsynced_creates_.insert(to);
    pending_renames_.push_back(std::move(pending));
    return Status::ok();
}

Status FaultInjectionFileSystem::remove(const std::string& path) {
    auto entered = enter();
    NARAD_RETURN_IF_ERROR(check(FsOp::remove, path));
    NARAD_RETURN_IF_ERROR(base_.remove(path));
    MutexLock lock(mutex_);
    synced_size_.erase(path);
    unsynced_creates_.erase(path);
    return Status::ok();
}

Status FaultInjectionFileSystem::remove_all(const std::string& path) {
    auto entered = enter();
    NARAD_RETURN_IF_ERROR(check(FsOp::remove, path));
    NARAD_RETURN_IF_ERROR(base_.remove_all(path));
    MutexLock lock(mutex_);
    std::string prefix = path + "/";
    std::erase_if(synced_size_,
                  [&](const auto& e) { return e.first == path || e.first.starts_with(prefix); });
    std::erase_if(unsynced_creates_,
                  [&](const std::string& p) { return p == path || p.starts_with(prefix); });
    return Status::ok();
}

Status FaultInjectionFileSystem::create_directories(const std::string& path) {
    auto entered = enter();
    return base_.create_directories(path);
}

Status FaultInjectionFileSystem::sync_directory(const std::string& path) {
    auto entered = enter();
    NARAD_RETURN_IF_ERROR(check(FsOp::sync_directory, path));
    NARAD_RETURN_IF_ERROR(base_.sync_directory(path));
    MutexLock lock(mutex_);
    std::erase_if(unsynced_creates_, [&](const std::string& p) { return parent_path(p) == path; });
    std::vector<PendingRename> still_pending;
    for (auto& pending : pending_renames_) {
        if (parent_path(pending.to) == path) {
            if (!pending.backup.empty()) (void)base_.remove(pending.backup);
        } else {
            still_pending.push_back(std::move(pending));
        }
    }
    pending_renames_ = std::move(still_pending);
    return Status::ok();
}

Result<std::vector<std::string>> FaultInjectionFileSystem::list_directory(const std::string& path) {
    NARAD_RETURN_IF_ERROR(check(FsOp::list, path));
    return base_.list_directory(path);
}

Result<FileInfo> FaultInjectionFileSystem::stat(const std::string& path) {
    return base_.stat(path);
}

Status FaultInjectionFileSystem::set_modified(const std::string& path, WallTime time) {
    auto entered = enter();
    return base_.set_modified(path, time);
}

Result<SpaceInfo> FaultInjectionFileSystem::space(const std::string& path) {
    return base_.space(path);
}

// Neither enter() nor crash() can be followed by the analysis: after a crash both block on, or
// take, locks that are never released, on purpose.
std::shared_lock<SharedMutex> FaultInjectionFileSystem::enter() const NO_THREAD_SAFETY_ANALYSIS {
    if (crashing_.load()) crash_mutex_.lock();  // blocks forever: the crash holds it
    return std::shared_lock(gate_);
}

Status FaultInjectionFileSystem::crash() NO_THREAD_SAFETY_ANALYSIS {
    crash_mutex_.lock();  // never unlocked
    crashing_ = true;
    gate_.lock();  // never unlocked: nothing after the crash point reaches the disk
    return drop_unsynced_locked();
}

Status FaultInjectionFileSystem::drop_unsynced_data() {
    auto entered = enter();
    return drop_unsynced_locked();
}

Status FaultInjectionFileSystem::drop_unsynced_locked() {
    MutexLock lock(mutex_);
    // Undo renames no directory sync covered, newest first.
    for (auto it = pending_renames_.rbegin(); it != pending_renames_.rend(); ++it) {
        if (base_.exists(it->to)) NARAD_RETURN_IF_ERROR(base_.rename(it->to, it->from));
        if (!it->backup.empty()) NARAD_RETURN_IF_ERROR(base_.rename(it->backup, it->to));
        if (auto s = synced_size_.find(it->to); s != synced_size_.end()) {
            synced_size_[it->from] = s->second;
            synced_size_.erase(s);
        }
        if (unsynced_creates_.erase(it->to) > 0) unsynced_creates_.insert(it->from);
    }
    pending_renames_.clear();
    for (const auto& path : unsynced_creates_) {
        if (auto info = base_.stat(path); info.is_ok()) dropped_bytes_ += info->size;
        (void)base_.remove(path);
        synced_size_.erase(path);
    }
    unsynced_creates_.clear();
    for (const auto& [path, size] : synced_size_) {
        if (size == UINT64_MAX || !base_.exists(path)) continue;
        auto file = base_.open(path, kReadWrite);
        if (!file.is_ok()) return file.status();
        NARAD_ASSIGN_OR_RETURN(uint64_t current, (*file)->size());
        if (current > size) {
            NARAD_RETURN_IF_ERROR((*file)->truncate(size));
            dropped_bytes_ += current - size;
        }
    }
    synced_size_.clear();
    return Status::ok();
}

}  // namespace narad::io
