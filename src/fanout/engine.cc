#include "fanout/engine.h"

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "base/checksum.h"
#include "base/failpoint.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/mutex.h"
#include "base/thread_pool.h"
#include "fanout/cursor_file.h"
#include "io/file_system.h"
#include "storage/topic_directory.h"

namespace narad::fanout {
namespace {

struct Metrics {
    metrics::Family<metrics::Gauge>& lag = metrics::Registry::global().gauge(
        "narad_fanout_lag_messages",
        "Fan-out lag per (parent partition, child): the parent's high watermark minus the "
        "child's cursor.",
        {"parent", "child", "partition"});
    metrics::Family<metrics::Gauge>& due_lag = metrics::Registry::global().gauge(
        "narad_fanout_due_lag_seconds",
        "How far behind its due frontier a delay child's cursor runs (0 while the head is not "
        "due yet).",
        {"parent", "child", "partition"});
    metrics::Family<metrics::Counter>& committed = metrics::Registry::global().counter(
        "narad_fanout_committed_total",
        "Records fanned out from a parent and durably committed to a child.", {"parent", "child"});
    metrics::Family<metrics::Counter>& dropped = metrics::Registry::global().counter(
        "narad_fanout_child_dropped_messages",
        "Parent records a child never received: aged out of the parent's retention before the "
        "cursor reached them, or unreadable. Data loss for that child: alert on any.",
        {"parent", "child"});
    metrics::Family<metrics::Counter>& failures = metrics::Registry::global().counter(
        "narad_fanout_commit_failures_total",
        "Fan-out batches a child partition refused or did not answer (retried).",
        {"parent", "child"});
    metrics::Family<metrics::Histogram>& batch_records = metrics::Registry::global().histogram(
        "narad_fanout_batch_records", "Records per committed fan-out batch.",
        {1, 8, 64, 256, 1024, 4096, 16384});
    metrics::Family<metrics::Histogram>& batch_bytes = metrics::Registry::global().histogram(
        "narad_fanout_batch_bytes", "Payload bytes per committed fan-out batch.",
        {1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456});
};

Metrics& metrics_instance() {
    static Metrics* m = new Metrics();
    return *m;
}

struct LinkKey {
    std::string parent;
    PartitionId partition;
    std::string child;
    auto operator<=>(const LinkKey&) const = default;
};

struct LinkSpec {
    std::string parent_incarnation;
    std::string attach_epoch;
    int64_t delay_ms = 0;
    bool operator==(const LinkSpec&) const = default;
};

// What one step decided about the link's next look.
struct NextStep {
    MonoTime due;
    bool wake_on_append = false;  // an append to the parent partition makes it due at once
};

struct Link {
    LinkKey key;
    LinkSpec spec;
    IngressId ingress;
    // The scheduler's fields, guarded by the engine's mutex.
    MonoTime due;
    bool busy = false;
    bool stopped = false;
    bool wake_on_append = false;
    bool appended = false;  // an append arrived while the link was busy
    CursorStat published;
    // The step's own fields: only the worker holding `busy` touches them.
    bool loaded = false;
    Offset next;
    std::optional<MonoTime> lingering;  // a partial slab waits once for more
    MonoTime failure_logged;
};

}  // namespace

IngressId FanoutEngine::link_ingress(std::string_view parent, std::string_view parent_incarnation,
                                     PartitionId partition, std::string_view child,
                                     std::string_view attach_epoch) {
    Checksummer sum;
    sum.update("narad-fanout-link");
    for (std::string_view part : {parent, parent_incarnation, child, attach_epoch}) {
        uint64_t size = part.size();
        sum.update(&size, sizeof size);
        sum.update(part);
    }
    uint32_t index = partition.value();
    sum.update(&index, sizeof index);
    return IngressId(sum.digest() | 1);  // never 0 (no stamp)
}

class FanoutEngine::Impl {
  public:
    Impl(Clock& clock, io::FileSystem& fs, meta::MetaStore& store, storage::LogManager& logs,
         storage::PartitionCommitter& committer, FanoutOptions options)
        : clock_(clock),
          fs_(fs),
          store_(store),
          logs_(logs),
          committer_(committer),
          options_(std::move(options)) {
        options_.threads = std::max<uint32_t>(options_.threads, 1);
        options_.max_batch_records = std::max<uint32_t>(options_.max_batch_records, 1);
        options_.max_batch_bytes = std::max<uint64_t>(options_.max_batch_bytes, 1);
    }

