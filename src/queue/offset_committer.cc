#include "queue/offset_committer.h"

#include <vector>

#include "base/log.h"
#include "base/metrics.h"
#include "base/mutex.h"
#include "queue/consumer_offset_file.h"

namespace narad::queue {
namespace {

// A disk that fails every write would otherwise log ten lines a second per partition.
constexpr Millis kFailureLogInterval{10'000};

metrics::Counter& write_errors() {
    static metrics::Counter& counter =
        metrics::Registry::global()
            .counter("narad_errors_total", "Errors by component and kind", {"component", "kind"})
            .with({"offset_committer", "write"});
    return counter;
}

}  // namespace

OffsetCommitter::OffsetCommitter(io::FileSystem& fs, Clock& clock, Millis interval)
    : fs_(fs), clock_(clock), task_("narad-offsets", clock, interval, [this] { tick(); }) {
    (void)write_errors();  // register the series at start-up, so /metrics shows it at 0
}

OffsetCommitter::~OffsetCommitter() { stop(); }

void OffsetCommitter::start() {
    MutexLock lifecycle(lifecycle_mutex_);
    task_.start();
}

void OffsetCommitter::stop() {
    MutexLock lifecycle(lifecycle_mutex_);
    task_.stop();
    // Failures are logged and counted by the pass; the caller of stop() cannot do more.
    (void)write_pass();
}

void OffsetCommitter::add(const std::string& path, std::shared_ptr<PartitionQueue> queue) {
    NARAD_ASSERT(queue != nullptr, "OffsetCommitter::add without a queue");
    MutexLock lock(mutex_);
    entries_[path] = Entry{std::move(queue), std::nullopt};
}

void OffsetCommitter::remove(const std::string& path, LastPosition last) {
    // write_mutex_ first: once remove() returns, no pass still holds the entry, so nothing writes
    // `path` again (the caller may be deleting the directory).
    MutexLock write_lock(write_mutex_);
    Entry entry;
    {
        MutexLock lock(mutex_);
        auto it = entries_.find(path);
        if (it == entries_.end()) return;
        entry = std::move(it->second);
        entries_.erase(it);
    }
    if (last == LastPosition::write)
        (void)write_if_changed(path, entry);  // a failure is logged and counted
}

Status OffsetCommitter::flush() { return write_pass(); }

uint64_t OffsetCommitter::failures() const { return failures_.load(); }

uint64_t OffsetCommitter::ticks() const {
    MutexLock lock(mutex_);
    return ticks_;
}

void OffsetCommitter::tick() {
    (void)write_pass();  // failures are logged and retried next tick
    MutexLock lock(mutex_);
    ++ticks_;
}

Status OffsetCommitter::write_pass() {
    MutexLock write_lock(write_mutex_);
    std::vector<std::pair<std::string, Entry>> snapshot;
    {
        MutexLock lock(mutex_);
        snapshot.assign(entries_.begin(), entries_.end());
    }
    Status first_error;
    for (auto& [path, entry] : snapshot) {
        Status status = write_if_changed(path, entry);
        if (!status.is_ok() && first_error.is_ok()) first_error = status;
    }
    return first_error;
}

Status OffsetCommitter::write_if_changed(const std::string& path, Entry& entry) {
    // The version is read before the position: if they race, the recorded version is the older
    // one and the next pass writes again; never the other way round.
    uint64_t version = entry.queue->position_version();
    if (entry.written_version == version) return Status::ok();
    Status status = write_consumer_position(fs_, path, entry.queue->position());
    if (!status.is_ok()) {
        note_failure(path, status);
        return status;
    }
    entry.written_version = version;
    MutexLock lock(mutex_);
    if (auto it = entries_.find(path); it != entries_.end() && it->second.queue == entry.queue) {
        it->second.written_version = version;
    }
    return Status::ok();
}

void OffsetCommitter::note_failure(const std::string& path, const Status& status) {
    failures_.fetch_add(1);
    write_errors().inc();
    MutexLock lock(log_mutex_);
    MonoTime now = clock_.now();
    if (last_failure_log_ && now - *last_failure_log_ < kFailureLogInterval) {
        ++unlogged_failures_;
        return;
    }
    NARAD_LOG_WARN("offset committer: writing {} failed: {} ({} more failures not logged)", path,
                   status.to_string(), unlogged_failures_);
    last_failure_log_ = now;
    unlogged_failures_ = 0;
}

}  // namespace narad::queue
