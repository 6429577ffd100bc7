// FakeMetaStore: an in-memory MetaStore for unit tests of modules that read the cluster's state
// (routing, dispatcher, controller). Writes behave like LocalMetaStore's (no persistence); a test
// publishes any snapshot it likes with set_state() — members, liveness, down_since, assignments
// owned by other nodes — and watchers are told as for a real write. Header-only test helper: it is
// not part of the meta library. Thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "meta/meta_store.h"

namespace narad::meta {

class FakeMetaStore final : public MetaStore {
  public:
    FakeMetaStore() : snapshot_(std::make_shared<const MetaState>()) {}

    MetaSnapshot snapshot() const override {
        MutexLock lock(mutex_);
        return snapshot_;
    }

    // Publishes `state` as the next snapshot (its revision is bumped past the current one).
    void set_state(MetaState state) {
        MutexLock write(write_mutex_);
        state.revision = snapshot()->revision + 1;
        publish(std::make_shared<const MetaState>(std::move(state)));
    }
    // Edits a copy of the current state and publishes it.
    template <typename Fn>
    void update(Fn&& edit) {
        MetaState next = *snapshot();
        edit(next);
        set_state(std::move(next));
    }

    Result<Topic> create_topic(Topic topic, std::vector<NodeId> owners) override {
        MutexLock write(write_mutex_);
        MetaSnapshot current = snapshot();
        if (current->find_topic(topic.name) != nullptr) {
            return Status(Errc::already_exists, "topic '" + topic.name + "' already exists");
        }
        if (owners.size() != topic.partitions) {
            return Status(Errc::invalid_argument, "one owner per partition");
        }
        auto next = std::make_shared<MetaState>(*current);
        for (uint32_t p = 0; p < topic.partitions; ++p) {
            next->assignments[PartitionKey{topic.name, PartitionId(p)}] =
                Assignment{std::move(owners[p]), {}};
        }
        next->topics[topic.name] = topic;
        bump(*next, *current);
        publish(std::move(next));
        return topic;
    }

    // Test shorthand: creates topic `name` (incarnation `incarnation`, other fields default) with
    // one partition per entry of `owners`, partition i owned by owners[i].
    Result<Topic> create_topic_owned_by(std::string name, const std::vector<std::string>& owners,
                                        std::string incarnation = "inc-1") {
        Topic topic;
        topic.name = std::move(name);
        topic.incarnation = IncarnationId(std::move(incarnation));
        topic.partitions = static_cast<uint32_t>(owners.size());
        std::vector<NodeId> ids;
        for (const auto& owner : owners) ids.emplace_back(owner);
        return create_topic(std::move(topic), std::move(ids));
    }

    Result<Topic> update_topic(Topic topic, std::vector<NodeId> added_owners) override {
        MutexLock write(write_mutex_);
        MetaSnapshot current = snapshot();
        const Topic* existing = current->find_topic(topic.name);
        if (existing == nullptr || existing->incarnation != topic.incarnation) {
            return Status(Errc::not_found, "topic '" + topic.name + "' not found");
        }
        if (topic.partitions < existing->partitions ||
            added_owners.size() != topic.partitions - existing->partitions) {
            return Status(Errc::invalid_argument, "one owner per new partition");
        }
        auto next = std::make_shared<MetaState>(*current);
        for (uint32_t p = existing->partitions; p < topic.partitions; ++p) {
            next->assignments[PartitionKey{topic.name, PartitionId(p)}] =
                Assignment{std::move(added_owners[p - existing->partitions]), {}};
        }
        next->topics[topic.name] = topic;
        bump(*next, *current);
        publish(std::move(next));
        return topic;
    }

    Status delete_topic(std::string_view name) override {
        MutexLock write(write_mutex_);
        MetaSnapshot current = snapshot();
        if (current->find_topic(name) == nullptr) {
            return Status(Errc::not_found, "topic '" + std::string(name) + "' not found");
        }
        auto next = std::make_shared<MetaState>(*current);
        apply_topic_delete(*next, name);
        bump(*next, *current);
        publish(std::move(next));
        return Status::ok();
    }

    Result<std::vector<Topic>> change_topics(const std::vector<std::string>& names,
                                             const TopicsChange& change) override {
        MutexLock write(write_mutex_);
        MetaSnapshot current = snapshot();
        auto next = std::make_shared<MetaState>(*current);
        auto stored = apply_topic_change(*current, *next, names, change);
        if (!stored.is_ok() || stored->empty()) return stored;
        bump(*next, *current);
        publish(std::move(next));
        return stored;
    }

    uint64_t watch(std::function<void(const MetaSnapshot&)> watcher) override {
        MutexLock write(write_mutex_);
        uint64_t id = next_watch_id_++;
        watchers_[id] = std::move(watcher);
        return id;
    }
    void unwatch(uint64_t id) override {
        MutexLock write(write_mutex_);
        watchers_.erase(id);
    }

    Result<size_t> set_targets(const std::vector<TargetChange>& changes) override {
        MutexLock write(write_mutex_);
        auto next = std::make_shared<MetaState>(*snapshot());
        size_t applied = 0;
        for (const TargetChange& change : changes) {
            auto it = next->assignments.find(change.partition);
            if (it == next->assignments.end() || it->second.owner != change.expected.owner ||
                it->second.target != change.expected.target) {
                continue;
            }
            it->second.target = change.target;
            ++applied;
        }
        if (applied > 0) {
            MetaSnapshot current = snapshot();
            bump(*next, *current);
            publish(std::move(next));
        }
        return applied;
    }

