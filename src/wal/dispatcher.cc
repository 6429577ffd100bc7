#include "wal/dispatcher.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "base/failpoint.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/mutex.h"
#include "base/thread_pool.h"

namespace narad::wal {
namespace {

struct DispatcherMetrics {
    metrics::Gauge& queued_records;
    metrics::Histogram& commit_seconds;
    metrics::Counter& retries;
    metrics::Counter& dropped;
    metrics::Counter& rerouted;

    static DispatcherMetrics& get() {
        auto& registry = metrics::Registry::global();
        static DispatcherMetrics m{
            registry
                .gauge("narad_dispatcher_queued_records",
                       "Durable ingress records waiting to be committed to their partitions.")
                .get(),
            registry
                .histogram("narad_dispatcher_commit_duration_seconds",
                           "Time one batch commit to a partition took.", metrics::latency_bounds())
                .get(),
            registry
                .counter("narad_dispatcher_retries_total",
                         "Partition batches scheduled for a retry after a failed commit.")
                .get(),
            registry
                .counter("narad_dispatcher_dropped_records_total",
                         "Ingress records dropped because their topic, partition or incarnation "
                         "no longer exists.")
                .get(),
            registry
                .counter("narad_dispatcher_rerouted_records_total",
                         "Ingress records re-appended for a live sibling partition because "
                         "their partition's owner is dead.")
                .get(),
        };
        return m;
    }
};

struct PartitionKey {
    std::string topic;
    PartitionId partition;
    auto operator<=>(const PartitionKey&) const = default;
};

constexpr uint32_t kMaxThreads = 64;
constexpr size_t kMaxWarnedTopics = 10'000;

}  // namespace

class Dispatcher::Impl {
  public:
    Impl(Clock& clock, IngressWal& wal, PartitionCommitter& committer, DispatcherOptions options)
        : clock_(clock),
          wal_(wal),
          committer_(committer),
          options_(options),
          metrics_(DispatcherMetrics::get()) {
        options_.threads = std::clamp<uint32_t>(options_.threads, 1, kMaxThreads);
        options_.max_batch_records = std::max<uint32_t>(options_.max_batch_records, 1);
    }

    void start();
    void stop();
    DispatcherStats stats() const;

  private:
    struct PartitionQueue {
        std::deque<std::shared_ptr<const IngressRecord>> records;  // sequence order
        bool busy = false;     // a worker is committing the front batch
        bool ready = false;    // listed in ready_
        bool waiting = false;  // listed in waiting_
        // Since when commits have been refused because the partition is frozen for a move.
        std::optional<MonoTime> frozen_since;
    };
    using PartitionMap = std::map<PartitionKey, PartitionQueue>;
    using PartitionIt = PartitionMap::iterator;  // stable until erased

    void enqueue(std::vector<std::shared_ptr<const IngressRecord>> records);
    void work();
    void promote_due_retries(MonoTime now) REQUIRES(mutex_);
    void finish_batch(PartitionIt it, const Status& status, size_t count, bool rerouted)
        REQUIRES(mutex_);
    // Appends the batch to the WAL again for `target` and waits until it is durable.
    Status reappend(const std::vector<std::shared_ptr<const IngressRecord>>& batch,
                    PartitionId target, std::string_view why);

    Clock& clock_;
    IngressWal& wal_;
    PartitionCommitter& committer_;
    DispatcherOptions options_;
    DispatcherMetrics& metrics_;

