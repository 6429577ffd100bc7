// The ingress WAL's implementation: the group-commit thread, per-segment commit tracking and
// segment deletion. Recovery lives in wal_recovery.cc, the byte format in wal_format.cc.
#include "wal/ingress_wal.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <thread>

#include "base/failpoint.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/mutex.h"
#include "base/thread_pool.h"
#include "wal/wal_format.h"
#include "wal/wal_recovery.h"

namespace narad::wal {
namespace {

struct WalMetrics {
    metrics::Histogram& fsync_seconds;
    metrics::Gauge& pending_records;
    metrics::Gauge& backlog_records;  // Narad's name for the same count
    metrics::Gauge& failed;
    metrics::Gauge& segments;
    metrics::Family<metrics::Counter>& rejections;

    static WalMetrics& get() {
        auto& registry = metrics::Registry::global();
        static WalMetrics m{
            registry
                .histogram("narad_wal_fsync_duration_seconds",
                           "Time the ingress WAL's group-commit fdatasync took.",
                           metrics::latency_bounds())
                .get(),
            registry
                .gauge("narad_wal_pending_records",
                       "Records durable in the ingress WAL and not yet committed to a partition.")
                .get(),
            registry
                .gauge("narad_ingress_dispatch_backlog_records",
                       "Records accepted into the ingress WAL and not yet committed to their "
                       "partitions.")
                .get(),
            registry
                .gauge("narad_ingress_wal_failed",
                       "1 once the ingress WAL has failed and refuses produces until a restart.")
                .get(),
            registry.gauge("narad_wal_segments", "Segment files of the ingress WAL.").get(),
            registry.counter("narad_produce_rejections_total",
                             "Produce requests refused before they were written, by reason.",
                             {"topic", "reason"}),
        };
        return m;
    }
};

enum class Tally { add, remove };

// The record, whether held by value or shared.
const IngressRecord& record_of(const IngressRecord& record) { return record; }
const IngressRecord& record_of(const std::shared_ptr<const IngressRecord>& record) {
    return *record;
}

double seconds_between(MonoTime start, MonoTime end) {
    return std::chrono::duration<double>(end - start).count();
}

IngressId random_ingress_id() {
    std::random_device device;
    uint64_t value = 0;
    while (value == 0) value = (uint64_t{device()} << 32) | device();
    return IngressId(value);
}

// Reads the WAL's id, creating it for a fresh directory (docs/formats/wal.md, "Directory").
Result<IngressId> load_or_create_id(io::FileSystem& fs, const std::string& directory,
                                    const std::vector<std::string>& names) {
    std::string path = io::join_path(directory, "id");
    bool has_id = false;
    bool has_segments = false;
    for (const auto& name : names) {
        has_id |= name == "id";
        has_segments |= format::parse_segment_file_name(name).has_value();
    }
    if (has_id) {
        NARAD_ASSIGN_OR_RETURN(std::string bytes, io::read_file(fs, path));
        return format::decode_id_file(bytes);
    }
    if (has_segments) {
        // A new id would make the partition logs take the old records again as new ones.
        return Status(Errc::corrupt, "ingress WAL " + directory + " has segments but no id file");
    }
    IngressId id = random_ingress_id();
    NARAD_RETURN_IF_ERROR(io::write_file_atomically(fs, path, format::encode_id_file(id)));
    NARAD_LOG_INFO("ingress WAL {}: created with id {:016x}", directory, id.value());
    return id;
}

// Orders (topic, partition) pairs, with string_view lookups.
struct PartitionLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
        int order = std::string_view(a.first).compare(std::string_view(b.first));
        return order < 0 || (order == 0 && a.second < b.second);
    }
};

class IngressWalImpl final : public IngressWal {
  public:
    IngressWalImpl(io::FileSystem& fs, Clock& clock, std::string directory, WalOptions options,
                   IngressId id)
        : fs_(fs),
          clock_(clock),
          directory_(std::move(directory)),
          options_(options),
          id_(id),
          metrics_(WalMetrics::get()) {}

    ~IngressWalImpl() override {
        stop();
        MutexLock lock(mutex_);
        metrics_.pending_records.add(-static_cast<double>(pending_.size()));
        metrics_.backlog_records.add(-static_cast<double>(pending_.size()));
        metrics_.segments.add(-static_cast<double>(segments_.size()));
    }