    void start() {
        {
            MutexLock lock(mutex_);
            if (running_) return;
            running_ = true;
            stopping_ = false;
        }
        watch_id_ = store_.watch([this](const meta::MetaSnapshot& snapshot) {
            MutexLock guard(mutex_);
            if (snapshot->topics_version == seen_topics_version_ &&
                snapshot->assignments_version == seen_assignments_version_) {
                return;
            }
            reconcile_wanted_ = true;
            ++wake_generation_;
            cv_.notify_all();
        });
        threads_.push_back(named_thread("narad-fanout-rc", [this] { reconcile_loop(); }));
        for (uint32_t i = 0; i < options_.threads; ++i) {
            threads_.push_back(named_thread("narad-fanout", [this] { work_loop(); }));
        }
    }

    void stop() {
        {
            MutexLock lock(mutex_);
            if (!running_) return;
            stopping_ = true;
            cv_.notify_all();
        }
        store_.unwatch(watch_id_);
        for (std::thread& thread : threads_) thread.join();
        threads_.clear();
        MutexLock lock(mutex_);
        for (auto& [key, link] : links_) forget_metrics(key);
        links_.clear();
        retiring_.clear();
        running_ = false;
    }

    void on_append(const std::string& topic, PartitionId partition) {
        MutexLock lock(mutex_);
        bool woke = false;
        for (auto it = links_.lower_bound(LinkKey{topic, partition, ""});
             it != links_.end() && it->first.parent == topic && it->first.partition == partition;
             ++it) {
            Link& link = *it->second;
            if (link.busy) {
                link.appended = true;
            } else if (link.wake_on_append) {
                link.due = clock_.now();
                woke = true;
            }
        }
        if (woke) {
            ++wake_generation_;
            cv_.notify_all();
        }
    }

    std::vector<CursorStat> cursor_stats(std::string_view parent) const {
        MutexLock lock(mutex_);
        std::vector<CursorStat> stats;
        for (const auto& [key, link] : links_) {
            if (parent.empty() || key.parent == parent) stats.push_back(link->published);
        }
        return stats;
    }

    void poke() {
        MutexLock lock(mutex_);
        reconcile_wanted_ = true;
        for (auto& [key, link] : links_) {
            if (!link->busy) link->due = std::min(link->due, clock_.now());
        }
        ++wake_generation_;
        cv_.notify_all();
    }

  private:
    void reconcile_loop() {
        MutexLock lock(mutex_);
        while (!stopping_) {
            reconcile_wanted_ = false;
            lock.unlock();
            reconcile();
            lock.lock();
            clock_.wait_for(lock, cv_, options_.reconcile_interval,
                            [this]() REQUIRES(mutex_) { return stopping_ || reconcile_wanted_; });
        }
    }

