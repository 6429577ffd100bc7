// EtcdMetaStore: the cluster's MetaStore. State lives in etcd under /narad/<cluster>/ (keys.h);
// each node keeps a replica: one linearizable range of the prefix, then a watch from the next
// revision, each batch of events applied to a copy of the state and published as a new immutable
// snapshot (with the etcd revision it reflects and a version per domain). If the watch falls
// behind a compaction, the replica reads the prefix again. Liveness keys feed `live`; the replica
// stamps `down_since` on this node's clock when it sees a member without one.
//
// Writes are etcd txns that compare what they read (create: the topic key is absent; update and
// delete: its mod_revision), and, when a fence is set (the controller's election key), that the
// fence key still has the same create_revision: a deposed controller changes nothing (its write
// fails with Errc::unavailable, which a client may retry against the new controller). A write
// returns once the local replica reflects it, so a caller reads its own writes. A lost reply is
// resolved by reading where the record says whether the write took; otherwise it is reported as
// Errc::unknown_outcome.
//
// Thread-safe. Writes and sync() block on etcd: never call them on the HTTP threads. Watchers run
// on the replica's thread, in revision order, and must not block.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "meta/etcd_client.h"
#include "meta/keys.h"
#include "meta/meta_store.h"

namespace narad::meta {

struct EtcdMetaStoreOptions {
    std::string cluster = "narad";
    // How long a write (or sync) waits for the replica to catch up with what it wrote (or read).
    Millis catch_up_timeout{10'000};
    // Refuse topic writes while no fence is set (a node's store: only its controller writes
    // topics, and a controller that just lost office has cleared its fence).
    bool require_fence = false;
};

// Writes made under a fence also require this key to exist with this create_revision.
struct Fence {
    std::string key;
    int64_t create_revision = 0;
};

class EtcdMetaStore final : public MetaStore {
  public:
    // Reads the cluster's state and starts the replica's watch.
    static Result<std::unique_ptr<EtcdMetaStore>> open(EtcdClient& client, Clock& clock,
                                                       EtcdMetaStoreOptions options);
    // The operations per etcd txn (etcd's --max-txn-ops, 128 by default) that creating a topic of
    // `max_partitions` partitions needs: the topic and every assignment are puts of one txn. Its
    // compares (the fence, the topic's absence, each owner not draining) are held to the same
    // limit, which is never below etcd's default.
    static uint32_t txn_ops_for(uint32_t max_partitions);
    ~EtcdMetaStore() override;  // stops the watch

    MetaSnapshot snapshot() const override;
    Result<Topic> create_topic(Topic topic, std::vector<NodeId> owners) override;
    Result<Topic> update_topic(Topic topic, std::vector<NodeId> added_owners) override;
    Status delete_topic(std::string_view name) override;
    Result<std::vector<Topic>> change_topics(const std::vector<std::string>& names,
                                             const TopicsChange& change) override;
    uint64_t watch(std::function<void(const MetaSnapshot&)> watcher) override;
    void unwatch(uint64_t id) override;
    Result<size_t> set_targets(const std::vector<TargetChange>& changes) override;
    Result<FlipOutcome> complete_move(const PartitionKey& partition, const NodeId& source,
                                      const NodeId& target,
                                      const FreezeToken& freeze_token) override;
    Result<FlipOutcome> force_promote(const PartitionKey& partition, const NodeId& source,
                                      const NodeId& target) override;
    Result<std::optional<Assignment>> read_assignment(const PartitionKey& partition) override;
    Result<std::optional<Topic>> read_topic(std::string_view name) override;
    Result<int64_t> hold_freeze(const PartitionKey& partition, const FreezeToken& token,
                                Millis ttl) override;
    Status renew_freeze(int64_t lease) override;
    Status release_freeze(int64_t lease) override;
    Status remove_freeze(const PartitionKey& partition) override;
    Result<std::optional<User>> change_user(std::string_view name,
                                            const UserChange& change) override;

    // A snapshot at least as new as a linearizable read made now: the view to plan from.
    Result<MetaSnapshot> sync();
    // Waits until the replica reflects `revision`.
    Status wait_for_revision(int64_t revision, Millis timeout);

    // Sets or clears the fence of later topic writes.
    void set_fence(std::optional<Fence> fence);
    std::optional<Fence> fence() const;

    // Registers or replaces a member's record (not fenced: a node registers itself). The drain
    // flag is set_draining's alone: a registration or a role update keeps the stored one, so a
    // node that restarts mid-decommission stays draining.
    Status put_member(const MemberInfo& member);
    // Decommission (fenced): marks a member draining, or no longer, in its record and its
    // keys.draining() key, in one txn. not_found without a record.
    Status set_draining(const NodeId& node, bool draining);
    // Removes a drained member's record and its dead verdict (fenced). Refused (conflict) unless
    // the record still says draining, so a cancel that lands first wins. Its draining key stays:
    // it marks a departure whose etcd member is still to be removed (departed_members).
    Status remove_drained_member(const NodeId& node);
    // Nodes with a draining key and no member record: decommissioned, their etcd member not yet
    // known removed. A linearizable read.
    Result<std::vector<NodeId>> departed_members();
    // Ends a departure: deletes its draining key (fenced), unless a member record of that node
    // exists again.
    Status finish_departure(const NodeId& node);
    // The controller's dead verdicts (fenced). declare_dead applies only while the member's
    // liveness key is absent; returns whether it did.
    Result<bool> declare_dead(const NodeId& node, int64_t down_ms);
    Status clear_dead(const NodeId& node);

    EtcdClient& client() { return client_; }
    const Keys& keys() const { return keys_; }

  private:
    class Replica;
    EtcdMetaStore(EtcdClient& client, Clock& clock, EtcdMetaStoreOptions options);
    // Runs a txn with the fence's compare appended; a failed fence is Errc::unavailable. The
    // failure branch runs `failure` (its ranges come first in the result), then reads the fence.
    Result<TxnResult> fenced_txn(std::vector<Compare> compare, std::vector<TxnOp> success,
                                 std::vector<TxnOp> failure = {});
    // The member's record as stored, with its mod_revision (nullopt: none).
    Result<std::optional<std::pair<MemberInfo, int64_t>>> read_member(const NodeId& node);
    Status after_write(int64_t revision);
    // Topic writes place partitions only on nodes that are not draining (keys.draining()).
    void append_placement_guards(std::vector<Compare>& guards,
                                 const std::vector<NodeId>& owners) const;
    static Status draining_owner_conflict();
    // Whether a flip goes on to a target that is draining. A completed move refuses it; a
    // force-promote accepts it: the target may hold the only live copy.
    enum class DrainingTarget { refuse, accept };
    // owner := target if the assignment is still {source, target} and every guard holds; a
    // guard that fails with owner and target unchanged answers `unchanged`, and a draining
    // target that `draining` refuses answers refused.
    Result<FlipOutcome> flip(const PartitionKey& partition, const NodeId& source,
                             const NodeId& target, std::vector<Compare> guards,
                             FlipOutcome unchanged, DrainingTarget draining);

    EtcdClient& client_;
    Clock& clock_;
    EtcdMetaStoreOptions options_;
    Keys keys_;
    mutable Mutex fence_mutex_;
    std::optional<Fence> fence_ GUARDED_BY(fence_mutex_);
    std::unique_ptr<Replica> replica_;
};

}  // namespace narad::meta