    Status adopt(Recovery recovery);
    // adopt()'s work on the recovered segments; the empty ones are left for it to delete.
    Status adopt_segments(Recovery& recovery, std::vector<std::string>& empty_segments)
        REQUIRES(mutex_);

    IngressId id() const override { return id_; }
    using IngressWal::append;
    void append(std::vector<IngressRecord> records, Completion done, Admission admission) override;
    void set_consumer(Consumer consumer) override;
    void mark_committed(std::span<const WalSeq> sequences) override;
    WalStats stats() const override;
    bool holds(std::string_view topic, PartitionId partition) const override;
    void start() override;
    void stop() override;

  private:
    struct Request {
        std::vector<IngressRecord> records;
        Completion done;
        uint64_t bytes = 0;
    };
    struct Segment {
        std::string path;
        uint64_t uncommitted = 0;  // records in it not yet marked committed
        MonoTime created;
    };
    struct Pending {
        std::shared_ptr<const IngressRecord> record;
        uint64_t bytes = 0;
        uint64_t segment = 0;  // key of its segment in segments_
    };

    void run();
    void commit_group(std::vector<Request> group);
    Status write_and_sync(std::string_view bytes);
    Status roll_if_due();
    Result<std::unique_ptr<io::File>> create_segment(WalSeq first);
    void delete_files(std::vector<std::string> paths);
    void deliver(std::vector<std::shared_ptr<const IngressRecord>> records);
    // Counts records into or out of held_, one map step per run of one partition.
    template <typename Records>
    void count_held(const Records& records, Tally tally) REQUIRES(mutex_);

    io::FileSystem& fs_;
    Clock& clock_;
    const std::string directory_;
    const WalOptions options_;
    const IngressId id_;
    WalMetrics& metrics_;

    // Used by the sync thread only (and by adopt() before it exists).
    std::unique_ptr<io::File> active_file_;
    uint64_t active_bytes_ = 0;  // the active segment's size: header and durable records

    mutable Mutex mutex_;
    CondVar work_cv_;  // signals queue_ and stopping_
    std::deque<Request> queue_ GUARDED_BY(mutex_);
    uint64_t queued_bytes_ GUARDED_BY(mutex_) = 0;  // queued or being written
    uint64_t queued_records_ GUARDED_BY(mutex_) = 0;
    std::map<uint64_t, Pending> pending_ GUARDED_BY(mutex_);  // durable, uncommitted, by sequence
    uint64_t pending_bytes_ GUARDED_BY(mutex_) = 0;
    std::map<uint64_t, Segment> segments_ GUARDED_BY(mutex_);  // by first sequence
    // Records accepted and not yet committed, per partition (queued or pending); no zero entries.
    std::map<std::pair<std::string, uint32_t>, uint64_t, PartitionLess> held_ GUARDED_BY(mutex_);
    uint64_t active_first_ GUARDED_BY(mutex_) = 0;   // the active segment's key
    uint64_t next_sequence_ GUARDED_BY(mutex_) = 1;  // only grows (format doc)
    Status failed_ GUARDED_BY(mutex_);               // set once, never cleared
    bool accepting_ GUARDED_BY(mutex_) = true;       // false after stop()
    bool stopping_ GUARDED_BY(mutex_) = false;
    std::vector<std::string> undeleted_ GUARDED_BY(mutex_);  // removals to retry
    std::thread thread_;                                     // started and joined by start()/stop()
    Mutex lifecycle_mutex_;                                  // serialises start() and stop()

    // Deliveries are serialised so the consumer sees sequence order. Taken before mutex_.
    Mutex consumer_mutex_;
    Consumer consumer_ GUARDED_BY(consumer_mutex_);
    uint64_t delivered_through_ GUARDED_BY(consumer_mutex_) = 0;  // highest sequence handed over
};

Status IngressWalImpl::adopt(Recovery recovery) {
    std::vector<std::string> empty_segments;
    {
        // Nothing else runs yet; the lock keeps the rule for mutex_'s data checkable.
        MutexLock lock(mutex_);
        NARAD_RETURN_IF_ERROR(adopt_segments(recovery, empty_segments));
    }
    delete_files(std::move(empty_segments));
    return Status::ok();
}