    // The next `count` flips (CompleteMove or force-promote) apply nothing and answer
    // unknown_outcome, as a proposal whose reply was lost before the leader applied it.
    void lose_flips(int count) { lost_flips_ = count; }

    Result<FlipOutcome> complete_move(const PartitionKey& partition, const NodeId& source,
                                      const NodeId& target,
                                      const FreezeToken& freeze_token) override {
        return flip(partition, source, target, FlipOutcome::freeze_lapsed, [&](const MetaState&) {
            MutexLock lock(mutex_);
            for (const auto& [lease, held] : freezes_) {
                if (held.first == partition && held.second == freeze_token) return true;
            }
            return false;
        });
    }

    Result<FlipOutcome> force_promote(const PartitionKey& partition, const NodeId& source,
                                      const NodeId& target) override {
        return flip(partition, source, target, FlipOutcome::source_alive,
                    [&](const MetaState& state) {
                        return !state.is_live(source) && state.declared_dead.count(source) > 0;
                    });
    }

    Result<int64_t> hold_freeze(const PartitionKey& partition, const FreezeToken& token,
                                Millis) override {
        MutexLock lock(mutex_);
        std::erase_if(freezes_, [&](const auto& entry) { return entry.second.first == partition; });
        int64_t lease = next_lease_++;
        freezes_[lease] = {partition, token};
        return lease;
    }
    Status renew_freeze(int64_t lease) override {
        MutexLock lock(mutex_);
        if (!freezes_.count(lease)) return Status(Errc::not_found, "lease expired");
        return Status::ok();
    }
    Status release_freeze(int64_t lease) override {
        MutexLock lock(mutex_);
        freezes_.erase(lease);
        return Status::ok();
    }
    Result<std::optional<User>> change_user(std::string_view name,
                                            const UserChange& change) override {
        MutexLock write(write_mutex_);
        MetaSnapshot current = snapshot();
        std::optional<User> stored;
        if (const User* user = current->find_user(name)) stored = *user;
        auto next_user = change(stored);
        if (!next_user.is_ok()) return next_user.status();
        auto next = std::make_shared<MetaState>(*current);
        if (*next_user) {
            next->users[std::string(name)] = **next_user;
        } else if (stored) {
            next->users.erase(std::string(name));
            for (auto& [topic_name, topic] : next->topics) {
                if (topic.owner == name) topic.owner.clear();
            }
        } else {
            return next_user;
        }
        ++next->users_version;
        bump(*next, *current);
        publish(std::move(next));
        return next_user;
    }

    Status remove_freeze(const PartitionKey& partition) override {
        MutexLock lock(mutex_);
        std::erase_if(freezes_, [&](const auto& entry) { return entry.second.first == partition; });
        return Status::ok();
    }
    bool freeze_held(const PartitionKey& partition) const {
        MutexLock lock(mutex_);
        for (const auto& [lease, held] : freezes_) {
            if (held.first == partition) return true;
        }
        return false;
    }

  private:
    // As EtcdMetaStore's flip: owner := target while the assignment is {source, target} and
    // `guard` holds; `unchanged` when only the guard failed.
    template <typename Guard>
    Result<FlipOutcome> flip(const PartitionKey& partition, const NodeId& source,
                             const NodeId& target, FlipOutcome unchanged, Guard&& guard) {
        if (lost_flips_.fetch_sub(1) > 0) {
            return Status(Errc::unknown_outcome, "the flip's reply was lost");
        }
        MutexLock write(write_mutex_);
        MetaSnapshot current = snapshot();
        const Assignment* now = current->find_assignment(partition.topic, partition.partition);
        if (now == nullptr) return FlipOutcome::refused;
        if (now->owner == target) return FlipOutcome::already_flipped;
        if (now->owner != source || now->target != target) return FlipOutcome::refused;
        if (!guard(*current)) return unchanged;
        auto next = std::make_shared<MetaState>(*current);
        next->assignments[partition] = Assignment{target, {}};
        bump(*next, *current);
        publish(std::move(next));
        return FlipOutcome::flipped;
    }

    static void bump(MetaState& next, const MetaState& current) {
        next.revision = current.revision + 1;
        next.topics_version = current.topics_version + 1;
        next.assignments_version = current.assignments_version + 1;
    }
    // Under write_mutex_, so watchers see snapshots in order.
    void publish(MetaSnapshot next) REQUIRES(write_mutex_) {
        {
            MutexLock lock(mutex_);
            snapshot_ = next;
        }
        for (auto& [id, watcher] : watchers_) watcher(next);
    }

    std::atomic<int> lost_flips_{0};
    Mutex write_mutex_;  // serializes writers and watcher calls
    mutable Mutex mutex_;
    MetaSnapshot snapshot_ GUARDED_BY(mutex_);
    std::map<uint64_t, std::function<void(const MetaSnapshot&)>> watchers_ GUARDED_BY(write_mutex_);
    uint64_t next_watch_id_ GUARDED_BY(write_mutex_) = 1;
    std::map<int64_t, std::pair<PartitionKey, FreezeToken>> freezes_ GUARDED_BY(mutex_);
    int64_t next_lease_ GUARDED_BY(mutex_) = 1;
};

}  // namespace narad::meta
