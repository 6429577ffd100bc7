#include "wal/direct_commits.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <thread>

#include "base/failpoint.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/mutex.h"
#include "base/thread_pool.h"

namespace narad::wal {
namespace {

metrics::Family<metrics::Counter>& direct_records() {
    static auto& family = metrics::Registry::global().counter(
        "narad_produce_direct_records_total",
        "Produced records committed straight to a partition log owned here, without the ingress "
        "WAL, by outcome (committed; wal: refused and sent through the WAL; dropped: topic gone).",
        {"outcome"});
    return family;
}

constexpr uint32_t kMaxThreads = 64;

// One produce request taken here: its completion runs when the last of its parts settles.
struct Request {
    IngressWal::Completion done;
    std::atomic<uint32_t> parts_left{0};
    Mutex mutex;
    Status failure GUARDED_BY(mutex);       // the first part's failure
    bool stored GUARDED_BY(mutex) = false;  // some part is durable

    void settle(const Status& status) {
        {
            MutexLock lock(mutex);
            if (status.is_ok()) {
                stored = true;
            } else if (failure.is_ok()) {
                failure = status;
            }
        }
        if (parts_left.fetch_sub(1) != 1) return;
        Status result;
        {
            MutexLock lock(mutex);
            result = failure;
            // Some of it is stored, so the answer must not read as a refusal (a 4xx or 503
            // promises nothing was kept): a 500 tells the client a retry may duplicate.
            if (!result.is_ok() && stored) {
                result =
                    Status(Errc::internal,
                           "part of the request was stored, the rest failed: " + result.message());
            }
        }
        done(std::move(result));
    }
};

// The records of one request for one partition, in the request's order.
struct Part {
    std::shared_ptr<Request> request;
    std::vector<IngressRecord> records;
    uint64_t bytes = 0;  // keys and values
};

struct PartitionKey {
    std::string topic;
    PartitionId partition;
    auto operator<=>(const PartitionKey&) const = default;
};

}  // namespace

class DirectCommits::Impl {
  public:
    Impl(IngressWal& wal, storage::PartitionCommitter& committer, Serves serves,
         DirectOptions options)
        : wal_(wal), committer_(committer), serves_(std::move(serves)), options_(options) {
        options_.threads = std::clamp<uint32_t>(options_.threads, 1, kMaxThreads);
        options_.max_batch_records = std::max<uint32_t>(options_.max_batch_records, 1);
        options_.max_partitions = std::max<uint32_t>(options_.max_partitions, 1);
    }

    bool try_take(const meta::MetaState& state, std::vector<IngressRecord>& records,
                  IngressWal::Completion& done);
    void start();
    void stop();
    DirectStats stats() const {
        MutexLock lock(mutex_);
        return stats_;
    }

  private:
    struct PartitionQueue {
        std::deque<Part> parts;  // taking order
        bool busy = false;       // a worker holds the partition
    };
    using PartitionMap = std::map<PartitionKey, PartitionQueue>;

    void work();
    // Commits one batch of a partition's parts (`bytes` of keys and values, released from the
    // queue bound before any completion runs) and settles them (outside the lock).
    void commit_batch(const PartitionKey& key, std::vector<Part>& batch, uint64_t bytes);
    // Hands the parts to the WAL, in order; each settles once the WAL has it.
    void send_to_wal(std::vector<Part>& parts);

    IngressWal& wal_;
    storage::PartitionCommitter& committer_;
    Serves serves_;
    DirectOptions options_;