Status IngressWalImpl::adopt_segments(Recovery& recovery,
                                      std::vector<std::string>& empty_segments) {
    uint64_t next = recovery.next_sequence.value();
    bool reuse_last = false;
    MonoTime now = clock_.now();
    for (size_t i = 0; i < recovery.segments.size(); ++i) {
        RecoveredSegment& segment = recovery.segments[i];
        bool is_last = i + 1 == recovery.segments.size();
        if (is_last && segment.records.empty() && segment.first.value() == next) {
            reuse_last = true;  // becomes the active segment below
            continue;
        }
        if (segment.records.empty()) {
            empty_segments.push_back(segment.path);
            continue;
        }
        if (is_last && segment.valid_bytes < segment.file_bytes) {
            // Cut the tail for good: once this segment is no longer the last, a leftover tail
            // would read as damage in an earlier segment.
            NARAD_ASSIGN_OR_RETURN(auto file, fs_.open(segment.path, io::kReadWrite));
            NARAD_RETURN_IF_ERROR(file->truncate(segment.valid_bytes));
            NARAD_RETURN_IF_ERROR(file->sync());
        }
        uint64_t key = segment.first.value();
        segments_[key] = Segment{segment.path, segment.records.size(), now};
        for (auto& record : segment.records) {
            uint64_t bytes = format::frame_bytes(*record);
            pending_bytes_ += bytes;
            uint64_t sequence = record->sequence.value();
            held_[{record->topic, record->partition.value()}] += 1;
            pending_[sequence] = Pending{std::move(record), bytes, key};
        }
    }
    std::string active_path = io::join_path(directory_, format::segment_file_name(WalSeq(next)));
    if (reuse_last) {
        const RecoveredSegment& last = recovery.segments.back();
        NARAD_ASSIGN_OR_RETURN(active_file_, fs_.open(active_path, io::kReadWrite));
        if (last.valid_bytes != format::kSegmentHeaderBytes ||
            last.file_bytes != format::kSegmentHeaderBytes) {
            NARAD_RETURN_IF_ERROR(active_file_->truncate(0));
            NARAD_RETURN_IF_ERROR(
                active_file_->write_at(0, format::encode_segment_header(WalSeq(next))));
            NARAD_RETURN_IF_ERROR(active_file_->sync());
        }
        NARAD_RETURN_IF_ERROR(fs_.sync_directory(directory_));
    } else {
        NARAD_ASSIGN_OR_RETURN(active_file_, create_segment(WalSeq(next)));
    }
    active_bytes_ = format::kSegmentHeaderBytes;
    segments_[next] = Segment{active_path, 0, now};
    active_first_ = next;
    next_sequence_ = next;
    metrics_.pending_records.add(static_cast<double>(pending_.size()));
    metrics_.backlog_records.add(static_cast<double>(pending_.size()));
    metrics_.segments.add(static_cast<double>(segments_.size()));
    NARAD_LOG_INFO("ingress WAL {}: recovered {} records in {} segments, next sequence {}",
                   directory_, pending_.size(), segments_.size(), next);
    return Status::ok();
}

void IngressWalImpl::append(std::vector<IngressRecord> records, Completion done,
                            Admission admission) {
    if (records.empty()) {
        done(Status::ok());
        return;
    }
    Request request;
    int64_t now_ms = clock_.wall_ms();
    for (auto& record : records) {
        if (Status valid = format::check_limits(record); !valid.is_ok()) {
            done(valid);
            return;
        }
        if (record.timestamp_ms == 0) record.timestamp_ms = now_ms;
        request.bytes += format::frame_bytes(record);
    }
    request.records = std::move(records);
    request.done = std::move(done);
    Status refused;
    {
        MutexLock lock(mutex_);
        if (!failed_.is_ok()) {
            refused = Status(Errc::io_error, "ingress WAL failed: " + failed_.message());
        } else if (!accepting_) {
            refused = Status(Errc::shutting_down, "ingress WAL is stopped");
        } else if (admission == Admission::normal &&
                   (pending_bytes_ + queued_bytes_ >= options_.max_pending_bytes ||
                    pending_.size() + queued_records_ >= options_.max_pending_records)) {
            refused = Status(
                Errc::unavailable,
                fmt::format("ingress backlog full: {} records ({} bytes) are waiting "
                            "to be committed to their partitions",
                            pending_.size() + queued_records_, pending_bytes_ + queued_bytes_));
            std::string topic = request.records.empty() ? "" : request.records.front().topic;
            metrics_.rejections.with({topic, "backlog_full"}).inc();
        } else {
            queued_bytes_ += request.bytes;
            queued_records_ += request.records.size();
            count_held(request.records, Tally::add);
            queue_.push_back(std::move(request));
            work_cv_.notify_one();
            return;
        }
    }
    request.done(refused);
}