    // Makes the running links those the metastore asks of this node.
    void reconcile() {
        meta::MetaSnapshot snapshot = store_.snapshot();
        std::map<LinkKey, LinkSpec> desired;
        for (const auto& [name, topic] : snapshot->topics) {
            if (topic.role != meta::TopicRole::parent) continue;
            for (uint32_t p = 0; p < topic.partitions; ++p) {
                if (options_.owns && !options_.owns(*snapshot, name, PartitionId(p))) continue;
                for (const std::string& child_name : topic.children) {
                    const meta::Topic* child = snapshot->find_topic(child_name);
                    if (child == nullptr || child->parent != name || child->attach_epoch.empty()) {
                        continue;
                    }
                    desired[LinkKey{name, PartitionId(p), child_name}] = LinkSpec{
                        topic.incarnation.value(), child->attach_epoch, child->fanout_delay_ms};
                }
            }
        }
        MutexLock lock(mutex_);
        seen_topics_version_ = snapshot->topics_version;
        seen_assignments_version_ = snapshot->assignments_version;
        for (auto it = links_.begin(); it != links_.end();) {
            auto wanted = desired.find(it->first);
            if (wanted != desired.end() && wanted->second == it->second->spec) {
                ++it;
                continue;
            }
            it->second->stopped = true;
            forget_metrics(it->first);
            // A link in the middle of a step keeps its key until the step ends, so its successor
            // (a re-attach) never runs beside it on the same cursor file.
            if (it->second->busy) retiring_.insert(it->first);
            it = links_.erase(it);
        }
        bool added = false;
        for (auto& [key, spec] : desired) {
            if (links_.count(key) > 0 || retiring_.count(key) > 0) continue;
            auto link = std::make_shared<Link>();
            link->key = key;
            link->spec = spec;
            link->ingress = FanoutEngine::link_ingress(key.parent, spec.parent_incarnation,
                                                       key.partition, key.child, spec.attach_epoch);
            link->due = clock_.now();
            link->published.child = key.child;
            link->published.partition = key.partition;
            links_.emplace(key, std::move(link));
            added = true;
        }
        if (added) {
            ++wake_generation_;
            cv_.notify_all();
        }
    }

    void forget_metrics(const LinkKey& key) {
        std::string partition = std::to_string(key.partition.value());
        metrics_instance().lag.remove({key.parent, key.child, partition});
        metrics_instance().due_lag.remove({key.parent, key.child, partition});
    }

    void work_loop() {
        MutexLock lock(mutex_);
        while (!stopping_) {
            std::shared_ptr<Link> chosen;
            MonoTime now = clock_.now();
            MonoTime earliest = now + options_.idle_poll;
            for (auto& [key, link] : links_) {
                if (link->busy) continue;
                if (link->due <= now) {
                    if (!chosen || link->due < chosen->due) chosen = link;
                } else {
                    earliest = std::min(earliest, link->due);
                }
            }
            if (!chosen) {
                uint64_t seen = wake_generation_;
                clock_.wait_until(lock, cv_, earliest, [&]() REQUIRES(mutex_) {
                    return stopping_ || wake_generation_ != seen;
                });
                continue;
            }
            chosen->busy = true;
            chosen->appended = false;
            lock.unlock();
            NextStep next = step(*chosen);
            lock.lock();
            chosen->busy = false;
            if (chosen->stopped && retiring_.erase(chosen->key) > 0) {
                reconcile_wanted_ = true;  // its successor may start now
                cv_.notify_all();
            }
            chosen->wake_on_append = next.wake_on_append;
            chosen->due = next.wake_on_append && chosen->appended ? clock_.now() : next.due;
        }
    }

    NextStep retry_later() { return NextStep{clock_.now() + options_.retry_interval, false}; }

    void publish(Link& link, Offset high_watermark, int64_t due_lag_ms) {
        std::string partition = std::to_string(link.key.partition.value());
        int64_t lag =
            static_cast<int64_t>(high_watermark.value()) - static_cast<int64_t>(link.next.value());
        {
            MutexLock lock(mutex_);
            if (link.stopped) return;
            link.published.next = link.next;
            link.published.high_watermark = high_watermark;
            link.published.anchored = link.loaded;
            link.published.due_lag_ms = due_lag_ms;
            metrics_instance()
                .lag.with({link.key.parent, link.key.child, partition})
                .set(static_cast<double>(std::max<int64_t>(lag, 0)));
            if (link.spec.delay_ms > 0) {
                metrics_instance()
                    .due_lag.with({link.key.parent, link.key.child, partition})
                    .set(static_cast<double>(due_lag_ms) / 1000.0);
            }
        }
    }

