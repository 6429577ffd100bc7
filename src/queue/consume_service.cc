#include "queue/consume_service.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "base/log.h"
#include "base/mutex.h"
#include "base/thread_pool.h"
#include "queue/consume_metrics.h"
#include "queue/consumer_offset_file.h"

namespace narad::queue {
namespace {

QueueLimits limits_of(const meta::Topic& topic) {
    QueueLimits limits;
    limits.visibility_timeout = Millis(topic.visibility_timeout_ms);
    limits.max_in_flight = static_cast<uint32_t>(topic.max_in_flight_per_partition);
    limits.max_acked_ahead = static_cast<uint32_t>(topic.max_acked_ahead_per_partition);
    limits.max_deliveries = static_cast<uint32_t>(std::max<int64_t>(topic.max_deliveries, 0));
    return limits;
}

}  // namespace

class ConsumeService::Impl {
  public:
    Impl(io::FileSystem& fs, Clock& clock, meta::MetaStore& store, storage::LogManager& logs,
         storage::TopicGuards& guards, OffsetCommitter& committer, Scheduler& scheduler,
         ConsumeOptions options)
        : fs_(fs),
          clock_(clock),
          store_(store),
          logs_(logs),
          guards_(guards),
          committer_(committer),
          scheduler_(scheduler),
          options_(options),
          metrics_(consume_metrics()) {}

    ~Impl() { stop(); }

    void start() {
        MutexLock lock(reaper_mutex_);
        if (reaper_.joinable()) return;
        stopping_ = false;
        reaper_ = named_thread("narad-reaper", [this] { reap_loop(); });
        collector_id_ = metrics::Registry::global().add_collector([this] { collect(); });
    }

    void stop() {
        {
            MutexLock lock(reaper_mutex_);
            if (stopping_ && !reaper_.joinable()) return;
            stopping_ = true;
        }
        reaper_wake_.notify_all();
        if (reaper_.joinable()) reaper_.join();
        if (collector_id_ != 0) {
            metrics::Registry::global().remove_collector(collector_id_);
            collector_id_ = 0;
        }
        std::vector<std::shared_ptr<Waiter>> parked;
        {
            MutexLock lock(waiters_mutex_);
            shut_down_ = true;
            for (auto& [topic, list] : waiters_) {
                parked.insert(parked.end(), list.begin(), list.end());
            }
            waiters_.clear();
        }
        for (auto& waiter : parked) finish(waiter, std::vector<Delivery>{}, "cancelled");
    }

    void consume(ConsumeRequest request, Done done) {
        if (request.max == 0) request.max = 1;
        auto waiter = std::make_shared<Waiter>();
        waiter->request = std::move(request);
        waiter->done = std::move(done);
        waiter->started = clock_.now();
        waiter->deadline = waiter->started + waiter->request.wait;
        Status queued = run_read([this, waiter] { attempt(waiter); });
        if (!queued.is_ok()) finish(waiter, std::move(queued), "refused");
    }

    Result<std::optional<Delivery>> replay(std::string_view topic, PartitionId partition,
                                           Offset offset) {
        meta::MetaSnapshot snapshot = store_.snapshot();
        const meta::Topic* record = snapshot->find_topic(topic);
        if (record == nullptr) return Status(Errc::not_found, "topic not found");
        if (partition.value() >= record->partitions) {
            return Status(Errc::invalid_argument, "invalid argument: partition out of range");
        }
        auto log = logs_.get(topic, partition, storage::CreateIfMissing::no);
        if (!log.is_ok()) {
            if (log.code() == Errc::not_found) return std::optional<Delivery>();
            return log.status();
        }
        std::shared_ptr<storage::PartitionLog> partition_log = *log;
        if (offset >= partition_log->high_watermark()) return std::optional<Delivery>();
        auto read = partition_log->read(offset, 1, options_.max_batch_bytes);
        std::string prefix = "receipt handle no longer matches an active reservation: offset " +
                             std::to_string(offset.value());
        if (!read.is_ok()) {
            if (read.code() == Errc::gone) {
                return Status(Errc::gone,
                              prefix + " aged out of retention (oldest retained: " +
                                  std::to_string(partition_log->oldest_offset().value()) + ")");
            }
            return read.status();
        }
        if (read->records.empty() || read->records.front().offset != offset) {
            return Status(Errc::gone, prefix + " is not readable");
        }
        // A replay reads; it is not counted as consumed (Narad since 3.0.1).
        storage::StoredRecord& record_read = read->records.front();
        return std::optional<Delivery>(
            Delivery{partition, record_read.offset, std::move(record_read.key),
                     std::move(record_read.value), record_read.timestamp_ms, 0});
    }