    mutable Mutex mutex_;
    CondVar work_cv_;                                   // signals ready_, waiting_, stopping_
    PartitionMap partitions_ GUARDED_BY(mutex_);        // only those with records
    std::deque<PartitionIt> ready_ GUARDED_BY(mutex_);  // have work, nobody on it
    std::multimap<MonoTime, PartitionIt> waiting_ GUARDED_BY(mutex_);  // by retry due time
    bool stopping_ GUARDED_BY(mutex_) = false;
    std::set<std::string> warned_topics_ GUARDED_BY(mutex_);
    DispatcherStats stats_ GUARDED_BY(mutex_);
    std::vector<std::thread> workers_;  // owned by start()/stop()
    Mutex lifecycle_mutex_;             // serialises start() and stop()
};

void Dispatcher::Impl::start() {
    MutexLock lifecycle(lifecycle_mutex_);
    if (!workers_.empty()) return;
    {
        MutexLock lock(mutex_);
        stopping_ = false;
    }
    // The WAL hands over everything it holds uncommitted, recovered records first.
    wal_.set_consumer([this](auto records) { enqueue(std::move(records)); });
    for (uint32_t i = 0; i < options_.threads; ++i) {
        workers_.push_back(named_thread("narad-dispatch", [this] { work(); }));
    }
}

void Dispatcher::Impl::stop() {
    MutexLock lifecycle(lifecycle_mutex_);
    if (workers_.empty()) return;
    {
        MutexLock lock(mutex_);
        stopping_ = true;
        work_cv_.notify_all();
    }
    for (auto& worker : workers_) worker.join();
    workers_.clear();
    // After this returns the WAL never calls enqueue() again; what is queued here stays pending
    // in the WAL and is handed over again by the next start().
    wal_.set_consumer(nullptr);
    MutexLock lock(mutex_);
    metrics_.queued_records.add(-static_cast<double>(stats_.queued_records));
    stats_.queued_records = 0;
    ready_.clear();
    waiting_.clear();
    partitions_.clear();
}

DispatcherStats Dispatcher::Impl::stats() const {
    MutexLock lock(mutex_);
    DispatcherStats stats = stats_;
    stats.partitions_waiting_retry = static_cast<uint32_t>(waiting_.size());
    return stats;
}

void Dispatcher::Impl::enqueue(std::vector<std::shared_ptr<const IngressRecord>> records) {
    MutexLock lock(mutex_);
    for (auto& record : records) {
        auto it = partitions_.try_emplace(PartitionKey{record->topic, record->partition}).first;
        it->second.records.push_back(std::move(record));
        if (!it->second.busy && !it->second.ready && !it->second.waiting) {
            it->second.ready = true;
            ready_.push_back(it);
        }
    }
    stats_.queued_records += records.size();
    metrics_.queued_records.add(static_cast<double>(records.size()));
    work_cv_.notify_all();
}

void Dispatcher::Impl::promote_due_retries(MonoTime now) {
    while (!waiting_.empty() && waiting_.begin()->first <= now) {
        PartitionIt it = waiting_.begin()->second;
        waiting_.erase(waiting_.begin());
        it->second.waiting = false;
        it->second.ready = true;
        ready_.push_back(it);
    }
}

void Dispatcher::Impl::work() {
    MutexLock lock(mutex_);
    while (!stopping_) {
        promote_due_retries(clock_.now());
        if (ready_.empty()) {
            if (waiting_.empty()) {
                work_cv_.wait(lock);
            } else {
                // Retries are queued in due order (each is now + retry_interval), so the earliest
                // one is also the next any worker adds a retry before.
                clock_.wait_until(lock, work_cv_, waiting_.begin()->first,
                                  [&]() REQUIRES(mutex_) { return stopping_ || !ready_.empty(); });
            }
            continue;
        }
        PartitionIt it = ready_.front();
        ready_.pop_front();
        PartitionQueue& queue = it->second;
        queue.ready = false;
        queue.busy = true;
        std::optional<MonoTime> frozen_since = queue.frozen_since;

        // The batch: the leading records of one incarnation, within the limits (at least one).
        // They stay at the front of the queue until the commit succeeds; only this worker pops.
        std::vector<std::shared_ptr<const IngressRecord>> batch;
        uint64_t bytes = 0;
        for (const auto& record : queue.records) {
            uint64_t size = record->key.size() + record->value.size();
            if (!batch.empty() && (batch.size() >= options_.max_batch_records ||
                                   bytes + size > options_.max_batch_bytes ||
                                   record->incarnation != batch.front()->incarnation)) {
                break;
            }
            batch.push_back(record);
            bytes += size;
        }
        lock.unlock();

        std::vector<storage::Record> records;
        records.reserve(batch.size());
        for (const auto& record : batch) {
            records.push_back(storage::Record{
                record->key, record->value, record->timestamp_ms, {wal_.id(), record->sequence}});
        }
        const IngressRecord& front = *batch.front();
        std::optional<PartitionId> target;
        std::string_view why = "its owner is dead";
        if (options_.reroute != nullptr) {
            target = options_.reroute->reroute(front.topic, front.incarnation, front.partition);
            if (!target && frozen_since &&
                clock_.now() - *frozen_since >= options_.freeze_reroute_grace) {
                target = options_.reroute->sibling(front.topic, front.incarnation, front.partition);
                why = "it is frozen for a move past the reroute grace";
            }
            if (target == front.partition) target.reset();
        }
        Status status;
        if (target) {
            status = reappend(batch, *target, why);
        } else {
            MonoTime started = clock_.now();
            status = committer_.commit(front.topic, front.incarnation, front.partition, records);
            metrics_.commit_seconds.observe(
                std::chrono::duration<double>(clock_.now() - started).count());
        }
        bool settled = status.is_ok() || status.code() == Errc::not_found;
        if (status.code() == Errc::not_found) {
            metrics_.dropped.inc(static_cast<double>(batch.size()));
        } else if (!settled) {
            metrics_.retries.inc();
        }
        std::vector<WalSeq> sequences;
        if (settled) {
            sequences.reserve(batch.size());
            for (const auto& record : batch) sequences.push_back(record->sequence);
            // Outside the lock: marking may delete segment files.
            wal_.mark_committed(sequences);
        }

        lock.lock();
        finish_batch(it, status, batch.size(), target.has_value());
    }
}

Status Dispatcher::Impl::reappend(const std::vector<std::shared_ptr<const IngressRecord>>& batch,
                                  PartitionId target, std::string_view why) {
    std::vector<IngressRecord> copies;
    copies.reserve(batch.size());
    for (const auto& record : batch) {
        IngressRecord copy = *record;
        copy.partition = target;
        copies.push_back(std::move(copy));
    }
    // The WAL always completes an append (durable, refused, or failed at its stop), so this wait
    // ends; the worker may block, it is not an HTTP thread.
    Mutex done_mutex;
    CondVar done_cv;
    std::optional<Status> result;
    wal_.append(
        std::move(copies),
        [&](Status status) {
            MutexLock lock(done_mutex);
            result = std::move(status);
            done_cv.notify_all();
        },
        IngressWal::Admission::replacing);
    MutexLock lock(done_mutex);
    done_cv.wait(lock, [&] { return result.has_value(); });
    if (result->is_ok()) {
        // A failure injected here is a crash between the durable re-append and marking the
        // originals: they stay pending and are rerouted again (duplicates, never a loss).
        NARAD_FAILPOINT_RETURN("dispatcher.after_reappend");
        metrics_.rerouted.inc(static_cast<double>(batch.size()));
        NARAD_LOG_WARN("dispatcher: '{}' partition {}: {}; {} records rerouted to partition {}",
                       batch.front()->topic, batch.front()->partition.value(), why, batch.size(),
                       target.value());
    }
    return *result;
}

void Dispatcher::Impl::finish_batch(PartitionIt it, const Status& status, size_t count,
                                    bool rerouted) {
    PartitionQueue& queue = it->second;
    queue.busy = false;
    if (status.code() == Errc::frozen) {
        if (!queue.frozen_since) queue.frozen_since = clock_.now();
    } else {
        queue.frozen_since.reset();
    }
    if (status.is_ok() || status.code() == Errc::not_found) {
        queue.records.erase(queue.records.begin(), queue.records.begin() + count);
        stats_.queued_records -= count;
        metrics_.queued_records.add(-static_cast<double>(count));
        if (status.is_ok() && rerouted) {
            stats_.rerouted_records += count;
        } else if (status.is_ok()) {
            stats_.committed_records += count;
        } else {
            stats_.dropped_records += count;
            if (warned_topics_.size() >= kMaxWarnedTopics) warned_topics_.clear();
            if (warned_topics_.insert(it->first.topic).second) {
                NARAD_LOG_WARN("dispatcher: dropping records for topic '{}' partition {}: {}",
                               it->first.topic, it->first.partition.value(), status.to_string());
            }
        }
        if (queue.records.empty()) {
            partitions_.erase(it);
        } else {
            queue.ready = true;
            ready_.push_back(it);
            work_cv_.notify_one();
        }
        return;
    }
    // Keep the records (and everything behind them, to keep the partition's order) and retry
    // this partition later; the others go on.
    ++stats_.commit_failures;
    NARAD_LOG_DEBUG("dispatcher: commit to '{}' partition {} failed, retrying: {}", it->first.topic,
                    it->first.partition.value(), status.to_string());
    queue.waiting = true;
    waiting_.emplace(clock_.now() + options_.retry_interval, it);
}

Dispatcher::Dispatcher(Clock& clock, IngressWal& wal, PartitionCommitter& committer,
                       DispatcherOptions options)
    : impl_(std::make_unique<Impl>(clock, wal, committer, options)) {}

Dispatcher::~Dispatcher() { stop(); }

void Dispatcher::start() { impl_->start(); }
void Dispatcher::stop() { impl_->stop(); }
DispatcherStats Dispatcher::stats() const { return impl_->stats(); }

}  // namespace narad::wal