    std::string cursor_path(const Link& link) const {
        return io::join_path(logs_.partition_directory(link.key.parent, link.key.partition),
                             cursor_file_name(link.key.child));
    }

    void count_dropped(const Link& link, uint64_t count, const char* why) {
        if (count == 0) return;
        metrics_instance().dropped.with({link.key.parent, link.key.child}).inc(count);
        NARAD_LOG_WARN("fan-out {}/{} -> {}: {} records never reach the child ({})",
                       link.key.parent, link.key.partition.value(), link.key.child, count, why);
    }

    // Whether the metastore, read linearizably, still links the child with this epoch (a stale
    // replica must not make a cursor anchor at the tail).
    Result<bool> epoch_confirmed(const Link& link) {
        NARAD_ASSIGN_OR_RETURN(std::optional<meta::Topic> child, store_.read_topic(link.key.child));
        return child && child->parent == link.key.parent &&
               child->attach_epoch == link.spec.attach_epoch;
    }

    // The parent partition's log, created (with its topic's incarnation marker, as a first
    // commit would) when nothing was committed to it yet, so the cursor has a directory to live
    // in from its anchor on.
    Result<std::shared_ptr<storage::PartitionLog>> open_parent(const Link& link) {
        auto opened = logs_.get(link.key.parent, link.key.partition, storage::CreateIfMissing::no);
        if (opened.is_ok() || opened.code() != Errc::not_found) return opened;
        NARAD_RETURN_IF_ERROR(
            storage::prepare_topic_directory(fs_, logs_.topic_directory(link.key.parent),
                                             IncarnationId(link.spec.parent_incarnation)));
        return logs_.get(link.key.parent, link.key.partition, storage::CreateIfMissing::yes);
    }

    // Sets link.next from the cursor file (see the header); false: try again later.
    bool load_cursor(Link& link, storage::PartitionLog& log) {
        Offset oldest = log.oldest_offset();
        Offset tail = log.high_watermark();
        std::string path = cursor_path(link);
        auto read = read_cursor(fs_, path);
        if (!read.is_ok() && read.code() != Errc::not_found && read.code() != Errc::corrupt) {
            return false;  // the disk did not answer: never guess a position from that
        }
        bool named_by_marker = false;
        if (options_.installed_links) {
            for (const LinkRef& ref :
                 options_.installed_links(link.key.parent, link.key.partition)) {
                named_by_marker = named_by_marker || (ref.child == link.key.child &&
                                                      ref.attach_epoch == link.spec.attach_epoch);
            }
        }
        if (read.is_ok() && read->epoch == link.spec.attach_epoch) {
            link.next = std::clamp(read->next, oldest, std::max(oldest, tail));
            if (read->next < oldest) {
                count_dropped(link, oldest.value() - read->next.value(), "below retention");
            }
        } else if (named_by_marker || (!read.is_ok() && read.code() == Errc::corrupt)) {
            // The link existed before: never anchor at the tail over records it has not sent.
            if (!read.is_ok() && read.code() == Errc::corrupt) {
                NARAD_LOG_WARN("fan-out cursor {} is damaged ({}); resuming from offset {}", path,
                               read.status().message(), oldest.value());
            }
            link.next = oldest;
        } else {
            // A fresh attach (no file, or one from an earlier attach): start at the tail, once
            // the metastore confirms this is the current link.
            auto confirmed = epoch_confirmed(link);
            if (!confirmed.is_ok() || !*confirmed) return false;
            link.next = tail;
        }
        Status written = write_cursor(fs_, path, CursorPosition{link.spec.attach_epoch, link.next});
        if (!written.is_ok()) {
            NARAD_LOG_WARN("cannot write fan-out cursor {}: {}", path, written.to_string());
            return false;
        }
        link.loaded = true;
        return true;
    }

    uint32_t child_partition(const storage::StoredRecord& record, uint32_t parent_partitions,
                             uint32_t child_partitions, PartitionId partition) const {
        if (!record.key.empty()) return fnv1a32(record.key) % child_partitions;
        if (parent_partitions == child_partitions) return partition.value();
        return static_cast<uint32_t>(record.offset.value() % child_partitions);
    }