    Status settle(std::string_view topic, PartitionId partition, Offset offset, uint64_t lease_id,
                  Settle kind, std::string_view reason) {
        meta::MetaSnapshot record_view = store_.snapshot();
        const meta::Topic* record = record_view->find_topic(topic);
        if (record == nullptr) return Status(Errc::not_found, "topic not found");
        std::shared_ptr<PartitionQueue> queue =
            existing_queue(topic, partition, record->incarnation);
        Status stale(Errc::gone, "receipt handle no longer matches an active reservation");
        if (!queue) return stale;
        // An ack can only unblock waiters when the partition was held back by a cap; waking every
        // parked consumer on every ack would be a thundering herd.
        QueueStats before = queue->stats();
        bool capped = before.in_flight >= record->max_in_flight_per_partition ||
                      before.acked_ahead >= record->max_acked_ahead_per_partition;
        Status status;
        switch (kind) {
            case Settle::ack:
                status = queue->ack(offset, lease_id);
                break;
            case Settle::extend: {
                auto extended = queue->extend(offset, lease_id);
                status = extended.is_ok() ? Status::ok() : extended.status();
                if (status.is_ok()) metrics_.extended.with({std::string(topic)}).inc();
                break;
            }
            case Settle::nack:
                status = queue->nack(offset, lease_id, reason);
                if (status.is_ok()) metrics_.nacked.with({std::string(topic)}).inc();
                break;
        }
        if (status.code() == Errc::gone) return stale;
        if (status.is_ok() && kind == Settle::nack) wake(std::string(topic), 1);
        if (status.is_ok() && kind == Settle::ack && capped) wake(std::string(topic), kWakeAll);
        return status;
    }

    std::vector<ExhaustedMessage> exhausted() {
        std::vector<std::pair<std::pair<std::string, uint32_t>, Entry>> entries;
        {
            MutexLock lock(queues_mutex_);
            for (const auto& [key, entry] : queues_) entries.emplace_back(key, entry);
        }
        std::vector<ExhaustedMessage> out;
        for (const auto& [key, entry] : entries) {
            Offset frontier = entry.queue->stats().frontier;
            for (Exhausted& waiting : entry.queue->exhausted()) {
                bool at_frontier = waiting.offset == frontier;
                out.push_back({key.first, entry.incarnation, PartitionId(key.second),
                               std::move(waiting), at_frontier});
            }
        }
        return out;
    }

    bool settle_exhausted(const ExhaustedMessage& message) {
        std::shared_ptr<PartitionQueue> queue =
            existing_queue(message.topic, message.partition, message.incarnation);
        if (!queue || !queue->settle_exhausted(message.exhausted.offset)) return false;
        wake(message.topic, kWakeAll);  // the frontier moved: a capped partition opens up
        return true;
    }

    // Wakes as many waiters as records were appended (each can take one or more); a woken waiter
    // that finds nothing parks again.
    void on_append(const std::string& topic, PartitionId partition, Offset hwm) {
        uint64_t appended = kWakeAll;
        {
            MutexLock lock(hwm_mutex_);
            auto [it, inserted] = hwms_.try_emplace({topic, partition.value()}, hwm);
            if (!inserted) {
                // A lower or equal watermark means the log was replaced (recreated): wake all.
                appended = hwm > it->second ? hwm.distance_from(it->second) : kWakeAll;
                it->second = hwm;
            }
        }
        if (appended > 0) wake(topic, appended);
    }

    void drop_topic(std::string_view topic) {
        std::vector<std::string> paths;
        {
            MutexLock lock(queues_mutex_);
            for (auto it = queues_.begin(); it != queues_.end();) {
                if (it->first.first == topic) {
                    paths.push_back(it->second.offset_path);
                    it = queues_.erase(it);
                } else {
                    ++it;
                }
            }
        }
        for (const auto& path : paths) committer_.remove(path, /*write_last=*/false);
        {
            MutexLock lock(hwm_mutex_);
            std::erase_if(hwms_, [&](const auto& entry) { return entry.first.first == topic; });
        }
        metrics_.remove_topic(std::string(topic));
    }

