#include "meta/etcd_meta_store.h"

#include <algorithm>
#include <set>
#include <thread>

#include "base/log.h"
#include "base/mutex.h"
#include "base/thread_pool.h"
#include "meta/codec.h"

namespace narad::meta {

// The watch-fed copy of the prefix. Each watch batch copies the last published MetaState and
// decodes only the keys the batch changed, so applying an event costs the same however many
// topics and partitions the cluster holds (less the copy); the published state is never changed
// after it is published.
class EtcdMetaStore::Replica {
  public:
    Replica(EtcdClient& client, Clock& clock, const Keys& keys)
        : client_(client), clock_(clock), keys_(keys), snapshot_(std::make_shared<MetaState>()) {}

    ~Replica() { stop(); }

    // Loads the prefix and starts watching after it.
    Status start() {
        NARAD_RETURN_IF_ERROR(reload());
        reloader_ = named_thread("narad-meta-load", [this] { reload_when_needed(); });
        return Status::ok();
    }

    void stop() {
        std::unique_ptr<EtcdWatch> watch;
        {
            MutexLock lock(mutex_);
            stopped_ = true;
            watch = std::move(watch_);
        }
        changed_.notify_all();
        watch.reset();  // joins the watch thread outside the lock
        if (reloader_.joinable()) reloader_.join();
    }

    MetaSnapshot snapshot() const {
        MutexLock lock(mutex_);
        return snapshot_;
    }

    Status wait_for_revision(int64_t revision, Millis timeout) {
        MutexLock lock(mutex_);
        bool reached = clock_.wait_for(lock, changed_, timeout, [&]() REQUIRES(mutex_) {
            return stopped_ || static_cast<int64_t>(snapshot_->revision) >= revision;
        });
        if (static_cast<int64_t>(snapshot_->revision) >= revision) return Status::ok();
        if (stopped_) return Status(Errc::shutting_down, "the metastore replica is stopped");
        (void)reached;
        return Status(Errc::timeout, "the metastore replica did not reach revision " +
                                         std::to_string(revision) + " in time (at " +
                                         std::to_string(snapshot_->revision) + ")");
    }

    uint64_t add_watcher(std::function<void(const MetaSnapshot&)> watcher) {
        MutexLock lock(watchers_mutex_);
        uint64_t id = next_watcher_++;
        watchers_[id] = std::move(watcher);
        return id;
    }

    void remove_watcher(uint64_t id) {
        MutexLock lock(watchers_mutex_);
        watchers_.erase(id);
    }

  private:
    // Reads the whole prefix linearizably and (re)starts the watch after it.
    Status reload() {
        auto range = client_.range_all(keys_.prefix(), EtcdClient::prefix_end(keys_.prefix()));
        if (!range.is_ok()) return range.status().with_context("reading the metastore");
        {
            MutexLock lock(apply_mutex_);
            auto next = std::make_shared<MetaState>();
            Touched touched{true, true, true, true};
            for (const KeyValue& kv : range->kvs) apply_key(*next, kv.key, &kv.value, touched);
            publish(std::move(next), range->revision, touched);
        }
        auto watch = client_.watch(
            keys_.prefix(), EtcdClient::prefix_end(keys_.prefix()), range->revision + 1,
            [this](const WatchBatch& batch) { apply(batch); },
            [this](const Status& error) { on_watch_error(error); });
        if (!watch.is_ok()) return watch.status().with_context("watching the metastore");
        MutexLock lock(mutex_);
        if (!stopped_) watch_ = std::move(*watch);
        return Status::ok();
    }

    // The watch fell behind a compaction: the reloader thread reads everything again (not this
    // thread: it is the watch's own, which the reload replaces).
    void on_watch_error(const Status& error) {
        NARAD_LOG_WARN("metastore watch ended ({}); reading the metastore again",
                       error.to_string());
        {
            MutexLock lock(mutex_);
            reload_needed_ = true;
        }
        changed_.notify_all();
    }

    void reload_when_needed() {
        MutexLock lock(mutex_);
        while (!stopped_) {
            changed_.wait(lock, [&]() REQUIRES(mutex_) { return stopped_ || reload_needed_; });
            if (stopped_) return;
            std::unique_ptr<EtcdWatch> old = std::move(watch_);
            lock.unlock();
            old.reset();
            Status status = reload();
            lock.lock();
            if (status.is_ok()) {
                reload_needed_ = false;
            } else {
                NARAD_LOG_WARN("re-reading the metastore failed: {}", status.to_string());
                clock_.wait_for(lock, changed_, std::chrono::seconds(1),
                                [&]() REQUIRES(mutex_) { return stopped_; });
            }
        }
    }