    NextStep step(Link& link) {
        meta::MetaSnapshot snapshot = store_.snapshot();
        const meta::Topic* parent = snapshot->find_topic(link.key.parent);
        const meta::Topic* child = snapshot->find_topic(link.key.child);
        if (parent == nullptr || child == nullptr || child->parent != link.key.parent ||
            child->attach_epoch != link.spec.attach_epoch) {
            return retry_later();  // the reconciler stops it
        }
        auto opened = open_parent(link);
        if (!opened.is_ok()) return retry_later();
        std::shared_ptr<storage::PartitionLog> log = *opened;
        if (!link.loaded) {
            if (!load_cursor(link, *log)) return retry_later();
        }
        auto read = log->read(link.next, options_.max_batch_records, options_.max_batch_bytes);
        if (!read.is_ok() && read.code() == Errc::gone) {
            Offset oldest = log->oldest_offset();
            count_dropped(link, oldest.value() - link.next.value(), "aged out of the parent");
            link.next = oldest;
            return persist(link, *log, 0);
        }
        if (!read.is_ok()) return retry_later();
        Offset high_watermark = log->high_watermark();
        std::vector<storage::StoredRecord>& records = read->records;
        int64_t due_lag_ms = 0;
        NextStep idle{clock_.now() + options_.idle_poll, true};
        if (link.spec.delay_ms > 0) {
            int64_t now_ms = clock_.wall_ms();
            auto undue = std::find_if(records.begin(), records.end(), [&](const auto& record) {
                return record.timestamp_ms + link.spec.delay_ms > now_ms;
            });
            if (undue != records.end()) {
                int64_t wait_ms = undue->timestamp_ms + link.spec.delay_ms - now_ms;
                idle = NextStep{clock_.now() + std::min(Millis(wait_ms), options_.due_wake_cap),
                                false};
                read->next = undue->offset;
                records.erase(undue, records.end());
            }
            if (!records.empty()) {
                due_lag_ms = std::max<int64_t>(
                    0, now_ms - (records.front().timestamp_ms + link.spec.delay_ms));
            }
        }
        // Unreadable frames below where this step stops are passed over for good.
        uint64_t corrupt = static_cast<uint64_t>(
            std::count_if(read->corrupt.begin(), read->corrupt.end(),
                          [&](Offset offset) { return offset < read->next; }));
        if (records.empty()) {
            count_dropped(link, corrupt, "unreadable frames");
            if (read->next > link.next) {
                link.next = read->next;  // past corrupt frames only
                return persist(link, *log, due_lag_ms, idle);
            }
            publish(link, high_watermark, due_lag_ms);
            return idle;
        }
        uint64_t bytes = 0;
        for (const auto& record : records) bytes += record.key.size() + record.value.size();
        bool partial = records.size() < options_.max_batch_records &&
                       bytes < options_.max_batch_bytes && read->next >= high_watermark;
        if (partial && !link.lingering && options_.linger.count() > 0) {
            link.lingering = clock_.now();
            publish(link, high_watermark, due_lag_ms);
            return NextStep{clock_.now() + options_.linger, false};
        }
        link.lingering.reset();

        uint32_t child_partitions = std::max<uint32_t>(child->partitions, 1);
        std::map<uint32_t, std::vector<storage::Record>> batches;
        for (const auto& record : records) {
            storage::Record copy;
            copy.key = record.key;
            copy.value = record.value;
            copy.timestamp_ms = record.timestamp_ms;
            copy.producer = storage::ProducerStamp{link.ingress, WalSeq(record.offset.value() + 1)};
            batches[child_partition(record, parent->partitions, child_partitions,
                                    link.key.partition)]
                .push_back(copy);
        }
        // Every child partition gets its copies, so one that is down holds back only the
        // cursor, not its siblings' consumers; the slab is sent again until all took it.
        bool all_committed = true;
        NARAD_FAILPOINT("fanout.before_child_commit");
        for (const auto& [index, batch] : batches) {
            Status committed = committer_.commit(link.key.child, child->incarnation.value(),
                                                 PartitionId(index), batch);
            if (committed.is_ok()) continue;
            all_committed = false;
            metrics_instance().failures.with({link.key.parent, link.key.child}).inc();
            MonoTime now = clock_.now();
            if (now - link.failure_logged >= std::chrono::seconds(30)) {
                link.failure_logged = now;
                NARAD_LOG_WARN("fan-out {}/{} -> {}/{} holds its cursor at {}: {} (retrying)",
                               link.key.parent, link.key.partition.value(), link.key.child, index,
                               link.next.value(), committed.to_string());
            }
        }
        if (!all_committed) {
            publish(link, high_watermark, due_lag_ms);
            return retry_later();
        }
        count_dropped(link, corrupt, "unreadable frames");
        metrics_instance()
            .committed.with({link.key.parent, link.key.child})
            .inc(static_cast<double>(records.size()));
        metrics_instance().batch_records.get().observe(static_cast<double>(records.size()));
        metrics_instance().batch_bytes.get().observe(static_cast<double>(bytes));
        link.next = read->next;
        NARAD_FAILPOINT("fanout.before_cursor_write");
        bool more = read->next < high_watermark && idle.wake_on_append;
        return persist(link, *log, due_lag_ms, more ? NextStep{clock_.now(), false} : idle);
    }