    void apply_limits(const meta::MetaSnapshot& snapshot) {
        MutexLock lock(queues_mutex_);
        for (auto& [key, entry] : queues_) {
            const meta::Topic* topic = snapshot->find_topic(key.first);
            if (topic != nullptr && topic->incarnation == entry.incarnation) {
                entry.queue->set_limits(limits_of(*topic));
            }
        }
    }

    std::optional<QueueStats> stats(std::string_view topic, PartitionId partition) const {
        MutexLock lock(queues_mutex_);
        auto it = queues_.find({std::string(topic), partition.value()});
        if (it == queues_.end()) return std::nullopt;
        return it->second.queue->stats();
    }

    void set_serving_filter(ServingFilter filter) { serving_ = std::move(filter); }
    void set_readers(Readers run) { readers_ = std::move(run); }

    Status run_read(std::function<void()> read) {
        if (!readers_) {
            read();
            return Status::ok();
        }
        switch (readers_(std::move(read))) {
            case ThreadPool::Posted::queued:
                return Status::ok();
            case ThreadPool::Posted::full:
                return Status(Errc::unavailable, "consume readers busy, retry");
            case ThreadPool::Posted::stopping:
                break;
        }
        return Status(Errc::unavailable, std::string(kShuttingDownText));
    }

    // A woken or expiring waiter must be answered: when the readers refuse it, it runs here.
    void run_read_or_here(std::function<void()> read) {
        if (!readers_ || readers_(read) != ThreadPool::Posted::queued) read();
    }

    std::optional<ConsumerPosition> position(std::string_view topic, PartitionId partition) const {
        MutexLock lock(queues_mutex_);
        auto it = queues_.find({std::string(topic), partition.value()});
        if (it == queues_.end()) return std::nullopt;
        return it->second.queue->position();
    }

    void drop_partition(std::string_view topic, PartitionId partition, bool write_last) {
        std::string path;
        {
            MutexLock lock(queues_mutex_);
            auto it = queues_.find({std::string(topic), partition.value()});
            if (it == queues_.end()) return;
            path = it->second.offset_path;
            queues_.erase(it);
        }
        committer_.remove(path, write_last);
        MutexLock lock(hwm_mutex_);
        hwms_.erase({std::string(topic), partition.value()});
    }

  private:
    struct Entry {
        std::shared_ptr<PartitionQueue> queue;
        IncarnationId incarnation;
        std::string offset_path;
        std::shared_ptr<std::atomic<uint64_t>> dropped;  // deleted by retention before acked
    };

    struct Waiter {
        ConsumeRequest request;
        Done done;
        MonoTime started;
        MonoTime deadline;
        std::shared_ptr<ScheduledTask> timer;  // set once, under waiters_mutex_
        std::atomic<bool> finished{false};
    };

    std::shared_ptr<PartitionQueue> existing_queue(std::string_view topic, PartitionId partition,
                                                   const IncarnationId& incarnation) {
        MutexLock lock(queues_mutex_);
        auto it = queues_.find({std::string(topic), partition.value()});
        if (it == queues_.end() || it->second.incarnation != incarnation) return nullptr;
        return it->second.queue;
    }

    // The queue of a partition, loading its persisted position on first use. Runs under the topic's
    // guard so it never registers state for a topic whose data is being purged.
    Result<std::shared_ptr<PartitionQueue>> queue_for(const meta::Topic& topic,
                                                      PartitionId partition) {
        if (auto queue = existing_queue(topic.name, partition, topic.incarnation)) return queue;
        auto guard = guards_.guard(topic.name);
        ReaderLock topic_lock(*guard);
        meta::MetaSnapshot current_view = store_.snapshot();
        const meta::Topic* current = current_view->find_topic(topic.name);
        if (current == nullptr || current->incarnation != topic.incarnation) {
            return Status(Errc::not_found, "topic not found");
        }
        std::string path =
            io::join_path(logs_.partition_directory(topic.name, partition), kConsumerOffsetFile);
        ConsumerPosition start;
        auto loaded = read_consumer_position(fs_, path);
        if (loaded.is_ok()) {
            start = std::move(*loaded);
        } else if (loaded.code() != Errc::not_found) {
            // A damaged position must not skip messages: start over from the beginning of the log
            // (at-least-once: everything is delivered again).
            NARAD_LOG_ERROR("consumer position {} unreadable ({}); redelivering from the start",
                            path, loaded.status().to_string());
        }
        MutexLock lock(queues_mutex_);
        auto key = std::make_pair(topic.name, partition.value());
        auto it = queues_.find(key);
        if (it != queues_.end() && it->second.incarnation == topic.incarnation) {
            return it->second.queue;
        }
        Entry entry{std::make_shared<PartitionQueue>(clock_, std::move(start), limits_of(topic)),
                    topic.incarnation, path, std::make_shared<std::atomic<uint64_t>>(0)};
        committer_.add(path, entry.queue);
        queues_[key] = entry;
        return entry.queue;
    }

