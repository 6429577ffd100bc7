#include "storage/log_manager.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "base/log.h"
#include "base/mutex.h"
#include "base/names.h"
#include "storage/segment_scan.h"
#include "storage/storage_metrics.h"

namespace narad::storage {

// Each (topic, partition) has at most one entry, and an entry holds at most one log: a log is
// opened and closed outside the mutex, with the entry marked opening/closing meanwhile so that no
// second instance of the same log can be opened until the first is fully closed.
class LogManager::Impl {
  public:
    Impl(io::FileSystem& fs, Clock& clock, std::string data_directory, LogOptions options)
        : fs_(fs),
          clock_(clock),
          data_directory_(std::move(data_directory)),
          options_(options),
          metrics_(storage_metrics()),
          listener_(std::make_shared<ListenerSlot>()) {}

    std::string topics_directory() const { return io::join_path(data_directory_, "topics"); }
    std::string topic_directory(std::string_view topic) const {
        return io::join_path(topics_directory(), topic);
    }
    std::string partition_directory(std::string_view topic, PartitionId partition) const {
        return io::join_path(topic_directory(topic), fmt::format("p{:05}", partition.value()));
    }

    Result<std::shared_ptr<PartitionLog>> get(std::string_view topic, PartitionId partition,
                                              CreateIfMissing create) {
        NARAD_RETURN_IF_ERROR(validate_topic_name(topic));
        Key key{std::string(topic), partition.value()};
        MutexLock lock(mutex_);
        while (true) {
            if (removing_.contains(key.topic)) {
                changed_.wait(lock);
                continue;
            }
            auto it = entries_.find(key);
            if (it == entries_.end()) break;
            if (it->second.state == State::open) {
                it->second.last_used = clock_.now();
                return lend(it->second);
            }
            changed_.wait(lock);  // being opened or closed by another thread
        }
        entries_[key] = Entry{State::opening, nullptr, {}, clock_.now()};
        lock.unlock();
        auto opened = open_log(key, create);
        lock.lock();
        auto it = entries_.find(key);
        NARAD_ASSERT(it != entries_.end() && it->second.state == State::opening,
                     "an opening log entry vanished");
        changed_.notify_all();
        if (!opened.is_ok()) {
            entries_.erase(it);
            return opened.status();
        }
        it->second.state = State::open;
        it->second.log = std::move(*opened);
        it->second.last_used = clock_.now();
        return lend(it->second);
    }

    std::shared_ptr<PartitionLog> get_if_open(std::string_view topic, PartitionId partition) const {
        MutexLock lock(mutex_);
        auto it = entries_.find(Key{std::string(topic), partition.value()});
        if (it == entries_.end() || it->second.state != State::open) return nullptr;
        return lend(it->second);
    }

    size_t evict_idle(Millis idle) {
        MonoTime now = clock_.now();
        std::vector<std::pair<Key, std::shared_ptr<PartitionLog>>> victims;
        {
            MutexLock lock(mutex_);
            for (auto& [key, entry] : entries_) {
                // Nobody holds it, and it is lent only under this mutex, so it stays unheld until
                // the entry is marked closing.
                if (entry.state == State::open && entry.lent.expired() &&
                    now - entry.last_used > idle) {
                    entry.state = State::closing;
                    victims.emplace_back(key, entry.log);
                }
            }
        }
        close_and_erase(victims);
        metrics_.idle_logs_evicted.inc(static_cast<double>(victims.size()));
        return victims.size();
    }

    Result<RetentionResult> sweep_closed(std::string_view topic, PartitionId partition,
                                         Millis retention) {
        NARAD_RETURN_IF_ERROR(validate_topic_name(topic));
        Key key{std::string(topic), partition.value()};
        {
            MutexLock lock(mutex_);
            if (entries_.contains(key)) return RetentionResult{};  // open: the regular pass's
        }
        NARAD_ASSIGN_OR_RETURN(bool expired, holds_expired_segment(key, retention));
        if (!expired) return RetentionResult{};
        NARAD_ASSIGN_OR_RETURN(auto log, get(topic, partition, CreateIfMissing::no));
        auto result = log->enforce_retention(retention);
        log.reset();
        // Closed again as an idle log closes: only while nothing else holds it, so a produce or
        // consume that opened it meanwhile keeps it open.
        std::vector<std::pair<Key, std::shared_ptr<PartitionLog>>> victims;
        {
            MutexLock lock(mutex_);
            auto it = entries_.find(key);
            if (it != entries_.end() && it->second.state == State::open &&
                it->second.lent.expired()) {
                it->second.state = State::closing;
                victims.emplace_back(key, it->second.log);
            }
        }
        close_and_erase(victims);
        if (result.is_ok()) metrics_.cold_retention_swept.inc();
        return result;
    }

