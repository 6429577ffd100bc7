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

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/clock.h"
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
    ~EtcdMetaStore() override;  // stops the watch

    MetaSnapshot snapshot() const override;
    Result<Topic> create_topic(Topic topic, std::vector<NodeId> owners) override;
    Result<Topic> update_topic(Topic topic, std::vector<NodeId> added_owners) override;
    Status delete_topic(std::string_view name) override;
    uint64_t watch(std::function<void(const MetaSnapshot&)> watcher) override;
    void unwatch(uint64_t id) override;
    Result<size_t> set_targets(const std::vector<TargetChange>& changes) override;
    Result<FlipOutcome> complete_move(const PartitionKey& partition, const NodeId& source,
                                      const NodeId& target,
                                      const std::string& freeze_token) override;
    Result<FlipOutcome> force_promote(const PartitionKey& partition, const NodeId& source,
                                      const NodeId& target) override;
    Result<std::optional<Assignment>> read_assignment(const PartitionKey& partition) override;
    Result<std::optional<Topic>> read_topic(std::string_view name) override;
    Result<int64_t> hold_freeze(const PartitionKey& partition, const std::string& token,
                                Millis ttl) override;
    Status renew_freeze(int64_t lease) override;
    Status release_freeze(int64_t lease) override;
    Status remove_freeze(const PartitionKey& partition) override;

    // A snapshot at least as new as a linearizable read made now: the view to plan from.
    Result<MetaSnapshot> sync();
    // Waits until the replica reflects `revision`.
    Status wait_for_revision(int64_t revision, Millis timeout);

    // Sets or clears the fence of later topic writes.
    void set_fence(std::optional<Fence> fence);
    std::optional<Fence> fence() const;

    // Registers or replaces a member's record (not fenced: a node registers itself).
    Status put_member(const MemberInfo& member);
    Status remove_member(const NodeId& node);
    // The controller's dead verdicts (fenced). declare_dead applies only while the member's
    // liveness key is absent; returns whether it did.
    Result<bool> declare_dead(const NodeId& node, int64_t down_ms);
    Status clear_dead(const NodeId& node);

    EtcdClient& client() { return client_; }
    const Keys& keys() const { return keys_; }

  private:
    class Replica;
    EtcdMetaStore(EtcdClient& client, Clock& clock, EtcdMetaStoreOptions options);
    // Runs a txn with the fence's compare appended; a failed fence is Errc::conflict.
    Result<TxnResult> fenced_txn(std::vector<Compare> compare, std::vector<TxnOp> success);
    Status after_write(int64_t revision);
    // owner := target if the assignment is still {source, target} and every guard holds; a
    // guard that fails with owner and target unchanged answers `unchanged`.
    Result<FlipOutcome> flip(const PartitionKey& partition, const NodeId& source,
                             const NodeId& target, std::vector<Compare> guards,
                             FlipOutcome unchanged);

    EtcdClient& client_;
    Clock& clock_;
    EtcdMetaStoreOptions options_;
    Keys keys_;
    mutable std::mutex fence_mutex_;
    std::optional<Fence> fence_;  // GUARDED_BY(fence_mutex_)
    std::unique_ptr<Replica> replica_;
};

}  // namespace narad::meta