    void apply(const WatchBatch& batch) {
        MutexLock lock(apply_mutex_);
        auto next = std::make_shared<MetaState>(*snapshot());
        Touched touched;
        int64_t revision = batch.revision;
        for (const WatchEvent& event : batch.events) {
            const std::string* value =
                event.type == WatchEvent::Type::put ? &event.kv.value : nullptr;
            apply_key(*next, event.kv.key, value, touched);
            revision = std::max(revision, event.kv.mod_revision);
        }
        publish(std::move(next), revision, touched);
    }

    struct Touched {
        bool topics = false;
        bool assignments = false;
        bool members = false;
        bool users = false;
    };

    // Decodes `value` into `map[id]`, or erases the entry when the key was deleted (`value`
    // null) or its value does not decode (logged: a record this version cannot read is skipped).
    template <typename Map, typename Id, typename Decode>
    static void put_or_erase(Map& map, Id id, const std::string& key, const std::string* value,
                             Decode decode) {
        if (value == nullptr) {
            map.erase(id);
            return;
        }
        auto decoded = decode(*value);
        if (decoded.is_ok()) {
            map.insert_or_assign(std::move(id), std::move(*decoded));
        } else {
            map.erase(id);
            NARAD_LOG_WARN("skipping metastore key {}: {}", key, decoded.status().to_string());
        }
    }

    // A key whose presence is the fact (a liveness or dead mark): `node` is in `set` while it
    // exists.
    static void mark(std::set<NodeId>& set, NodeId node, bool present) {
        if (present) {
            set.insert(std::move(node));
        } else {
            set.erase(node);
        }
    }

    // Applies one key's new value (null: deleted) to `state`.
    void apply_key(MetaState& state, const std::string& key, const std::string* value,
                   Touched& touched) const {
        Keys::Parsed parsed = keys_.parse(key);
        switch (parsed.domain) {
            case Keys::Parsed::Domain::topic:
                touched.topics = true;
                put_or_erase(state.topics, parsed.name, key, value, decode_topic);
                break;
            case Keys::Parsed::Domain::assignment:
                touched.assignments = true;
                put_or_erase(state.assignments, PartitionKey{parsed.name, parsed.partition}, key,
                             value, decode_assignment);
                break;
            case Keys::Parsed::Domain::member:
                touched.members = true;
                put_or_erase(state.members, NodeId(parsed.name), key, value, decode_member);
                break;
            case Keys::Parsed::Domain::user:
                touched.users = true;
                put_or_erase(state.users, parsed.name, key, value, decode_user);
                break;
            case Keys::Parsed::Domain::live:
                touched.members = true;
                mark(state.live, NodeId(parsed.name), value != nullptr);
                break;
            case Keys::Parsed::Domain::dead:
                touched.members = true;
                mark(state.declared_dead, NodeId(parsed.name), value != nullptr);
                break;
            case Keys::Parsed::Domain::ready: {
                touched.members = true;
                auto controller =
                    value != nullptr ? decode_controller_ready(*value) : Result<NodeId>(NodeId());
                state.controller = controller.is_ok() ? std::move(*controller) : NodeId();
                break;
            }
            case Keys::Parsed::Domain::other:
                break;
        }
    }

    // Stamps `next` with `revision` and the domain versions, and publishes it to readers and
    // watchers.
    void publish(std::shared_ptr<MetaState> next, int64_t revision, Touched touched)
        REQUIRES(apply_mutex_) {
        MetaSnapshot previous = snapshot();
        next->revision = static_cast<uint64_t>(std::max<int64_t>(revision, 0));
        next->topics_version = previous->topics_version + (touched.topics ? 1 : 0);
        next->assignments_version = previous->assignments_version + (touched.assignments ? 1 : 0);
        next->members_version = previous->members_version + (touched.members ? 1 : 0);
        next->users_version = previous->users_version + (touched.users ? 1 : 0);
        // A member without a liveness key keeps the time this replica first saw it so.
        MonoTime now = clock_.now();
        next->down_since.clear();
        for (const auto& [node, member] : next->members) {
            if (next->live.count(node) > 0) continue;
            auto before = previous->down_since.find(node);
            next->down_since[node] = before != previous->down_since.end() ? before->second : now;
        }
        MetaSnapshot published = std::move(next);
        {
            MutexLock lock(mutex_);
            snapshot_ = published;
        }
        changed_.notify_all();
        std::map<uint64_t, std::function<void(const MetaSnapshot&)>> watchers;
        {
            MutexLock lock(watchers_mutex_);
            watchers = watchers_;
        }
        for (auto& [id, watcher] : watchers) watcher(published);
    }