    Status remove_topic(std::string_view topic) {
        NARAD_RETURN_IF_ERROR(validate_topic_name(topic));
        std::string name(topic);
        std::vector<std::pair<Key, std::shared_ptr<PartitionLog>>> victims;
        {
            MutexLock lock(mutex_);
            changed_.wait(lock, [&]() REQUIRES(mutex_) {
                return !removing_.contains(name) && settled(&name);
            });
            removing_.insert(name);
            for (auto& [key, entry] : entries_) {
                if (key.topic != name) continue;
                entry.state = State::closing;
                victims.emplace_back(key, entry.log);
            }
        }
        close_and_erase(victims);
        metrics_.remove_topic(name);
        Status status = fs_.remove_all(topic_directory(topic));
        if (status.is_ok() && fs_.exists(topics_directory())) {
            status = fs_.sync_directory(topics_directory());
        }
        MutexLock lock(mutex_);
        removing_.erase(name);
        changed_.notify_all();
        return status;
    }

    Status close_partition(std::string_view topic, PartitionId partition) {
        Key key{std::string(topic), partition.value()};
        std::shared_ptr<PartitionLog> victim;
        std::weak_ptr<PartitionLog> lent;
        // A log in use (a read in progress holds it) is waited for, briefly; it cannot gain new
        // holders once it is marked closing, and its last holder letting go wakes this wait.
        MonoTime give_up = clock_.now() + Millis(5'000);
        {
            MutexLock lock(mutex_);
            changed_.wait(lock, [&]() REQUIRES(mutex_) {
                auto it = entries_.find(key);
                return it == entries_.end() || it->second.state == State::open;
            });
            auto it = entries_.find(key);
            if (it == entries_.end()) return Status::ok();
            it->second.state = State::closing;
            victim = it->second.log;
            lent = it->second.lent;
        }
        bool released;
        {
            MutexLock lock(released_->mutex);
            released =
                clock_.wait_until(lock, released_->wake, give_up, [&] { return lent.expired(); });
        }
        if (!released) {
            MutexLock lock(mutex_);
            entries_[key].state = State::open;
            changed_.notify_all();
            return Status(Errc::unavailable,
                          "partition log " + victim->directory() + " is still in use; not closed");
        }
        std::vector<std::pair<Key, std::shared_ptr<PartitionLog>>> victims{{key, victim}};
        victim.reset();
        close_and_erase(victims);
        return Status::ok();
    }

    void close_all() {
        std::vector<std::pair<Key, std::shared_ptr<PartitionLog>>> victims;
        {
            MutexLock lock(mutex_);
            changed_.wait(lock, [&]() REQUIRES(mutex_) { return settled(nullptr); });
            for (auto& [key, entry] : entries_) {
                entry.state = State::closing;
                victims.emplace_back(key, entry.log);
            }
        }
        close_and_erase(victims);
    }

    size_t open_count() const {
        MutexLock lock(mutex_);
        size_t count = 0;
        for (const auto& [key, entry] : entries_) count += entry.state == State::open ? 1 : 0;
        return count;
    }

    void set_append_listener(
        std::function<void(const std::string&, PartitionId, Offset)> listener) {
        MutexLock lock(listener_->mutex);
        listener_->function = std::move(listener);
    }

  private:
    struct Key;
    // Whether a closed partition's oldest segment is sealed (a later one exists) and last written
    // before now - retention; read from the directory, without opening the log.
    Result<bool> holds_expired_segment(const Key& key, Millis retention) {
        std::string directory = partition_directory(key.topic, PartitionId(key.partition));
        auto names = fs_.list_directory(directory);
        if (!names.is_ok()) {
            return names.code() == Errc::not_found ? Result<bool>(false) : names.status();
        }
        std::vector<Offset> bases;
        for (const std::string& name : *names) {
            Offset base(0);
            if (parse_segment_name(name, kLogSuffix, base)) bases.push_back(base);
        }
        if (bases.size() < 2) return false;
        Offset oldest = *std::min_element(bases.begin(), bases.end());
        NARAD_ASSIGN_OR_RETURN(io::FileInfo info,
                               fs_.stat(io::join_path(directory, segment_log_name(oldest))));
        return info.modified < clock_.wall_now() - retention;
    }

    struct Key {
        std::string topic;
        uint32_t partition;
        auto operator<=>(const Key&) const = default;
    };
    enum class State { opening, open, closing };
    struct Entry {
        State state;
        std::shared_ptr<PartitionLog> log;         // the map's own reference, never handed out
        mutable std::weak_ptr<PartitionLog> lent;  // the handle callers hold, while any does
        MonoTime last_used;
    };
    // Rung whenever the last holder of a lent log lets it go. Shared with every handle, as a handle
    // may outlive the manager.
    struct Released {
        Mutex mutex;
        CondVar wake;
    };

    // The log as callers get it: one handle per entry at a time (a copy of the live one, or a new
    // one), whose last holder letting go rings `released_`.
    std::shared_ptr<PartitionLog> lend(const Entry& entry) const REQUIRES(mutex_) {
        if (auto held = entry.lent.lock()) return held;
        std::shared_ptr<PartitionLog> handle(
            entry.log.get(), [log = entry.log, released = released_](PartitionLog*) {
                MutexLock lock(released->mutex);
                released->wake.notify_all();
            });
        entry.lent = handle;
        return handle;
    }
    // Shared with every log's listener, so one set_append_listener() reaches logs already open.
    struct ListenerSlot {
        Mutex mutex;
        std::function<void(const std::string&, PartitionId, Offset)> function GUARDED_BY(mutex);
    };

    // No entry (of `topic`, or of any topic if null) is being opened or closed.
    bool settled(const std::string* topic) const REQUIRES(mutex_) {
        for (const auto& [key, entry] : entries_) {
            if (topic != nullptr && key.topic != *topic) continue;
            if (entry.state != State::open) return false;
        }
        return true;
    }

    void close_and_erase(std::vector<std::pair<Key, std::shared_ptr<PartitionLog>>>& victims) {
        for (auto& [key, log] : victims) {
            Status status = log->close();
            if (!status.is_ok()) {
                NARAD_LOG_WARN("closing partition log {}: {}", log->directory(),
                               status.to_string());
            }
        }
        MutexLock lock(mutex_);
        for (auto& [key, log] : victims) entries_.erase(key);
        changed_.notify_all();
    }

    // Creates the missing directories of `directory` from `data_directory_` down, syncing each
    // new one and its parent so the entries survive a crash.
    Status ensure_directory(const std::string& directory) {
        if (fs_.exists(directory)) return Status::ok();
        std::vector<std::string> missing;
        for (std::string path = directory; !fs_.exists(path); path = io::parent_path(path)) {
            missing.push_back(path);
            if (path == data_directory_ || path == "." || path == "/") break;
        }
        NARAD_RETURN_IF_ERROR(fs_.create_directories(directory));
        for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
            NARAD_RETURN_IF_ERROR(fs_.sync_directory(*it));
            NARAD_RETURN_IF_ERROR(fs_.sync_directory(io::parent_path(*it)));
        }
        return Status::ok();
    }

