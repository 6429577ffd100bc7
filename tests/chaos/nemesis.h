// The chaos suite's nemesis (docs/reliability.md): faults and cluster operations, chosen by a
// seeded random generator so a run can be repeated, each recorded in the History as a fault
// window. One fault is active at a time and every fault is healed before the next starts, so a
// quorum of etcd voters is always up; heal() undoes whatever is still in effect at the end.
//
// Driven from the test's main thread only.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "chaos/recorder.h"
#include "cluster/move_support.h"

namespace narad::testing {

// The file whose appearance in a node's data directory cuts its power: the value of
// NARAD_TEST_POWER_CUT the faults leg starts every node with.
inline constexpr const char* kPowerCutTrigger = "power-cut";
// The topic the topic_recreate fault deletes and recreates (no recorded traffic).
inline constexpr const char* kChurnTopic = "churn";

struct NemesisCounts {
    std::map<std::string, int> faults;  // by kind
    std::string summary() const;
};

class Nemesis {
  public:
    Nemesis(Cluster& cluster, History& history, uint64_t seed, std::string topic);

    // SIGKILL, down for `down`, then a restart (waits until ready).
    void kill_and_restart(int node, std::chrono::milliseconds down, const std::string& why = "");
    // A power cut (NARAD_TEST_POWER_CUT, node/power_cut.h): the node drops every write it has not
    // fsynced and dies; down for `down`, then a restart on what is left.
    void power_cut_and_restart(int node, std::chrono::milliseconds down);
    // Steps node `node`'s wall clock by `offset` (ClusterOptions::steppable_clocks), holds it
    // there for `held`, then steps it back: two clock steps, as a bad NTP server would make.
    void step_clock(int node, std::chrono::seconds offset, std::chrono::milliseconds held);
    // SIGSTOP for `stopped`, then SIGCONT.
    void pause_and_resume(int node, std::chrono::milliseconds stopped);
    // Aborts one move in flight, waiting up to `within` for one; false when none was in flight.
    bool abort_a_move(std::chrono::milliseconds within = {});
    // Kills the source or the destination of a move in flight (chosen at random) and restarts
    // it. Waits up to `within` for a move; false when none was in flight.
    bool kill_a_move_side(std::chrono::milliseconds within = {});
    // Kills a move's source or destination at one phase of the protocol: restarts it with the
    // phase's failpoint armed to crash (the next phase in a fixed cycle: the destination's
    // move.after_catch_up_pass, move.finalize_pass, move.before_fence, move.before_flip and
    // move.install, the source's move.source.before_final_listing), waits up to 30 s for the
    // crash, then restarts it clean. NARAD_CHAOS_MOVE_PHASE=<failpoint> keeps one phase. Waits up
    // to `within` for a move; false when none was in flight.
    bool kill_at_move_phase(std::chrono::milliseconds within = {});
    // SIGSTOPs the etcd member node `node` supervises for `duration`, then SIGCONT: the node
    // keeps its network but loses its metastore member (a cut from etcd only, as near as this
    // kernel allows: it has no packet classifier to cut single ports). False when the node hosts
    // no member.
    bool pause_etcd_member(int node, std::chrono::milliseconds duration);
    // Deletes the topic kChurnTopic (if it exists) and creates it again, then produces 20
    // messages to the new incarnation and consumes them back: every one arrives, and nothing of
    // an earlier incarnation does (gtest failures otherwise). The topic's partitions move with
    // the rebalances like any other, so a delete can meet a move in flight.
    void recreate_topic();
    // Cuts node `node` off from every other node, both ways, for `duration` (the test's clients
    // still reach it), then heals. Needs the cluster's network namespaces.
    void isolate(int node, std::chrono::milliseconds duration);
    // Node `from` cannot send to node `to` for `duration`.
    void cut_one_way(int from, int to, std::chrono::milliseconds duration);
    // Fills node `node`'s data directory (a small tmpfs: ClusterOptions::small_disks) to the
    // last few KiB for `duration`, then frees it.
    void fill_disk(int node, std::chrono::milliseconds duration);
    // SIGSTOPs the source of a move in flight for `duration` (past move.force_promote_after, the
    // destination force-promotes its copy), then SIGCONT. Waits up to 15 s for a move; false
    // when none was in flight.
    bool pause_a_move_source(std::chrono::milliseconds duration);
    // Starts node `index` for the first time (a join: a rebalance follows).
    void join(int index);
    // Decommissions node `index` and waits until it has exited; false if it did not in time.
    bool decommission(int index, std::chrono::milliseconds timeout);

    // The fault kinds this run may inject: kill, power_cut, clock_step, kill_at_move_phase,
    // etcd_pause, topic_recreate, pause,
    // pause_past_freeze_ttl, abort, kill_move_side, disk_full and, with network namespaces, isolate
    // and cut_one_way; NARAD_CHAOS_FAULTS (a comma-separated list) keeps only those it names.
    std::vector<std::string> fault_kinds() const;
    bool allows(const std::string& kind) const;
    // One fault of a kind fault_kinds() allows (disk_full aside), on one of the nodes `targets`.
    // An abort or a kill aimed at a move does nothing when no move is in flight.
    void random_fault(const std::vector<int>& targets);
    // A random duration from `low` to `high`.
    std::chrono::milliseconds between(std::chrono::milliseconds low,
                                      std::chrono::milliseconds high);
    // A random pause between faults, from `low` to `high`.
    void gap(std::chrono::milliseconds low, std::chrono::milliseconds high);

    const NemesisCounts& counts() const { return counts_; }

  private:
    // Restarts `node` with NARAD_FAILPOINTS set to `failpoints` (empty: none).
    void restart_with_failpoints(int node, const std::string& failpoints);
    // One of the moves in flight, chosen at random; waits up to `within` for one (nullopt: none).
    std::optional<Move> a_move_in_flight(std::chrono::milliseconds within = {});
    void count(const std::string& kind) { ++counts_.faults[kind]; }

    Cluster& cluster_;
    History& history_;
    std::mt19937_64 random_;
    std::string topic_;
    NemesisCounts counts_;
    size_t next_phase_ = 0;
    int incarnation_ = 0;  // of kChurnTopic, as recreate_topic() numbers them
};

}  // namespace narad::testing