    // One pass over the request's partitions, reserving what can be delivered now.
    Result<std::vector<Delivery>> try_once(const ConsumeRequest& request) {
        meta::MetaSnapshot snapshot = store_.snapshot();
        const meta::Topic* topic = snapshot->find_topic(request.topic);
        if (topic == nullptr) return Status(Errc::not_found, "topic not found");
        std::vector<PartitionId> order;
        if (request.partition) {
            if (request.partition->value() >= topic->partitions) {
                return Status(Errc::invalid_argument, "invalid argument: partition out of range");
            }
            order.push_back(*request.partition);
        } else {
            uint32_t start = next_start(request.topic, topic->partitions);
            for (uint32_t i = 0; i < topic->partitions; ++i) {
                order.push_back(PartitionId((start + i) % topic->partitions));
            }
        }
        std::vector<Delivery> out;
        uint64_t bytes = 0;
        for (PartitionId partition : order) {
            if (out.size() >= request.max || bytes >= options_.max_batch_bytes) break;
            if (serving_ && !serving_(*snapshot, topic->name, partition)) continue;
            auto log = logs_.get(topic->name, partition, storage::CreateIfMissing::no);
            if (!log.is_ok()) {
                if (log.code() == Errc::not_found) continue;  // never written to
                return log.status();
            }
            if ((*log)->high_watermark().value() == 0) continue;
            NARAD_ASSIGN_OR_RETURN(auto queue, queue_for(*topic, partition));
            size_t before = out.size();
            Status taken =
                take_from(*topic, partition, **log, *queue, request.max - out.size(), bytes, out);
            // Counted once per partition: a metric lookup per message would cost more than the
            // read.
            uint64_t value_bytes = 0;
            for (size_t i = before; i < out.size(); ++i) value_bytes += out[i].value.size();
            if (out.size() > before)
                count_consumed(topic->name, partition, out.size() - before, value_bytes);
            NARAD_RETURN_IF_ERROR(taken);
        }
        return out;
    }