    Result<std::shared_ptr<PartitionLog>> open_log(const Key& key, CreateIfMissing create) {
        std::string directory = partition_directory(key.topic, PartitionId(key.partition));
        if (create == CreateIfMissing::no) {
            if (!fs_.exists(directory)) {
                return Status(Errc::not_found, fmt::format("partition {} of topic {} has no log",
                                                           key.partition, key.topic));
            }
        } else {
            NARAD_RETURN_IF_ERROR(ensure_directory(directory));
        }
        LogOptions options = options_;
        options.metrics_topic = key.topic;
        options.metrics_partition = std::to_string(key.partition);
        NARAD_ASSIGN_OR_RETURN(auto log, PartitionLog::open(fs_, clock_, directory, options));
        log->set_append_listener([slot = listener_, topic = key.topic,
                                  partition = PartitionId(key.partition)](Offset hwm) {
            std::function<void(const std::string&, PartitionId, Offset)> function;
            {
                MutexLock lock(slot->mutex);
                function = slot->function;
            }
            if (function) function(topic, partition, hwm);
        });
        return std::shared_ptr<PartitionLog>(std::move(log));
    }

    io::FileSystem& fs_;
    Clock& clock_;
    const std::string data_directory_;
    const LogOptions options_;
    StorageMetrics& metrics_;
    std::shared_ptr<ListenerSlot> listener_;
    const std::shared_ptr<Released> released_ = std::make_shared<Released>();

    mutable Mutex mutex_;
    CondVar changed_;  // an entry changed state, or a topic removal ended
    std::map<Key, Entry> entries_ GUARDED_BY(mutex_);
    std::set<std::string> removing_ GUARDED_BY(mutex_);  // topics being removed
};

LogManager::LogManager(io::FileSystem& fs, Clock& clock, std::string data_directory,
                       LogOptions options)
    : impl_(std::make_unique<Impl>(fs, clock, std::move(data_directory), options)) {}

LogManager::~LogManager() { impl_->close_all(); }

std::string LogManager::topic_directory(std::string_view topic) const {
    return impl_->topic_directory(topic);
}

std::string LogManager::partition_directory(std::string_view topic, PartitionId partition) const {
    return impl_->partition_directory(topic, partition);
}

Result<std::shared_ptr<PartitionLog>> LogManager::get(std::string_view topic, PartitionId partition,
                                                      CreateIfMissing create) {
    return impl_->get(topic, partition, create);
}

std::shared_ptr<PartitionLog> LogManager::get_if_open(std::string_view topic,
                                                      PartitionId partition) const {
    return impl_->get_if_open(topic, partition);
}

size_t LogManager::evict_idle(Millis idle) { return impl_->evict_idle(idle); }

Status LogManager::remove_topic(std::string_view topic) { return impl_->remove_topic(topic); }

Result<RetentionResult> LogManager::sweep_closed(std::string_view topic, PartitionId partition,
                                                 Millis retention) {
    return impl_->sweep_closed(topic, partition, retention);
}

Status LogManager::close_partition(std::string_view topic, PartitionId partition) {
    return impl_->close_partition(topic, partition);
}

void LogManager::close_all() { impl_->close_all(); }

size_t LogManager::open_count() const { return impl_->open_count(); }

void LogManager::set_append_listener(
    std::function<void(const std::string&, PartitionId, Offset)> listener) {
    impl_->set_append_listener(std::move(listener));
}

}  // namespace narad::storage