    EtcdClient& client_;
    Clock& clock_;
    const Keys& keys_;
    Mutex apply_mutex_;  // one batch or reload applied at a time
    mutable Mutex mutex_;
    CondVar changed_;
    MetaSnapshot snapshot_ GUARDED_BY(mutex_);
    std::unique_ptr<EtcdWatch> watch_ GUARDED_BY(mutex_);
    bool stopped_ GUARDED_BY(mutex_) = false;
    bool reload_needed_ GUARDED_BY(mutex_) = false;
    std::thread reloader_;
    Mutex watchers_mutex_;
    std::map<uint64_t, std::function<void(const MetaSnapshot&)>> watchers_
        GUARDED_BY(watchers_mutex_);
    uint64_t next_watcher_ GUARDED_BY(watchers_mutex_) = 1;
};

EtcdMetaStore::EtcdMetaStore(EtcdClient& client, Clock& clock, EtcdMetaStoreOptions options)
    : client_(client),
      clock_(clock),
      options_(std::move(options)),
      keys_(options_.cluster),
      replica_(std::make_unique<Replica>(client_, clock_, keys_)) {}

EtcdMetaStore::~EtcdMetaStore() { replica_->stop(); }

Result<std::unique_ptr<EtcdMetaStore>> EtcdMetaStore::open(EtcdClient& client, Clock& clock,
                                                           EtcdMetaStoreOptions options) {
    std::unique_ptr<EtcdMetaStore> store(new EtcdMetaStore(client, clock, std::move(options)));
    NARAD_RETURN_IF_ERROR(store->replica_->start());
    return store;
}

MetaSnapshot EtcdMetaStore::snapshot() const { return replica_->snapshot(); }

uint64_t EtcdMetaStore::watch(std::function<void(const MetaSnapshot&)> watcher) {
    return replica_->add_watcher(std::move(watcher));
}

void EtcdMetaStore::unwatch(uint64_t id) { replica_->remove_watcher(id); }

Status EtcdMetaStore::wait_for_revision(int64_t revision, Millis timeout) {
    return replica_->wait_for_revision(revision, timeout);
}

Result<MetaSnapshot> EtcdMetaStore::sync() {
    // A write under the prefix is ordered after everything committed before it, and the watch
    // delivers it, so once the replica shows its revision it reflects a linearizable view. (A
    // linearizable read's revision would do on a dedicated etcd, but on a shared one the last
    // change may lie outside the prefix and the replica would never report it.)
    NARAD_ASSIGN_OR_RETURN(int64_t revision, client_.put(keys_.barrier(), ""));
    NARAD_RETURN_IF_ERROR(wait_for_revision(revision, options_.catch_up_timeout));
    return snapshot();
}

void EtcdMetaStore::set_fence(std::optional<Fence> fence) {
    MutexLock lock(fence_mutex_);
    fence_ = std::move(fence);
}

std::optional<Fence> EtcdMetaStore::fence() const {
    MutexLock lock(fence_mutex_);
    return fence_;
}

Result<TxnResult> EtcdMetaStore::fenced_txn(std::vector<Compare> compare,
                                            std::vector<TxnOp> success,
                                            std::vector<TxnOp> failure) {
    std::optional<Fence> held = fence();
    if (!held && options_.require_fence) {
        return Status(Errc::unavailable,
                      "control plane temporarily unavailable: this node is not the controller; "
                      "retry");
    }
    if (held) {
        compare.push_back(Compare::create_revision_is(held->key, held->create_revision));
        failure.push_back(TxnOp::range(held->key));
    }
    size_t ops = std::max({compare.size(), success.size(), failure.size()});
    Result<TxnResult> sent =
        client_.txn(std::move(compare), std::move(success), std::move(failure));
    if (!sent.is_ok() && sent.status().message().find("too many operations") != std::string::npos) {
        // etcd's --max-txn-ops is below what this write needs (a wide topic is one txn). The
        // request asks for more than this cluster holds, as beyond topic.max_partitions: a 400,
        // naming the setting that would let it through.
        return Status(Errc::invalid_argument,
                      "etcd refused a txn of " + std::to_string(ops) +
                          " operations (more than its --max-txn-ops allows); run the metastore's "
                          "etcd (cluster.meta_endpoints) with --max-txn-ops=" +
                          std::to_string(ops) + " or more, or lower topic.max_partitions");
    }
    NARAD_ASSIGN_OR_RETURN(TxnResult result, std::move(sent));
    if (!result.succeeded && held) {
        const RangeResult& fence_read = result.ranges.back();
        bool fence_holds = !fence_read.kvs.empty() &&
                           fence_read.kvs.front().create_revision == held->create_revision;
        if (!fence_holds) {
            return Status(Errc::unavailable,
                          "control plane temporarily unavailable: this node is no longer the "
                          "controller; retry");
        }
    }
    return result;
}

Status EtcdMetaStore::after_write(int64_t revision) {
    return wait_for_revision(revision, options_.catch_up_timeout);
}

void EtcdMetaStore::append_placement_guards(std::vector<Compare>& guards,
                                            const std::vector<NodeId>& owners) const {
    std::set<NodeId> distinct(owners.begin(), owners.end());
    for (const NodeId& owner : distinct) guards.push_back(Compare::missing(keys_.draining(owner)));
}

Status EtcdMetaStore::draining_owner_conflict() {
    return Status(Errc::unavailable,
                  "control plane temporarily unavailable: a node the partitions were placed on "
                  "started draining; retry");
}

uint32_t EtcdMetaStore::txn_ops_for(uint32_t max_partitions) {
    return std::max<uint32_t>(128, max_partitions + 1);
}

Result<Topic> EtcdMetaStore::create_topic(Topic topic, std::vector<NodeId> owners) {
    if (owners.size() != topic.partitions) {
        return Status(Errc::invalid_argument, "one owner per partition is required");
    }
    std::string key = keys_.topic(topic.name);
    std::vector<TxnOp> success{TxnOp::put(key, encode_topic(topic))};
    for (uint32_t p = 0; p < topic.partitions; ++p) {
        success.push_back(TxnOp::put(keys_.assignment(topic.name, PartitionId(p)),
                                     encode_assignment(Assignment{owners[p], {}})));
    }
    std::vector<Compare> guards{Compare::missing(key)};
    append_placement_guards(guards, owners);
    auto result = fenced_txn(std::move(guards), std::move(success), {TxnOp::range(key)});
    if (!result.is_ok() && result.code() == Errc::unknown_outcome) {
        // Resolve by reading: our incarnation there means the create took.
        auto read = client_.range(key);
        if (read.is_ok() && !read->kvs.empty()) {
            auto stored = decode_topic(read->kvs.front().value);
            if (stored.is_ok() && stored->incarnation == topic.incarnation) {
                NARAD_RETURN_IF_ERROR(after_write(read->revision));
                return topic;
            }
        }
        return result.status();
    }
    NARAD_RETURN_IF_ERROR(result.status());
    if (!result->succeeded) {
        if (result->ranges.front().kvs.empty()) return draining_owner_conflict();
        return Status(Errc::already_exists, "topic '" + topic.name + "' already exists");
    }
    NARAD_RETURN_IF_ERROR(after_write(result->revision));
    return topic;
}

Result<Topic> EtcdMetaStore::update_topic(Topic topic, std::vector<NodeId> added_owners) {
    std::string key = keys_.topic(topic.name);
    NARAD_ASSIGN_OR_RETURN(RangeResult read, client_.range(key));
    if (read.kvs.empty()) return Status(Errc::not_found, "topic '" + topic.name + "' not found");
    NARAD_ASSIGN_OR_RETURN(Topic existing, decode_topic(read.kvs.front().value));
    if (existing.incarnation != topic.incarnation) {
        return Status(Errc::not_found, "topic '" + topic.name + "' not found");
    }
    if (topic.partitions < existing.partitions ||
        added_owners.size() != topic.partitions - existing.partitions) {
        return Status(Errc::invalid_argument, "partitions only grow, one owner per new partition");
    }
    std::vector<TxnOp> success{TxnOp::put(key, encode_topic(topic))};
    for (uint32_t p = existing.partitions; p < topic.partitions; ++p) {
        success.push_back(
            TxnOp::put(keys_.assignment(topic.name, PartitionId(p)),
                       encode_assignment(Assignment{added_owners[p - existing.partitions], {}})));
    }
    std::vector<Compare> guards{Compare::mod_revision_is(key, read.kvs.front().mod_revision)};
    append_placement_guards(guards, added_owners);
    NARAD_ASSIGN_OR_RETURN(TxnResult result,
                           fenced_txn(std::move(guards), std::move(success), {TxnOp::range(key)}));
    if (!result.succeeded) {
        const RangeResult& now = result.ranges.front();
        if (!now.kvs.empty() && now.kvs.front().mod_revision == read.kvs.front().mod_revision) {
            return draining_owner_conflict();
        }
        return Status(Errc::conflict,
                      "topic '" + topic.name + "' changed while it was being updated; retry");
    }
    NARAD_RETURN_IF_ERROR(after_write(result.revision));
    return topic;
}

Status EtcdMetaStore::delete_topic(std::string_view name) {
    std::string key = keys_.topic(name);
    NARAD_ASSIGN_OR_RETURN(RangeResult read, client_.range(key));
    if (read.kvs.empty())
        return Status(Errc::not_found, "topic '" + std::string(name) + "' not found");
    std::string assignments = keys_.assignments_prefix(name);
    std::vector<Compare> guards{Compare::mod_revision_is(key, read.kvs.front().mod_revision)};
    std::vector<TxnOp> writes{TxnOp::remove(key),
                              TxnOp::remove(assignments, EtcdClient::prefix_end(assignments))};
    // The topics linked to it by fan-out are unlinked in the same txn, each compared on the
    // revision read, so no child is left pointing at a deleted parent (or the reverse).
    NARAD_ASSIGN_OR_RETURN(Topic deleted, decode_topic(read.kvs.front().value));
    for (const std::string& linked : linked_topics(deleted)) {
        std::string linked_key = keys_.topic(linked);
        NARAD_ASSIGN_OR_RETURN(RangeResult other, client_.range(linked_key));
        if (other.kvs.empty()) continue;
        NARAD_ASSIGN_OR_RETURN(Topic record, decode_topic(other.kvs.front().value));
        unlink_deleted(deleted, record);
        guards.push_back(Compare::mod_revision_is(linked_key, other.kvs.front().mod_revision));
        writes.push_back(TxnOp::put(linked_key, encode_topic(record)));
    }
    NARAD_ASSIGN_OR_RETURN(TxnResult result, fenced_txn(std::move(guards), std::move(writes)));
    if (!result.succeeded) {
        return Status(Errc::conflict, "topic '" + std::string(name) +
                                          "' changed while it was being deleted; retry");
    }
    return after_write(result.revision);
}

Result<std::vector<Topic>> EtcdMetaStore::change_topics(const std::vector<std::string>& names,
                                                        const TopicsChange& change) {
    for (int attempt = 0; attempt < 8; ++attempt) {
        TopicRecords read;
        std::map<std::string, int64_t, std::less<>> revisions;  // 0: absent
        for (const std::string& name : names) {
            NARAD_ASSIGN_OR_RETURN(RangeResult range, client_.range(keys_.topic(name)));
            if (range.kvs.empty()) {
                read[name] = std::nullopt;
                revisions[name] = 0;
                continue;
            }
            NARAD_ASSIGN_OR_RETURN(Topic decoded, decode_topic(range.kvs.front().value));
            read[name] = std::move(decoded);
            revisions[name] = range.kvs.front().mod_revision;
        }
        NARAD_ASSIGN_OR_RETURN(std::vector<TopicWrite> writes, change(read));
        if (writes.empty()) return std::vector<Topic>{};
        std::vector<Compare> guards;
        for (const auto& [name, revision] : revisions) {
            std::string key = keys_.topic(name);
            guards.push_back(revision == 0 ? Compare::missing(key)
                                           : Compare::mod_revision_is(key, revision));
        }
        std::vector<TxnOp> puts;
        std::vector<NodeId> all_owners;
        std::vector<std::pair<std::string, std::string>> written;  // key, value
        for (const TopicWrite& write : writes) {
            NARAD_ASSIGN_OR_RETURN(uint32_t first, first_new_partition(read, write));
            std::string key = keys_.topic(write.topic.name);
            std::string value = encode_topic(write.topic);
            puts.push_back(TxnOp::put(key, value));
            written.emplace_back(key, std::move(value));
            for (uint32_t p = first; p < write.topic.partitions; ++p) {
                puts.push_back(
                    TxnOp::put(keys_.assignment(write.topic.name, PartitionId(p)),
                               encode_assignment(Assignment{write.owners[p - first], {}})));
            }
            all_owners.insert(all_owners.end(), write.owners.begin(), write.owners.end());
        }
        append_placement_guards(guards, all_owners);
        auto result = fenced_txn(std::move(guards), std::move(puts));
        if (!result.is_ok() && result.code() == Errc::unknown_outcome) {
            // Resolve by reading: every record as we wrote it means the write took.
            bool took = true;
            int64_t revision = 0;
            for (const auto& [key, value] : written) {
                auto now = client_.range(key);
                took = took && now.is_ok() && !now->kvs.empty() && now->kvs.front().value == value;
                if (took) revision = std::max(revision, now->revision);
            }
            if (!took) return result.status();
            NARAD_RETURN_IF_ERROR(after_write(revision));
        } else {
            NARAD_RETURN_IF_ERROR(result.status());
            if (!result->succeeded) {
                // A record changed under us (read again), or a placement guard failed.
                bool records_moved = false;
                for (const auto& [name, revision] : revisions) {
                    auto now = client_.range(keys_.topic(name));
                    if (!now.is_ok()) return now.status();
                    int64_t seen = now->kvs.empty() ? 0 : now->kvs.front().mod_revision;
                    records_moved = records_moved || seen != revision;
                }
                if (!records_moved) return draining_owner_conflict();
                continue;
            }
            NARAD_RETURN_IF_ERROR(after_write(result->revision));
        }
        std::vector<Topic> stored;
        for (TopicWrite& write : writes) stored.push_back(std::move(write.topic));
        return stored;
    }
    return Status(Errc::conflict, "the topics are being changed concurrently; retry");
}

Result<std::optional<User>> EtcdMetaStore::change_user(std::string_view name,
                                                       const UserChange& change) {
    // Users are not controller state: any node writes them, each write a compare-and-swap on
    // the record it read, so two nodes changing one user cannot lose either change.
    std::string key = keys_.user(name);
    for (int attempt = 0; attempt < 8; ++attempt) {
        NARAD_ASSIGN_OR_RETURN(RangeResult read, client_.range(key));
        std::optional<User> stored;
        int64_t revision = 0;
        if (!read.kvs.empty()) {
            NARAD_ASSIGN_OR_RETURN(User decoded, decode_user(read.kvs.front().value));
            stored = std::move(decoded);
            revision = read.kvs.front().mod_revision;
        }
        NARAD_ASSIGN_OR_RETURN(std::optional<User> next, change(stored));
        if (!next && !stored) return next;  // nothing to delete
        std::vector<Compare> guards{stored ? Compare::mod_revision_is(key, revision)
                                           : Compare::missing(key)};
        TxnOp write = next ? TxnOp::put(key, encode_user(*next)) : TxnOp::remove(key);
        std::vector<TxnOp> writes{write};
        if (!next) {
            // A deleted user owns nothing: its topics lose their owner in the same txn (each
            // compared on the revision read), so a user created again under the name does not
            // inherit them.
            std::string topics = keys_.topics_prefix();
            NARAD_ASSIGN_OR_RETURN(RangeResult all,
                                   client_.range(topics, EtcdClient::prefix_end(topics)));
            for (const KeyValue& kv : all.kvs) {
                auto topic = decode_topic(kv.value);
                if (!topic.is_ok() || topic->owner != name) continue;
                topic->owner.clear();
                guards.push_back(Compare::mod_revision_is(kv.key, kv.mod_revision));
                writes.push_back(TxnOp::put(kv.key, encode_topic(*topic)));
            }
        }
        auto result = client_.txn(std::move(guards), std::move(writes));
        if (!result.is_ok() && result.code() == Errc::unknown_outcome) {
            // Resolve by reading: the record as we wrote it (or gone, for a delete) means it took.
            auto now = client_.range(key);
            if (now.is_ok()) {
                bool took = next ? (!now->kvs.empty() && now->kvs.front().value == write.value)
                                 : now->kvs.empty();
                if (took) {
                    NARAD_RETURN_IF_ERROR(after_write(now->revision));
                    return next;
                }
            }
            return result.status();
        }
        NARAD_RETURN_IF_ERROR(result.status());
        if (!result->succeeded) continue;  // another write came first: read it and decide again
        NARAD_RETURN_IF_ERROR(after_write(result->revision));
        return next;
    }
    return Status(Errc::conflict,
                  "user '" + std::string(name) + "' is being changed concurrently; retry");
}

Result<std::optional<std::pair<MemberInfo, int64_t>>> EtcdMetaStore::read_member(
    const NodeId& node) {
    using Found = std::optional<std::pair<MemberInfo, int64_t>>;
    NARAD_ASSIGN_OR_RETURN(RangeResult read, client_.range(keys_.member(node)));
    if (read.kvs.empty()) return Found();
    NARAD_ASSIGN_OR_RETURN(MemberInfo member, decode_member(read.kvs.front().value));
    return Found(std::pair{std::move(member), read.kvs.front().mod_revision});
}

Status EtcdMetaStore::put_member(const MemberInfo& member) {
    std::string key = keys_.member(member.id);
    // A compare-and-swap on what was read, so a drain written meanwhile is never overwritten.
    for (int attempt = 0; attempt < 8; ++attempt) {
        NARAD_ASSIGN_OR_RETURN(auto stored, read_member(member.id));
        MemberInfo next = member;
        next.draining = stored && stored->first.draining;
        Compare guard =
            stored ? Compare::mod_revision_is(key, stored->second) : Compare::missing(key);
        NARAD_ASSIGN_OR_RETURN(TxnResult result,
                               client_.txn({guard}, {TxnOp::put(key, encode_member(next))}));
        if (result.succeeded) return after_write(result.revision);
    }
    return Status(Errc::conflict, "member record of " + member.id.value() +
                                      " kept changing while it was being written; retry");
}

Status EtcdMetaStore::set_draining(const NodeId& node, bool draining) {
    std::string key = keys_.member(node);
    for (int attempt = 0; attempt < 8; ++attempt) {
        NARAD_ASSIGN_OR_RETURN(auto stored, read_member(node));
        if (!stored) return Status(Errc::not_found, "member not found");
        MemberInfo next = stored->first;
        next.draining = draining;
        std::vector<TxnOp> ops{TxnOp::put(key, encode_member(next))};
        ops.push_back(draining ? TxnOp::put(keys_.draining(node), "{}")
                               : TxnOp::remove(keys_.draining(node)));
        NARAD_ASSIGN_OR_RETURN(
            TxnResult result,
            fenced_txn({Compare::mod_revision_is(key, stored->second)}, std::move(ops)));
        if (result.succeeded) return after_write(result.revision);
    }
    return Status(Errc::conflict, "member record of " + node.value() +
                                      " kept changing while it was being written; retry");
}

Status EtcdMetaStore::remove_drained_member(const NodeId& node) {
    std::string key = keys_.member(node);
    NARAD_ASSIGN_OR_RETURN(auto stored, read_member(node));
    if (!stored) return Status::ok();
    if (!stored->first.draining) {
        return Status(Errc::conflict, node.value() + " is no longer draining");
    }
    NARAD_ASSIGN_OR_RETURN(TxnResult result,
                           fenced_txn({Compare::mod_revision_is(key, stored->second)},
                                      {TxnOp::remove(key), TxnOp::remove(keys_.dead(node))}));
    if (!result.succeeded) {
        return Status(Errc::conflict,
                      "member record of " + node.value() + " changed while it was being removed");
    }
    return after_write(result.revision);
}

Result<std::vector<NodeId>> EtcdMetaStore::departed_members() {
    std::string prefix = keys_.draining_prefix();
    NARAD_ASSIGN_OR_RETURN(RangeResult read, client_.range(prefix, EtcdClient::prefix_end(prefix)));
    NARAD_RETURN_IF_ERROR(wait_for_revision(read.revision, options_.catch_up_timeout));
    MetaSnapshot state = snapshot();
    std::vector<NodeId> out;
    for (const KeyValue& kv : read.kvs) {
        NodeId node(kv.key.substr(prefix.size()));
        if (state->find_member(node) == nullptr) out.push_back(std::move(node));
    }
    return out;
}

Status EtcdMetaStore::finish_departure(const NodeId& node) {
    NARAD_ASSIGN_OR_RETURN(TxnResult result, fenced_txn({Compare::missing(keys_.member(node))},
                                                        {TxnOp::remove(keys_.draining(node))}));
    if (!result.succeeded) return Status(Errc::conflict, node.value() + " is a member again");
    return after_write(result.revision);
}

Result<size_t> EtcdMetaStore::set_targets(const std::vector<TargetChange>& changes) {
    size_t applied = 0;
    int64_t last_revision = 0;
    for (const TargetChange& change : changes) {
        std::string key = keys_.assignment(change.partition.topic, change.partition.partition);
        NARAD_ASSIGN_OR_RETURN(
            TxnResult result,
            fenced_txn({Compare::value_is(key, encode_assignment(change.expected))},
                       {TxnOp::put(key, encode_assignment(
                                            Assignment{change.expected.owner, change.target}))}));
        if (result.succeeded) {
            ++applied;
            last_revision = result.revision;
        }
    }
    if (last_revision > 0) NARAD_RETURN_IF_ERROR(after_write(last_revision));
    return applied;
}

Result<FlipOutcome> EtcdMetaStore::flip(const PartitionKey& partition, const NodeId& source,
                                        const NodeId& target, std::vector<Compare> guards,
                                        FlipOutcome unchanged, DrainingTarget draining) {
    std::string key = keys_.assignment(partition.topic, partition.partition);
    guards.insert(guards.begin(),
                  Compare::value_is(key, encode_assignment(Assignment{source, target})));
    std::vector<TxnOp> failure{TxnOp::range(key)};
    if (draining == DrainingTarget::refuse) {
        guards.push_back(Compare::missing(keys_.draining(target)));
        failure.push_back(TxnOp::range(keys_.draining(target)));
    }
    NARAD_ASSIGN_OR_RETURN(
        TxnResult result,
        client_.txn(std::move(guards), {TxnOp::put(key, encode_assignment(Assignment{target, {}}))},
                    std::move(failure)));
    if (result.succeeded) {
        NARAD_RETURN_IF_ERROR(after_write(result.revision));
        return FlipOutcome::flipped;
    }
    const RangeResult& read = result.ranges.front();
    if (read.kvs.empty()) return FlipOutcome::refused;
    NARAD_ASSIGN_OR_RETURN(Assignment now, decode_assignment(read.kvs.front().value));
    if (now.owner == target) {
        NARAD_RETURN_IF_ERROR(after_write(read.revision));
        return FlipOutcome::already_flipped;
    }
    // The target is leaving: the controller clears this move.
    if (draining == DrainingTarget::refuse && !result.ranges.back().kvs.empty()) {
        return FlipOutcome::refused;
    }
    // Owner and target as the move had them: only a guard failed.
    if (now.owner == source && now.target == target) return unchanged;
    return FlipOutcome::refused;
}

Result<FlipOutcome> EtcdMetaStore::complete_move(const PartitionKey& partition,
                                                 const NodeId& source, const NodeId& target,
                                                 const FreezeToken& freeze_token) {
    std::string freeze = keys_.freeze(partition.topic, partition.partition);
    return flip(partition, source, target, {Compare::value_is(freeze, freeze_token.value())},
                FlipOutcome::freeze_lapsed, DrainingTarget::refuse);
}

Result<FlipOutcome> EtcdMetaStore::force_promote(const PartitionKey& partition,
                                                 const NodeId& source, const NodeId& target) {
    return flip(partition, source, target,
                {Compare::missing(keys_.live(source)), Compare::present(keys_.dead(source))},
                FlipOutcome::source_alive, DrainingTarget::accept);
}

Result<bool> EtcdMetaStore::declare_dead(const NodeId& node, int64_t down_ms) {
    std::string value = "{\"down_ms\":" + std::to_string(down_ms) + "}";
    NARAD_ASSIGN_OR_RETURN(TxnResult result, fenced_txn({Compare::missing(keys_.live(node))},
                                                        {TxnOp::put(keys_.dead(node), value)}));
    if (!result.succeeded) return false;
    NARAD_RETURN_IF_ERROR(after_write(result.revision));
    return true;
}

Status EtcdMetaStore::clear_dead(const NodeId& node) {
    NARAD_ASSIGN_OR_RETURN(TxnResult result, fenced_txn({}, {TxnOp::remove(keys_.dead(node))}));
    return after_write(result.revision);
}

Result<std::optional<Assignment>> EtcdMetaStore::read_assignment(const PartitionKey& partition) {
    NARAD_ASSIGN_OR_RETURN(RangeResult read,
                           client_.range(keys_.assignment(partition.topic, partition.partition)));
    if (read.kvs.empty()) return std::optional<Assignment>();
    NARAD_ASSIGN_OR_RETURN(Assignment assignment, decode_assignment(read.kvs.front().value));
    return std::optional<Assignment>(std::move(assignment));
}

Result<std::optional<Topic>> EtcdMetaStore::read_topic(std::string_view name) {
    NARAD_ASSIGN_OR_RETURN(RangeResult read, client_.range(keys_.topic(name)));
    if (read.kvs.empty()) return std::optional<Topic>();
    NARAD_ASSIGN_OR_RETURN(Topic topic, decode_topic(read.kvs.front().value));
    return std::optional<Topic>(std::move(topic));
}

Result<int64_t> EtcdMetaStore::hold_freeze(const PartitionKey& partition, const FreezeToken& token,
                                           Millis ttl) {
    int64_t seconds = std::max<int64_t>(
        1, std::chrono::duration_cast<std::chrono::seconds>(ttl + Millis(999)).count());
    NARAD_ASSIGN_OR_RETURN(int64_t lease, client_.lease_grant(seconds));
    auto put =
        client_.put(keys_.freeze(partition.topic, partition.partition), token.value(), lease);
    if (!put.is_ok()) {
        (void)client_.lease_revoke(lease);
        return put.status();
    }
    return lease;
}

Status EtcdMetaStore::renew_freeze(int64_t lease) {
    return client_.lease_keep_alive(lease).status();
}

Status EtcdMetaStore::release_freeze(int64_t lease) { return client_.lease_revoke(lease); }

Status EtcdMetaStore::remove_freeze(const PartitionKey& partition) {
    return client_.txn({}, {TxnOp::remove(keys_.freeze(partition.topic, partition.partition))})
        .status();
}

}  // namespace narad::meta