    NextStep persist(Link& link, storage::PartitionLog& log, int64_t due_lag_ms,
                     std::optional<NextStep> then = std::nullopt) {
        Status written =
            write_cursor(fs_, cursor_path(link), CursorPosition{link.spec.attach_epoch, link.next});
        if (!written.is_ok()) {
            // The copies are durable and stamped: a restart from the older file re-sends them and
            // the child skips them.
            NARAD_LOG_WARN("cannot write fan-out cursor {}: {}", cursor_path(link),
                           written.to_string());
        }
        publish(link, log.high_watermark(), due_lag_ms);
        return then ? *then : NextStep{clock_.now(), false};
    }

    Clock& clock_;
    io::FileSystem& fs_;
    meta::MetaStore& store_;
    storage::LogManager& logs_;
    storage::PartitionCommitter& committer_;
    FanoutOptions options_;

    mutable Mutex mutex_;
    CondVar cv_;
    std::map<LinkKey, std::shared_ptr<Link>> links_ GUARDED_BY(mutex_);
    std::set<LinkKey> retiring_ GUARDED_BY(mutex_);  // stopped links still in their last step
    bool running_ GUARDED_BY(mutex_) = false;
    bool stopping_ GUARDED_BY(mutex_) = false;
    bool reconcile_wanted_ GUARDED_BY(mutex_) = false;
    uint64_t wake_generation_ GUARDED_BY(mutex_) = 0;
    uint64_t seen_topics_version_ GUARDED_BY(mutex_) = 0;
    uint64_t seen_assignments_version_ GUARDED_BY(mutex_) = 0;
    uint64_t watch_id_ = 0;
    std::vector<std::thread> threads_;
};

FanoutEngine::FanoutEngine(Clock& clock, io::FileSystem& fs, meta::MetaStore& store,
                           storage::LogManager& logs, storage::PartitionCommitter& committer,
                           FanoutOptions options)
    : impl_(std::make_unique<Impl>(clock, fs, store, logs, committer, std::move(options))) {}

FanoutEngine::~FanoutEngine() { impl_->stop(); }

void FanoutEngine::start() { impl_->start(); }
void FanoutEngine::stop() { impl_->stop(); }
void FanoutEngine::on_append(const std::string& topic, PartitionId partition) {
    impl_->on_append(topic, partition);
}
std::vector<CursorStat> FanoutEngine::cursor_stats(std::string_view parent) const {
    return impl_->cursor_stats(parent);
}
void FanoutEngine::poke() { impl_->poke(); }

}  // namespace narad::fanout
