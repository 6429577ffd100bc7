// The metastore's records: topics (with their fan-out links) and partition assignments, and the
// immutable MetaState snapshot that readers share. Plain values; a MetaState is never modified
// after it is published, so any thread may read one without locks.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/ids.h"
#include "meta/user.h"

namespace narad::meta {

enum class TopicRole { standalone, parent, child };
std::string_view role_name(TopicRole role);

struct Topic {
    std::string name;
    IncarnationId incarnation;  // fresh for every create of the name
    uint32_t partitions = 3;
    int64_t retention_ms = 0;  // 0: keep forever
    int64_t visibility_timeout_ms = 30'000;
    int64_t max_in_flight_per_partition = 1024;
    int64_t max_acked_ahead_per_partition = 1024;
    int64_t created_at = 0;  // Unix seconds
    std::string owner;       // the user who created it; empty with security off
    TopicRole role = TopicRole::standalone;
    std::vector<std::string> children;  // parent only, in attach order
    std::string parent;                 // child only
    std::string attach_epoch;           // child only
    int64_t fanout_delay_ms = 0;        // child only
    // Dead letters (ours): a message delivered this many times without an ack goes to
    // dead_letter_topic (0: never).
    int64_t max_deliveries = 0;
    std::string dead_letter_topic;
    // Every version of the JSON Schema (compact JSON text), oldest first: version n is
    // schema_versions[n - 1], and the current one is the last. A history only grows while the
    // topic lives.
    std::vector<std::string> schema_versions;

    // The current schema document, empty for none.
    const std::string& schema() const;
    uint32_t schema_version() const { return static_cast<uint32_t>(schema_versions.size()); }
    void add_schema_version(std::string compact) { schema_versions.push_back(std::move(compact)); }
    size_t schema_history_bytes() const;
};

// Where a partition lives: its owner now, and the node it is moving to (empty when none).
struct Assignment {
    NodeId owner;
    NodeId target;
};

struct PartitionKey {
    std::string topic;
    PartitionId partition;
    auto operator<=>(const PartitionKey&) const = default;
};

// Whether a node hosts an etcd member, and which kind.
enum class EtcdRole { none, learner, voter };
std::string_view etcd_role_name(EtcdRole role);

// A node of the cluster, as registered when it joined.
struct MemberInfo {
    NodeId id;
    std::string api_addr;      // host:port of the public API
    std::string cluster_addr;  // host:port of the node-to-node port
    EtcdRole etcd_role = EtcdRole::none;
    uint64_t etcd_member_id = 0;  // 0 when it hosts no etcd member
    bool draining = false;
    int64_t joined_at = 0;  // Unix seconds
};

// One consistent view of the metastore.
struct MetaState {
    uint64_t revision = 0;  // increases with every change
    // Per-domain versions: a reconciler can skip a tick when the domain it reads has not moved.
    uint64_t topics_version = 0;
    uint64_t assignments_version = 0;
    std::map<std::string, Topic, std::less<>> topics;
    std::map<PartitionKey, Assignment> assignments;
    uint64_t members_version = 0;
    std::map<NodeId, MemberInfo> members;
    uint64_t users_version = 0;
    std::map<std::string, User, std::less<>> users;
    // Nodes whose liveness key exists now.
    std::set<NodeId> live;
    // Members the controller has declared dead: down for at least the force-promote timeout on
    // the controller's own clock (keys.dead()). Cleared when the member is live again.
    std::set<NodeId> declared_dead;
    // For members whose liveness key is gone: when this node's replica saw it go (or first saw the
    // member without one), on this node's monotonic clock. A node down longer than `dead_after`
    // is dead. Local knowledge: other nodes' replicas hold their own times.
    std::map<NodeId, MonoTime> down_since;
    // The controller that last finished its start-up reconcile (empty: none yet). In a single-node
    // store, the node itself.
    NodeId controller;

    const Topic* find_topic(std::string_view name) const;
    const Assignment* find_assignment(std::string_view topic, PartitionId partition) const;
    const MemberInfo* find_member(const NodeId& node) const;
    const User* find_user(std::string_view name) const;
    bool is_live(const NodeId& node) const { return live.count(node) > 0; }
    // Down for longer than `dead_after` at `now`. A node never registered is not dead: callers
    // decide what an unknown owner means.
    bool is_dead(const NodeId& node, MonoTime now, Millis dead_after) const;
};

using MetaSnapshot = std::shared_ptr<const MetaState>;

// Fan-out links (Narad's rules: one level, at most kMaxChildrenPerParent children per parent).
inline constexpr size_t kMaxChildrenPerParent = 108;

// Links `child` under `parent`: the parent lists it (last), the child records its parent, the
// attach epoch and the delay. No rule is checked here.
void link_child(Topic& parent, Topic& child, std::string attach_epoch, int64_t delay_ms);
// Undoes link_child; a parent whose last child leaves is standalone again.
void unlink_child(Topic& parent, Topic& child);
// The names of the topics linked to `topic` (its children, or its parent).
std::vector<std::string> linked_topics(const Topic& topic);
// Unlinks `deleted` from `other` (one of linked_topics(deleted)), as a delete of `deleted` must:
// a child of a deleted parent is standalone again, a deleted child leaves its parent's list.
void unlink_deleted(const Topic& deleted, Topic& other);

}  // namespace narad::meta
