// Controller: the one node that plans for the cluster. Every node runs one; they campaign in the
// etcd election (keys.election()) with their liveness lease, so a controller that dies or is cut
// off loses the election when its lease expires. The winner fences the metastore's topic writes
// with its election key (EtcdMetaStore::set_fence), so once deposed it can change nothing; it
// reads linearizably (sync), runs its start-up reconcile, and only then writes the "ready" record
// that opens topic creation (/readyz). While it leads, every `leadership_check` it checks that its
// election key still stands and promotes an etcd learner that has caught up with the leader's log
// and keeps members' records in step with etcd's member list (a promoted learner's record says
// voter); every `tick` it notes members that went down or came back,
// on its own clock (the replica's down_since), logging when one has been down longer than
// `dead_after`, and plans partition moves (planner.h): from a linearizable read, under a mutex, it
// tops the moves in flight up to `max_in_flight_moves` by writing targets, each a compare-and-swap
// on the assignment it read. It also plans at once when the member list changes, so a rebalance
// starts by itself when a node joins. Before planning, on every tick: it declares dead (keys.dead,
// the force-promote gate) a member down for `force_promote_after` on its own clock, and clears
// the verdict once the member is live again; it clears the target of every move whose
// destination is no member, has been down longer than `dead_target_abort_after`, or hosted an
// etcd member that is no longer in etcd's configuration while it is down or draining, so the
// freed budget goes to other moves in the same pass; and it exports narad_moves_blocked for the
// reasons it sees (source_dead, target_dead, target_not_member), logging each blocked move once
// per term, and narad_colocated_child_partitions (placement.h) from the view it plans from. The
// planner gets the fan-out links (child -> parent) so its moves keep the replica pattern.
//
// Decommission (docs/decommission.md): on every pass it clears the targets of moves aimed at a
// draining node (unless their source is dead or gone: the draining node may hold the only copy),
// and drives each draining node out. Once decommission_blockers() finds nothing and the node
// reports it refuses produce with nothing admitted unanswered and an empty ingress WAL, it moves
// etcd leadership off the node, has a live node hosting no etcd member start a learner when a
// voter would leave fewer than `voters` (promote_learners() then promotes it), and deletes its
// member record, which stops the node; once the node has stopped (its liveness key is gone, or
// after 30 s) it removes the node's etcd member and the draining key that marked the departure.
// One node leaves at a time, dead ones first. Each reason a
// drain waits on is logged once (error when it needs an operator, warning when it clears by
// itself) and exported as narad_decommission_blocked{node,reason}. A draining node does not
// campaign, and steps down if it leads, while another live, non-draining member exists.
// stop() resigns, so another node takes over at once instead of after the lease TTL.
//
// Thread-safe; runs on its own thread.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"
#include "cluster/decommission.h"
#include "cluster/membership.h"
#include "meta/etcd_meta_store.h"

namespace narad::cluster {

struct ControllerOptions {
    Millis tick{10'000};
    Millis leadership_check{1'000};
    Millis dead_after{30'000};
    // How long one campaign call waits before checking for stop and lease changes.
    Millis campaign_wait{5'000};
    // A learner is promoted once its raft index is within this many entries of the leader's.
    uint64_t promote_lag_entries = 100;
    uint32_t max_in_flight_moves = 8;
    Millis force_promote_after{120'000};
    Millis dead_target_abort_after{120'000};
    // A voter leaves only if this many voters remain (cluster.min_voters).
    uint32_t min_voters = 3;
    // How many etcd voters the cluster keeps (cluster.voters): a leaving voter is replaced first.
    uint32_t voters = 3;
};

// What the controller asks of other nodes, over their cluster port (set by the Node once its
// peers exist). Both block.
struct ControllerHooks {
    std::function<Result<NodeStatus>(const NodeId&)> node_status;
    // Asks a node hosting no etcd member to start one as a learner.
    std::function<Status(const NodeId&)> host_etcd;
};

class Controller {
  public:
    Controller(meta::EtcdMetaStore& store, Membership& membership, Clock& clock, NodeId self,
               ControllerOptions options);
    ~Controller();  // stops

    void start();
    // Resigns if leading, then stops.
    void stop();

    // Leads and has finished its start-up reconcile.
    bool is_controller() const { return leading_.load(); }
    // Wakes the loop for an early tick (tests, and after a member joins).
    void poke();
    void set_hooks(ControllerHooks hooks);

  private:
    void run();
    // Campaigns until elected or stopped; returns whether elected.
    bool campaign(meta::LeaderInfo& leadership);
    Status take_office(const meta::LeaderInfo& leadership);
    bool still_leading(const meta::LeaderInfo& leadership, uint64_t generation);
    void note_down_members(const meta::MetaState& state);
    // The dead verdicts (see the file comment).
    void update_dead_verdicts(const meta::MetaState& state);
    // Clears the targets of moves aimed at a destination that is gone; returns the assignments
    // as they stand after.
    std::map<meta::PartitionKey, meta::Assignment> clear_dead_targets(const meta::MetaState& state);
    void report_blocked(const meta::MetaState& state,
                        const std::map<meta::PartitionKey, meta::Assignment>& assignments);
    void promote_learners();
    // The decommission pass (see the file comment).
    void drive_decommissions();
    // Takes the last steps for a drained node: replace its vote, then drop its record (the node
    // stops when it sees that).
    void retire(const NodeId& node, const DecommissionView& view);
    // Removes the etcd member of each decommissioned node once it has stopped, then its draining
    // key; returns whether none is left under way.
    bool finish_departures(const meta::MetaState& state);
    void transfer_etcd_leadership(const NodeId& from, const meta::MetaState& state);
    void note_decommission_reasons(
        const std::map<NodeId, std::vector<DecommissionReason>>& reasons);
    // Whether this node is draining while another live member could lead instead.
    bool should_stand_aside(const meta::MetaState& state) const;
    ControllerHooks hooks() const;
    // One planner pass (see the file comment).
    void rebalance();
    // Waits up to `delay` or until stop/poke; returns false once stopping.
    bool pause(Millis delay);

    meta::EtcdMetaStore& store_;
    Membership& membership_;
    Clock& clock_;
    NodeId self_;
    ControllerOptions options_;
    std::atomic<bool> leading_{false};
    std::set<NodeId> reported_dead_;  // only touched by the controller thread
    // Blocked moves already logged this term (controller thread only).
    std::set<std::pair<meta::PartitionKey, std::string>> logged_blocked_;
    // Decommission reasons already logged this term, by node (controller thread only).
    std::map<NodeId, std::set<std::string>> logged_decommission_;
    // Decommissioned nodes whose etcd member is still to go, since when (controller thread only).
    std::map<NodeId, MonoTime> departed_since_;
    mutable Mutex hooks_mutex_;
    ControllerHooks hooks_ GUARDED_BY(hooks_mutex_);
    Mutex plan_mutex_;                      // one planner pass at a time
    uint64_t planned_members_version_ = 0;  // only touched by the controller thread
    Mutex mutex_;
    CondVar wake_;
    bool stopping_ GUARDED_BY(mutex_) = false;
    bool poked_ GUARDED_BY(mutex_) = false;
    std::thread thread_;
};

}  // namespace narad::cluster
