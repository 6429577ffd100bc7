// Decommission as rebalance (docs/decommission.md): why draining a node could never complete, and
// what holds a running drain back, from one metastore view and etcd's configuration. Pure
// functions, so the API's refusal and dry run, the members listing and the controller all judge
// the same way, and every rule is tested without a cluster. Any thread.
//
// Voters: the nodes hosting an etcd voter. A node that leaves etcd's configuration must leave at
// least `min_voters` voters behind (counting one live, non-draining node that hosts no etcd
// member yet, which the controller adds as a learner and promotes first), and the voters left
// whose member is alive must be a strict majority of them. A learner or a plain etcd client
// leaves without these guards.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "meta/etcd_client.h"
#include "meta/topic.h"

namespace narad::cluster {

struct DecommissionReason {
    std::string code;
    std::string message;
    bool operator==(const DecommissionReason&) const = default;
};

// etcd's configuration as node ids (the etcd member names).
struct EtcdConfiguration {
    std::set<NodeId> voters;
    std::set<NodeId> learners;
    std::optional<NodeId> leader;  // the etcd leader, when known
};

// etcd's configuration read from etcd itself (member list, and the leader from a status call).
Result<EtcdConfiguration> read_etcd_configuration(meta::EtcdClient& client);
// The same as the member records say it (the leader unknown): for views answered from the
// replica alone.
EtcdConfiguration configuration_from_records(const meta::MetaState& state);

struct DecommissionView {
    const meta::MetaState& state;
    const EtcdConfiguration& etcd;
    MonoTime now;
    Millis dead_after{30'000};
    uint32_t min_voters = 3;
    uint32_t max_in_flight_moves = 8;
};

// What a node being drained holds or receives.
struct DrainLoad {
    uint32_t owned = 0;          // partitions it owns
    uint32_t moving_off = 0;     // of those, with a target
    uint32_t inbound = 0;        // moves aimed at it
    uint32_t inbound_stuck = 0;  // of those, from a source that is dead or no member
    uint32_t in_flight = 0;      // moves in flight in the whole cluster
};
DrainLoad drain_load(const meta::MetaState& state, const NodeId& node, MonoTime now,
                     Millis dead_after);

// Whether a draining node has nothing left to hand over: it owns no partition and no move aims at
// it. Partitions still moving off are progress, not a reason; only a node that holds nothing
// may leave.
inline bool holds_nothing(const DrainLoad& load) { return load.owned == 0 && load.inbound == 0; }

// The reasons a decommission of `node` could never complete, refused up front (409) and reported
// by the dry run: below_min_voters, no_healthy_majority, no_receivers, owner_dead.
std::vector<DecommissionReason> decommission_refusals(const DecommissionView& view,
                                                      const NodeId& node);

// What holds back the running decommission of `node` now, in the order the controller acts on
// them: ownership (owner_dead, no_receivers, move_budget_full), move_target, the voter guards
// (below_min_voters, no_healthy_majority) and leader_transfer. Empty: nothing blocks it; it leaves
// once it also holds nothing (holds_nothing) and reports its ingress WAL drained.
std::vector<DecommissionReason> decommission_blockers(const DecommissionView& view,
                                                      const NodeId& node);

// What a draining node reports of itself (GET /internal/v1/node/status).
struct NodeStatus {
    bool draining = false;           // its own replica has the drain: it refuses client produce
    uint64_t produce_in_flight = 0;  // client produces it admitted and has not answered
    uint64_t dispatch_backlog = 0;   // ingress WAL records not yet handed to their owners
};
// What still holds a drained node in the cluster by its own report (dispatch_backlog), or
// node_status_unavailable when it could not be read (`error`). Empty: it may leave.
std::vector<DecommissionReason> node_status_reasons(const Result<NodeStatus>& status);

// Whether a reason clears by itself (logged as "waiting") or needs an operator ("blocked").
bool reason_clears_by_itself(std::string_view code);

// A live, non-draining member hosting no etcd member: the controller makes it a learner when a
// voter leaves, so the voter count holds. nullopt when there is none.
std::optional<NodeId> voter_replacement(const DecommissionView& view, const NodeId& leaving);

}  // namespace narad::cluster