    mutable Mutex mutex_;
    CondVar work_cv_;                                              // signals ready_ and stopping_
    PartitionMap partitions_ GUARDED_BY(mutex_);                   // only those with parts
    std::deque<PartitionMap::iterator> ready_ GUARDED_BY(mutex_);  // have parts, nobody on them
    uint64_t queued_bytes_ GUARDED_BY(mutex_) = 0;
    bool running_ GUARDED_BY(mutex_) = false;
    DirectStats stats_ GUARDED_BY(mutex_);
    std::vector<std::thread> workers_;  // owned by start()/stop()
    Mutex lifecycle_mutex_;             // serialises start() and stop()
};

bool DirectCommits::Impl::try_take(const meta::MetaState& state,
                                   std::vector<IngressRecord>& records,
                                   IngressWal::Completion& done) {
    if (records.empty()) return false;
    // Tests and `bench/profile.sh` arm "wal.direct.decline" to send every request through the WAL.
    if (failpoint::detail::any_armed && !failpoint::evaluate("wal.direct.decline").is_ok()) {
        return false;
    }
    // Every partition of the request must qualify: a request is answered once, so it is either
    // all direct or all through the WAL.
    std::map<PartitionKey, size_t> part_of;  // partition -> index in `parts`
    uint64_t bytes = 0;
    for (const IngressRecord& record : records) {
        bytes += record.key.size() + record.value.size();
        PartitionKey key{record.topic, record.partition};
        if (part_of.count(key) != 0) continue;
        if (part_of.size() == options_.max_partitions ||
            !serves_(state, record.topic, record.partition) ||
            wal_.holds(record.topic, record.partition)) {
            return false;
        }
        part_of.emplace(std::move(key), part_of.size());
    }
    auto request = std::make_shared<Request>();
    request->parts_left = static_cast<uint32_t>(part_of.size());
    MutexLock lock(mutex_);
    if (!running_ || queued_bytes_ + bytes > options_.max_queued_bytes) return false;
    std::vector<Part> parts(part_of.size());
    for (IngressRecord& record : records) {
        Part& part = parts[part_of.at(PartitionKey{record.topic, record.partition})];
        part.bytes += record.key.size() + record.value.size();
        part.records.push_back(std::move(record));
    }
    request->done = std::move(done);
    queued_bytes_ += bytes;
    for (auto& [key, index] : part_of) {
        auto it = partitions_.try_emplace(key).first;
        bool idle = it->second.parts.empty() && !it->second.busy;
        parts[index].request = request;
        it->second.parts.push_back(std::move(parts[index]));
        if (idle) ready_.push_back(it);
    }
    work_cv_.notify_all();
    records.clear();
    return true;
}

void DirectCommits::Impl::start() {
    MutexLock lifecycle(lifecycle_mutex_);
    if (!workers_.empty()) return;
    {
        MutexLock lock(mutex_);
        running_ = true;
    }
    for (uint32_t i = 0; i < options_.threads; ++i) {
        workers_.push_back(named_thread("narad-direct", [this] { work(); }));
    }
}

void DirectCommits::Impl::stop() {
    MutexLock lifecycle(lifecycle_mutex_);
    {
        MutexLock lock(mutex_);
        running_ = false;
        work_cv_.notify_all();
    }
    for (auto& worker : workers_) worker.join();
    workers_.clear();
    std::vector<Part> left;
    {
        MutexLock lock(mutex_);
        for (auto& [key, queue] : partitions_) {
            for (auto& part : queue.parts) left.push_back(std::move(part));
        }
        partitions_.clear();
        ready_.clear();
        queued_bytes_ = 0;
    }
    // Accepted requests are never dropped: the WAL keeps them for the next start.
    send_to_wal(left);
}

void DirectCommits::Impl::work() {
    MutexLock lock(mutex_);
    while (true) {
        work_cv_.wait(lock, [&]() REQUIRES(mutex_) { return !running_ || !ready_.empty(); });
        if (!running_) return;  // stop() hands the queued parts to the WAL
        auto it = ready_.front();
        ready_.pop_front();
        PartitionQueue& queue = it->second;
        queue.busy = true;
        // The batch: the leading parts of one incarnation, within the limits (at least one).
        std::vector<Part> batch;
        size_t records = 0;
        uint64_t bytes = 0;
        while (!queue.parts.empty()) {
            const Part& next = queue.parts.front();
            if (!batch.empty() &&
                (records + next.records.size() > options_.max_batch_records ||
                 bytes + next.bytes > options_.max_batch_bytes ||
                 next.records.front().incarnation != batch.front().records.front().incarnation)) {
                break;
            }
            records += next.records.size();
            bytes += next.bytes;
            batch.push_back(std::move(queue.parts.front()));
            queue.parts.pop_front();
        }
        lock.unlock();
        commit_batch(it->first, batch, bytes);
        lock.lock();
        queue.busy = false;
        if (queue.parts.empty()) {
            partitions_.erase(it);
        } else {
            ready_.push_back(it);
            work_cv_.notify_one();
        }
    }
}

void DirectCommits::Impl::commit_batch(const PartitionKey& key, std::vector<Part>& batch,
                                       uint64_t bytes) {
    std::vector<storage::Record> records;
    for (const Part& part : batch) {
        for (const IngressRecord& record : part.records) {
            // No producer stamp: a direct record is never replayed, so never a duplicate.
            records.push_back(storage::Record{record.key, record.value, record.timestamp_ms, {}});
        }
    }
    const std::string& incarnation = batch.front().records.front().incarnation;
    Status status = committer_.commit(key.topic, incarnation, key.partition, records);
    if (status.is_ok() || status.code() == Errc::not_found) {
        const char* outcome = status.is_ok() ? "committed" : "dropped";
        direct_records().with({outcome}).inc(static_cast<double>(records.size()));
        {
            MutexLock lock(mutex_);
            queued_bytes_ -= bytes;  // before the completions: an answered request is not queued
            if (status.is_ok()) {
                stats_.committed_records += records.size();
            } else {
                stats_.dropped_records += records.size();
            }
        }
        for (Part& part : batch) part.request->settle(status);
        return;
    }
    NARAD_LOG_DEBUG(
        "direct commit to '{}' partition {} refused ({}); {} records go through the "
        "ingress WAL",
        key.topic, key.partition.value(), status.to_string(), records.size());
    {
        MutexLock lock(mutex_);
        queued_bytes_ -= bytes;  // the WAL's own bound applies to them now
    }
    send_to_wal(batch);
}

void DirectCommits::Impl::send_to_wal(std::vector<Part>& parts) {
    uint64_t count = 0;
    for (Part& part : parts) {
        count += part.records.size();
        std::shared_ptr<Request> request = part.request;
        wal_.append(
            std::move(part.records), [request](Status status) { request->settle(status); },
            IngressWal::Admission::replacing);
    }
    if (count == 0) return;
    direct_records().with({"wal"}).inc(static_cast<double>(count));
    MutexLock lock(mutex_);
    stats_.to_wal_records += count;
}

DirectCommits::DirectCommits(IngressWal& wal, storage::PartitionCommitter& committer, Serves serves,
                             DirectOptions options)
    : impl_(std::make_unique<Impl>(wal, committer, std::move(serves), options)) {}

DirectCommits::~DirectCommits() { stop(); }

bool DirectCommits::try_take(const meta::MetaState& state, std::vector<IngressRecord>& records,
                             IngressWal::Completion& done) {
    return impl_->try_take(state, records, done);
}
void DirectCommits::start() { impl_->start(); }
void DirectCommits::stop() { impl_->stop(); }
DirectStats DirectCommits::stats() const { return impl_->stats(); }

}  // namespace narad::wal