    // Reserves and reads up to `want` messages of one partition into `out`.
    Status take_from(const meta::Topic& topic, PartitionId partition, storage::PartitionLog& log,
                     PartitionQueue& queue, size_t want, uint64_t& bytes,
                     std::vector<Delivery>& out) {
        for (int round = 0; round < 2 && want > 0; ++round) {
            std::vector<Lease> leases = queue.reserve(log.high_watermark(), want);
            if (leases.empty()) return Status::ok();
            std::sort(leases.begin(), leases.end(),
                      [](const Lease& a, const Lease& b) { return a.offset < b.offset; });
            bool retention_skipped = false;
            size_t i = 0;
            while (i < leases.size()) {
                size_t run = 1;
                while (i + run < leases.size() &&
                       leases[i + run].offset == leases[i].offset + run) {
                    ++run;
                }
                if (bytes >= options_.max_batch_bytes) {
                    // Over the response budget: hand the leases back untouched.
                    for (size_t k = i; k < leases.size(); ++k) {
                        (void)queue.nack(leases[k].offset, leases[k].lease_id);
                    }
                    return Status::ok();
                }
                auto read = log.read(leases[i].offset, run, options_.max_batch_bytes - bytes);
                if (!read.is_ok()) {
                    if (read.code() != Errc::gone) {
                        for (size_t k = i; k < leases.size(); ++k) {
                            (void)queue.nack(leases[k].offset, leases[k].lease_id);
                        }
                        return read.status();
                    }
                    // Retention deleted these before they were consumed.
                    Offset frontier = queue.stats().frontier;
                    Offset oldest = log.oldest_offset();
                    if (oldest > frontier) {
                        NARAD_LOG_WARN("{}/{}: {} messages aged out before they were acked",
                                       topic.name, partition.value(),
                                       oldest.distance_from(frontier));
                        dropped_counter(topic, partition)
                            ->fetch_add(oldest.distance_from(frontier));
                    }
                    queue.skip_below(oldest);
                    // The leases still standing (at or above the new oldest offset) were never
                    // read: hand them back and reserve afresh in the next round.
                    for (size_t k = i; k < leases.size(); ++k) {
                        if (leases[k].offset >= oldest) {
                            (void)queue.nack(leases[k].offset, leases[k].lease_id);
                        }
                    }
                    retention_skipped = true;
                    break;
                }
                std::map<uint64_t, storage::StoredRecord*> by_offset;
                for (auto& record : read->records) by_offset[record.offset.value()] = &record;
                for (Offset corrupt : read->corrupt) {
                    queue.skip(corrupt);
                    metrics_.corrupt.with({topic.name, std::to_string(partition.value())}).inc();
                }
                for (size_t k = i; k < i + run; ++k) {
                    const Lease& lease = leases[k];
                    auto found = by_offset.find(lease.offset.value());
                    if (found == by_offset.end()) {
                        bool corrupt = std::find(read->corrupt.begin(), read->corrupt.end(),
                                                 lease.offset) != read->corrupt.end();
                        // Not read because of the byte budget: give the lease back.
                        if (!corrupt) (void)queue.nack(lease.offset, lease.lease_id);
                        continue;
                    }
                    storage::StoredRecord& record = *found->second;
                    bytes += record.value.size() + record.key.size();
                    out.push_back(Delivery{partition, record.offset, std::move(record.key),
                                           std::move(record.value), record.timestamp_ms,
                                           lease.lease_id});
                    --want;
                }
                i += run;
            }
            if (!retention_skipped) return Status::ok();
        }
        return Status::ok();
    }

    std::shared_ptr<std::atomic<uint64_t>> dropped_counter(const meta::Topic& topic,
                                                           PartitionId partition) {
        MutexLock lock(queues_mutex_);
        auto it = queues_.find({topic.name, partition.value()});
        if (it == queues_.end()) return std::make_shared<std::atomic<uint64_t>>(0);
        return it->second.dropped;
    }

    void count_consumed(const std::string& topic, PartitionId partition, uint64_t messages,
                        uint64_t value_bytes) {
        std::string p = std::to_string(partition.value());
        metrics_.consumed.with({topic, p}).inc(static_cast<double>(messages));
        metrics_.consumed_bytes.with({topic, p}).inc(static_cast<double>(value_bytes));
    }

    uint32_t next_start(const std::string& topic, uint32_t partitions) {
        MutexLock lock(cursor_mutex_);
        return cursors_[topic]++ % partitions;
    }

    // Tries the waiter's consume; delivers, or parks it until woken or its deadline.
    void attempt(const std::shared_ptr<Waiter>& waiter) {
        for (;;) {
            if (waiter->finished.load()) return;
            uint64_t generation;
            {
                MutexLock lock(waiters_mutex_);
                generation = generations_[waiter->request.topic];
            }
            Result<std::vector<Delivery>> result = try_once(waiter->request);
            bool expired = clock_.now() >= waiter->deadline;
            if (!result.is_ok() || !result->empty() || expired) {
                const char* outcome =
                    !result.is_ok() || !result->empty()
                        ? (waiter->request.wait.count() == 0 ? "no_wait" : "hit")
                        : (waiter->request.wait.count() == 0 ? "no_wait" : "timeout");
                finish(waiter, std::move(result), outcome);
                return;
            }
            MutexLock lock(waiters_mutex_);
            if (shut_down_) {
                // fall through to answer "nothing" below, outside the lock
            } else if (generations_[waiter->request.topic] != generation) {
                continue;  // something changed while we looked: look again
            } else {
                waiters_[waiter->request.topic].push_back(waiter);
                if (!waiter->timer) {
                    auto delay =
                        std::chrono::duration_cast<Millis>(waiter->deadline - clock_.now());
                    std::weak_ptr<Waiter> weak = waiter;
                    waiter->timer = scheduler_.after(std::max(delay, Millis(0)), [this, weak] {
                        if (auto w = weak.lock()) run_read_or_here([this, w] { expire(w); });
                    });
                }
                return;
            }
            break;
        }
        finish(waiter, std::vector<Delivery>{}, "cancelled");
    }