void IngressWalImpl::set_consumer(Consumer consumer) {
    MutexLock consumer_lock(consumer_mutex_);
    consumer_ = std::move(consumer);
    if (!consumer_) return;
    std::vector<std::shared_ptr<const IngressRecord>> records;
    {
        MutexLock lock(mutex_);
        records.reserve(pending_.size());
        for (const auto& [sequence, pending] : pending_) records.push_back(pending.record);
    }
    if (records.empty()) return;
    delivered_through_ = std::max(delivered_through_, records.back()->sequence.value());
    consumer_(std::move(records));
}

void IngressWalImpl::deliver(std::vector<std::shared_ptr<const IngressRecord>> records) {
    MutexLock consumer_lock(consumer_mutex_);
    if (!consumer_) return;  // kept in pending_; set_consumer hands them over
    // set_consumer may already have handed over some of these (it snapshots pending_).
    std::erase_if(records, [&](const auto& r) REQUIRES(consumer_mutex_) {
        return r->sequence.value() <= delivered_through_;
    });
    if (records.empty()) return;
    delivered_through_ = records.back()->sequence.value();
    consumer_(std::move(records));
}

void IngressWalImpl::mark_committed(std::span<const WalSeq> sequences) {
    std::vector<std::string> deletable;
    {
        MutexLock lock(mutex_);
        uint64_t committed = 0;
        for (WalSeq sequence : sequences) {
            auto it = pending_.find(sequence.value());
            if (it == pending_.end()) continue;  // already committed: marking is idempotent
            auto segment = segments_.find(it->second.segment);
            NARAD_ASSERT(segment != segments_.end(), "pending record without its segment");
            pending_bytes_ -= it->second.bytes;
            count_held(std::span(&it->second.record, 1), Tally::remove);
            pending_.erase(it);
            ++committed;
            if (--segment->second.uncommitted == 0 && segment->first != active_first_) {
                deletable.push_back(segment->second.path);
                segments_.erase(segment);
                metrics_.segments.add(-1);
            }
        }
        metrics_.pending_records.add(-static_cast<double>(committed));
        metrics_.backlog_records.add(-static_cast<double>(committed));
    }
    if (!deletable.empty()) delete_files(std::move(deletable));
}

WalStats IngressWalImpl::stats() const {
    MutexLock lock(mutex_);
    WalStats stats;
    stats.pending_records = pending_.size();
    stats.pending_bytes = pending_bytes_;
    stats.segments = static_cast<uint32_t>(segments_.size());
    stats.next_sequence = WalSeq(next_sequence_);
    return stats;
}

bool IngressWalImpl::holds(std::string_view topic, PartitionId partition) const {
    MutexLock lock(mutex_);
    return held_.find(std::pair(topic, partition.value())) != held_.end();
}

template <typename Records>
void IngressWalImpl::count_held(const Records& records, Tally tally) {
    auto run_start = records.begin();
    while (run_start != records.end()) {
        const IngressRecord& first = record_of(*run_start);
        auto run_end = run_start;
        uint64_t count = 0;
        while (run_end != records.end() && record_of(*run_end).partition == first.partition &&
               record_of(*run_end).topic == first.topic) {
            ++run_end;
            ++count;
        }
        auto key = std::pair(std::string_view(first.topic), first.partition.value());
        auto it = held_.find(key);
        if (tally == Tally::add) {
            if (it == held_.end()) it = held_.emplace(std::pair(first.topic, key.second), 0).first;
            it->second += count;
        } else {
            NARAD_ASSERT(it != held_.end() && it->second >= count, "held count below zero");
            it->second -= count;
            if (it->second == 0) held_.erase(it);
        }
        run_start = run_end;
    }
}

void IngressWalImpl::start() {
    MutexLock lifecycle(lifecycle_mutex_);
    if (thread_.joinable()) return;
    {
        MutexLock lock(mutex_);
        accepting_ = true;
        stopping_ = false;
    }
    thread_ = named_thread("narad-wal", [this] { run(); });
}

