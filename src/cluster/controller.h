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
// per term.
// stop() resigns, so another node takes over at once instead of after the lease TTL.
//
// Thread-safe; runs on its own thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "base/clock.h"
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
    std::mutex plan_mutex_;                 // one planner pass at a time
    uint64_t planned_members_version_ = 0;  // only touched by the controller thread
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;  // GUARDED_BY(mutex_)
    bool poked_ = false;     // GUARDED_BY(mutex_)
    std::thread thread_;
};

}  // namespace narad::cluster