    void expire(const std::shared_ptr<Waiter>& waiter) {
        {
            MutexLock lock(waiters_mutex_);
            auto& list = waiters_[waiter->request.topic];
            std::erase(list, waiter);
        }
        // One last look, so a message that arrived at the deadline is not missed.
        Result<std::vector<Delivery>> result = try_once(waiter->request);
        finish(waiter, std::move(result), "timeout");
    }

    void finish(const std::shared_ptr<Waiter>& waiter, Result<std::vector<Delivery>> result,
                const char* outcome) {
        if (waiter->finished.exchange(true)) {
            // Someone answered first; give back anything this attempt reserved.
            if (result.is_ok()) release(waiter->request.topic, *result);
            return;
        }
        if (waiter->timer) waiter->timer->cancel();
        if (result.is_ok()) {
            if (!result->empty() && std::string_view(outcome) == "timeout") outcome = "hit";
            if (result->empty()) metrics_.empty.with({waiter->request.topic}).inc();
            double waited = std::chrono::duration<double>(clock_.now() - waiter->started).count();
            metrics_.wait.with({waiter->request.topic, outcome}).observe(waited);
        }
        waiter->done(std::move(result));
    }

    void release(const std::string& topic, const std::vector<Delivery>& deliveries) {
        meta::MetaSnapshot record_view = store_.snapshot();
        const meta::Topic* record = record_view->find_topic(topic);
        if (record == nullptr) return;
        for (const Delivery& d : deliveries) {
            if (auto queue = existing_queue(topic, d.partition, record->incarnation)) {
                (void)queue->nack(d.offset, d.lease_id);
            }
        }
        if (!deliveries.empty()) wake(topic, deliveries.size());
    }

    static constexpr uint64_t kWakeAll = UINT64_MAX;

    // Wakes up to `count` of the topic's parked waiters, oldest first. Waiters in the middle of an
    // attempt see the generation move and look again, so no wake-up is lost.
    void wake(const std::string& topic, uint64_t count) {
        std::vector<std::shared_ptr<Waiter>> woken;
        {
            MutexLock lock(waiters_mutex_);
            ++generations_[topic];
            auto it = waiters_.find(topic);
            if (it == waiters_.end() || it->second.empty()) return;
            if (count >= it->second.size()) {
                woken.swap(it->second);
            } else {
                auto end = it->second.begin() + static_cast<std::ptrdiff_t>(count);
                woken.assign(it->second.begin(), end);
                it->second.erase(it->second.begin(), end);
            }
        }
        for (auto& waiter : woken) {
            scheduler_.post(
                [this, waiter] { run_read_or_here([this, waiter] { attempt(waiter); }); });
        }
    }

    // Ends lapsed leases and wakes the topics that have waiters for them.
    void reap_loop() {
        MutexLock lock(reaper_mutex_);
        while (!stopping_) {
            reaper_wake_.wait_for(lock, options_.reaper_interval,
                                  [&]() REQUIRES(reaper_mutex_) { return stopping_; });
            if (stopping_) break;
            lock.unlock();
            std::vector<std::pair<std::string, std::shared_ptr<PartitionQueue>>> queues;
            {
                MutexLock queues_lock(queues_mutex_);
                for (auto& [key, entry] : queues_) queues.emplace_back(key.first, entry.queue);
            }
            std::vector<std::string> topics;
            for (auto& [topic, queue] : queues) {
                if (queue->expire_leases() > 0) topics.push_back(topic);
            }
            std::sort(topics.begin(), topics.end());
            topics.erase(std::unique(topics.begin(), topics.end()), topics.end());
            for (const auto& topic : topics) wake(topic, kWakeAll);
            lock.lock();
        }
    }

    // Fills the per-partition gauges at scrape time, for partitions with open logs.
    void collect() {
        std::vector<std::tuple<std::string, uint32_t, Entry>> queues;
        {
            MutexLock lock(queues_mutex_);
            for (auto& [key, entry] : queues_) queues.emplace_back(key.first, key.second, entry);
        }
        WallTime now = clock_.wall_now();
        for (auto& [topic, partition, entry] : queues) {
            auto log = logs_.get_if_open(topic, PartitionId(partition));
            if (!log) continue;
            metrics_.report_partition(topic, partition, entry.queue->stats(), *log,
                                      entry.dropped->load(), now);
        }
    }