void IngressWalImpl::stop() {
    MutexLock lifecycle(lifecycle_mutex_);
    std::deque<Request> abandoned;
    {
        MutexLock lock(mutex_);
        accepting_ = false;
        stopping_ = true;
        work_cv_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
    {
        MutexLock lock(mutex_);
        abandoned.swap(queue_);
        queued_bytes_ = 0;
        queued_records_ = 0;
        for (const auto& request : abandoned) {
            count_held(request.records, Tally::remove);
        }
    }
    for (auto& request : abandoned) {
        request.done(Status(Errc::shutting_down, "ingress WAL stopped before the write"));
    }
}

void IngressWalImpl::run() {
    MutexLock lock(mutex_);
    while (true) {
        work_cv_.wait(lock, [&]() REQUIRES(mutex_) { return stopping_ || !queue_.empty(); });
        if (stopping_) return;  // stop() fails what is still queued
        // Take whole requests up to the group limits, and always at least one.
        std::vector<Request> group;
        uint64_t bytes = 0;
        uint64_t records = 0;
        while (!queue_.empty()) {
            const Request& next = queue_.front();
            if (!group.empty() && (bytes + next.bytes > options_.max_group_bytes ||
                                   records + next.records.size() > options_.max_group_records)) {
                break;
            }
            bytes += next.bytes;
            records += next.records.size();
            group.push_back(std::move(queue_.front()));
            queue_.pop_front();
        }
        lock.unlock();
        commit_group(std::move(group));
        lock.lock();
    }
}

void IngressWalImpl::commit_group(std::vector<Request> group) {
    uint64_t group_bytes = 0;
    uint64_t group_records = 0;
    for (const auto& request : group) {
        group_bytes += request.bytes;
        group_records += request.records.size();
    }
    Status status;
    uint64_t first = 0;
    {
        MutexLock lock(mutex_);
        status = failed_;
    }
    if (status.is_ok()) status = roll_if_due();
    if (status.is_ok()) {
        MutexLock lock(mutex_);
        first = next_sequence_;
        next_sequence_ += group_records;  // never handed out again, even if this group fails
    }
    std::vector<std::shared_ptr<const IngressRecord>> durable;
    bool encoded = status.is_ok();  // the records are moved into `durable`
    if (encoded) {
        std::string buffer;
        buffer.reserve(group_bytes);
        durable.reserve(group_records);
        uint64_t sequence = first;
        for (auto& request : group) {
            for (auto& record : request.records) {
                record.sequence = WalSeq(sequence++);
                format::append_frame(buffer, record);
                durable.push_back(std::make_shared<const IngressRecord>(std::move(record)));
            }
        }
        status = write_and_sync(buffer);
        if (status.is_ok()) {
            active_bytes_ += buffer.size();
        } else {
            // The records were not accepted: cut them so they are never recovered.
            Status truncated = active_file_->truncate(active_bytes_);
            NARAD_LOG_ERROR("ingress WAL {}: group of {} records failed ({}); truncate: {}",
                            directory_, group_records, status.to_string(), truncated.to_string());
            MutexLock lock(mutex_);
            if (!truncated.is_ok()) {
                failed_ = Status(Errc::io_error,
                                 "cannot truncate a failed write: " + truncated.to_string());
                metrics_.failed.set(1);
            }
            // The records moved into `durable`; none of them was accepted after all.
            count_held(durable, Tally::remove);
            durable.clear();
        }
    }
    {
        MutexLock lock(mutex_);
        queued_bytes_ -= group_bytes;
        queued_records_ -= group_records;
        if (!encoded) {
            // Refused before its records were framed: none of them was accepted after all.
            for (const auto& request : group) count_held(request.records, Tally::remove);
        }
        for (const auto& record : durable) {
            uint64_t bytes = format::frame_bytes(*record);
            pending_bytes_ += bytes;
            pending_[record->sequence.value()] = Pending{record, bytes, active_first_};
        }
        segments_.at(active_first_).uncommitted += durable.size();
        metrics_.pending_records.add(static_cast<double>(durable.size()));
        metrics_.backlog_records.add(static_cast<double>(durable.size()));
    }
    if (!status.is_ok()) status = status.with_context("ingress WAL write failed");
    for (auto& request : group) request.done(status);
    if (!durable.empty()) deliver(std::move(durable));
}

Status IngressWalImpl::write_and_sync(std::string_view bytes) {
    NARAD_RETURN_IF_ERROR(active_file_->write_at(active_bytes_, bytes));
    NARAD_FAILPOINT_RETURN("wal.after_write");
    MonoTime start = clock_.now();
    Status synced = active_file_->sync();
    metrics_.fsync_seconds.observe(seconds_between(start, clock_.now()));
    NARAD_RETURN_IF_ERROR(synced);
    NARAD_FAILPOINT_RETURN("wal.after_sync");
    return Status::ok();
}

Status IngressWalImpl::roll_if_due() {
    uint64_t first = 0;
    {
        MutexLock lock(mutex_);
        const Segment& active = segments_.at(active_first_);
        // A segment with no records never rolls: its successor would get the same name.
        bool has_records = active_bytes_ > format::kSegmentHeaderBytes;
        bool full = active_bytes_ >= options_.segment_bytes_max;
        bool reclaimable =
            active.uncommitted == 0 && (active_bytes_ >= options_.early_roll_bytes ||
                                        clock_.now() - active.created >= options_.early_roll_age);
        if (!has_records || !(full || reclaimable)) return Status::ok();
        first = next_sequence_;
    }
    NARAD_ASSIGN_OR_RETURN(auto file, create_segment(WalSeq(first)));
    std::vector<std::string> deletable;
    {
        MutexLock lock(mutex_);
        auto old = segments_.find(active_first_);
        segments_[first] = Segment{
            io::join_path(directory_, format::segment_file_name(WalSeq(first))), 0, clock_.now()};
        metrics_.segments.add(1);
        active_first_ = first;
        if (old->second.uncommitted == 0) {
            deletable.push_back(old->second.path);
            segments_.erase(old);
            metrics_.segments.add(-1);
        }
    }
    active_file_ = std::move(file);
    active_bytes_ = format::kSegmentHeaderBytes;
    if (!deletable.empty()) delete_files(std::move(deletable));
    return Status::ok();
}

Result<std::unique_ptr<io::File>> IngressWalImpl::create_segment(WalSeq first) {
    std::string path = io::join_path(directory_, format::segment_file_name(first));
    NARAD_ASSIGN_OR_RETURN(auto file, fs_.open(path, io::kCreateNew));
    // The header and the directory entry are durable before any record goes in, so a synced
    // record can never vanish with its file.
    Status status = file->write_at(0, format::encode_segment_header(first));
    if (status.is_ok()) status = file->sync();
    if (status.is_ok()) status = fs_.sync_directory(directory_);
    if (!status.is_ok()) {
        file.reset();
        (void)fs_.remove(path);
        return status.with_context("creating WAL segment " + path);
    }
    return file;
}

void IngressWalImpl::delete_files(std::vector<std::string> paths) {
    {
        MutexLock lock(mutex_);
        paths.insert(paths.end(), undeleted_.begin(), undeleted_.end());
        undeleted_.clear();
    }
    if (paths.empty()) return;
    std::vector<std::string> failed;
    for (const auto& path : paths) {
        Status removed = fs_.remove(path);
        if (!removed.is_ok() && removed.code() != Errc::not_found) {
            // Harmless if it stays: its records are recovered and deduplicated again. Retried at
            // the next deletion.
            NARAD_LOG_WARN("ingress WAL {}: cannot delete committed segment: {}", directory_,
                           removed.to_string());
            failed.push_back(path);
        }
    }
    if (Status synced = fs_.sync_directory(directory_); !synced.is_ok()) {
        NARAD_LOG_WARN("ingress WAL {}: directory sync after deleting segments: {}", directory_,
                       synced.to_string());
    }
    if (!failed.empty()) {
        MutexLock lock(mutex_);
        undeleted_.insert(undeleted_.end(), failed.begin(), failed.end());
    }
}

}  // namespace

Result<std::unique_ptr<IngressWal>> IngressWal::open(io::FileSystem& fs, Clock& clock,
                                                     std::string directory, WalOptions options) {
    NARAD_RETURN_IF_ERROR(fs.create_directories(directory));
    NARAD_RETURN_IF_ERROR(fs.sync_directory(io::parent_path(directory)));
    NARAD_ASSIGN_OR_RETURN(auto names, fs.list_directory(directory));
    if (std::find(names.begin(), names.end(), "id.tmp") != names.end()) {
        (void)fs.remove(io::join_path(directory, "id.tmp"));  // an interrupted id write
    }
    NARAD_ASSIGN_OR_RETURN(IngressId id, load_or_create_id(fs, directory, names));
    NARAD_ASSIGN_OR_RETURN(Recovery recovery, recover_segments(fs, directory, names));
    auto wal = std::make_unique<IngressWalImpl>(fs, clock, std::move(directory), options, id);
    NARAD_RETURN_IF_ERROR(wal->adopt(std::move(recovery)));
    return std::unique_ptr<IngressWal>(std::move(wal));
}

}  // namespace narad::wal
