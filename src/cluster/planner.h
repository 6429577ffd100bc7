// Move planner: a pure function from the assignments and the set of receiving nodes to the fewest
// moves that balance owned-partition counts (spec "Move planner", "Decommission as rebalance"), in
// the style of Redpanda's partition_balancer_planner. It holds no state and does no I/O; the
// controller's leader calls it on each rebalance tick under its planning mutex, but any thread may
// call it.
//
// Counting: a partition with a target is in flight; it counts at its target when the target is a
// receiver (nowhere otherwise), never moves, and uses one of the MaxInFlightMoves slots. A
// partition whose owner is empty or in `stay_put` counts nowhere and never moves. Every other
// partition is movable and counts at its owner. With T counted partitions over R receivers, each
// receiver's capacity is floor(T/R) or ceil(T/R), the ceil slots going to the receivers that count
// the most (ties by NodeId ascending); a non-receiver owner has capacity 0. Only the surplus above
// capacity moves, so a recomputation while moves run reaches a fixed point and every planned move
// lowers the remaining surplus by exactly one: the plan never oscillates.
//
// Choices the spec leaves open:
//  - Sources in order: non-receiver (draining) owners by NodeId, then receivers by surplus
//    descending, then NodeId. The budget cuts the list at its end.
//  - Which partition leaves a source: one of the topic the source holds most of (ties by topic name
//    descending), and within it the highest PartitionKey.
//  - Destination: the receiver with the largest deficit; among equal deficits, the one holding the
//    fewest partitions of the partition's topic (keeps per-topic spread); then NodeId ascending.
//  - Replica pattern (placement.h): for a topic linked by fan-out, the two choices above are made
//    together. Among the topic's partitions on the source and the destinations the balance rules
//    rank first, the pair that most lowers colocation wins (a child's partition p sharing a node
//    with its parent's partition p, or a parent's partition p with its children's): the count of
//    linked partitions at the destination less the count left behind on the source; then the
//    highest key and the lowest NodeId as before. A linked partition counts where it is moving
//    (planned in this pass or already in flight), else at its owner. This only chooses among moves
//    balance needs anyway: it never adds a move, nor changes the topic or the destination's rank.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/ids.h"
#include "meta/topic.h"

namespace narad::cluster {

struct PlannerInput {
    std::map<meta::PartitionKey, meta::Assignment> assignments;  // every partition of every topic
    std::set<NodeId> receivers;  // live, non-draining members: the nodes that may hold partitions
    std::set<NodeId> stay_put;   // owners whose partitions never move (dead or unknown nodes)
    uint32_t max_in_flight = 8;  // MaxInFlightMoves
    // Fan-out links, child topic -> its parent: the replica pattern's preference (see above).
    std::map<std::string, std::string> parents;
};

struct PlannedMove {
    meta::PartitionKey partition;
    NodeId from;
    NodeId to;
    bool operator==(const PlannedMove&) const = default;
};

// The fewest moves that balance owned-partition counts over the receivers, topped up to
// max_in_flight moves in flight. Deterministic: the same input gives the same plan.
std::vector<PlannedMove> plan_moves(const PlannerInput& input);

}  // namespace narad::cluster