    io::FileSystem& fs_;
    Clock& clock_;
    meta::MetaStore& store_;
    storage::LogManager& logs_;
    storage::TopicGuards& guards_;
    OffsetCommitter& committer_;
    Scheduler& scheduler_;
    ConsumeOptions options_;
    ConsumeMetrics& metrics_;
    ServingFilter serving_;  // set before start(), then only read
    Readers readers_;        // set before start(), then only read

    mutable Mutex queues_mutex_;
    std::map<std::pair<std::string, uint32_t>, Entry> queues_ GUARDED_BY(queues_mutex_);

    Mutex hwm_mutex_;
    std::map<std::pair<std::string, uint32_t>, Offset> hwms_ GUARDED_BY(hwm_mutex_);  // last seen

    Mutex cursor_mutex_;
    std::map<std::string, uint32_t> cursors_ GUARDED_BY(cursor_mutex_);

    Mutex waiters_mutex_;
    std::map<std::string, std::vector<std::shared_ptr<Waiter>>> waiters_ GUARDED_BY(waiters_mutex_);
    std::map<std::string, uint64_t> generations_ GUARDED_BY(waiters_mutex_);
    bool shut_down_ GUARDED_BY(waiters_mutex_) = false;

    Mutex reaper_mutex_;
    CondVar reaper_wake_;
    bool stopping_ GUARDED_BY(reaper_mutex_) = false;
    std::thread reaper_;
    uint64_t collector_id_ = 0;
};

ConsumeService::ConsumeService(io::FileSystem& fs, Clock& clock, meta::MetaStore& store,
                               storage::LogManager& logs, storage::TopicGuards& guards,
                               OffsetCommitter& committer, Scheduler& scheduler,
                               ConsumeOptions options)
    : impl_(std::make_unique<Impl>(fs, clock, store, logs, guards, committer, scheduler, options)) {
}
ConsumeService::~ConsumeService() = default;
void ConsumeService::start() { impl_->start(); }
void ConsumeService::stop() { impl_->stop(); }
void ConsumeService::consume(ConsumeRequest request, Done done) {
    impl_->consume(std::move(request), std::move(done));
}
Result<std::optional<Delivery>> ConsumeService::replay(std::string_view topic,
                                                       PartitionId partition, Offset offset) {
    return impl_->replay(topic, partition, offset);
}
Status ConsumeService::settle(std::string_view topic, PartitionId partition, Offset offset,
                              uint64_t lease_id, Settle kind, std::string_view reason) {
    return impl_->settle(topic, partition, offset, lease_id, kind, reason);
}
std::vector<ExhaustedMessage> ConsumeService::exhausted() { return impl_->exhausted(); }
bool ConsumeService::settle_exhausted(const ExhaustedMessage& message) {
    return impl_->settle_exhausted(message);
}
void ConsumeService::on_append(const std::string& topic, PartitionId partition, Offset hwm) {
    impl_->on_append(topic, partition, hwm);
}
void ConsumeService::drop_topic(std::string_view topic) { impl_->drop_topic(topic); }
void ConsumeService::apply_limits(const meta::MetaSnapshot& snapshot) {
    impl_->apply_limits(snapshot);
}
std::optional<QueueStats> ConsumeService::stats(std::string_view topic,
                                                PartitionId partition) const {
    return impl_->stats(topic, partition);
}
void ConsumeService::set_serving_filter(ServingFilter filter) {
    impl_->set_serving_filter(std::move(filter));
}
void ConsumeService::set_readers(Readers run) { impl_->set_readers(std::move(run)); }
Status ConsumeService::run_read(std::function<void()> read) {
    return impl_->run_read(std::move(read));
}
std::optional<ConsumerPosition> ConsumeService::position(std::string_view topic,
                                                         PartitionId partition) const {
    return impl_->position(topic, partition);
}
void ConsumeService::drop_partition(std::string_view topic, PartitionId partition,
                                    bool write_last) {
    impl_->drop_partition(topic, partition, write_last);
}

}  // namespace narad::queue
