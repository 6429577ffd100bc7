#include "cluster/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

namespace narad::cluster {
namespace {

NodeId node(int i) { return NodeId("narad-" + std::to_string(i)); }

// Appends `count` partitions of `topic` owned by `owner` (and moving to `target`, when given).
void add(PlannerInput& input, const std::string& topic, const NodeId& owner, int count,
         const NodeId& target = {}) {
    uint32_t next = 0;
    for (const auto& [key, assignment] : input.assignments) next += key.topic == topic ? 1 : 0;
    for (int i = 0; i < count; ++i) {
        input.assignments[meta::PartitionKey{topic, PartitionId(next++)}] = {owner, target};
    }
}

PlannerInput receivers(int n) {
    PlannerInput input;
    for (int i = 0; i < n; ++i) input.receivers.insert(node(i));
    return input;
}

// Partitions per holder: the target while in flight, the owner otherwise.
std::map<NodeId, int> counts(const PlannerInput& input) {
    std::map<NodeId, int> result;
    for (const NodeId& receiver : input.receivers) result[receiver] = 0;
    for (const auto& [key, a] : input.assignments)
        ++result[a.target.value().empty() ? a.owner : a.target];
    return result;
}

void apply_plan(PlannerInput& input, const std::vector<PlannedMove>& plan) {
    for (const PlannedMove& move : plan) {
        meta::Assignment& a = input.assignments.at(move.partition);
        ASSERT_EQ(a.owner, move.from);
        ASSERT_TRUE(a.target.value().empty());
        ASSERT_NE(move.from, move.to);
        a.target = move.to;
    }
}

void complete_all(PlannerInput& input) {
    for (auto& [key, a] : input.assignments) {
        if (!a.target.value().empty()) a = {a.target, {}};
    }
}

// Independent of the planner: sum of (count - floor) above floor, less the ceil slots those
// over-floor nodes can keep.
int minimal_moves(const std::map<NodeId, int>& per_node) {
    int total = 0, above = 0, excess = 0;
    for (const auto& [n, c] : per_node) total += c;
    const int floor = total / static_cast<int>(per_node.size());
    for (const auto& [n, c] : per_node) {
        excess += std::max(0, c - floor);
        above += c > floor ? 1 : 0;
    }
    return excess - std::min(above, total % static_cast<int>(per_node.size()));
}

// Rule: the spec's example: 6/6/6/0 over four receivers moves exactly four partitions, all to the
// new node, ending at 5/5/4/4 with the ceil slots on the lowest ids among the fullest.
TEST(Planner, SpecExampleMovesOnlySurplusToNewNode) {
    PlannerInput input = receivers(4);
    add(input, "orders", node(0), 6);
    add(input, "orders", node(1), 3);
    add(input, "audit", node(1), 3);
    add(input, "audit", node(2), 6);
    auto plan = plan_moves(input);
    ASSERT_EQ(plan.size(), 4u);
    std::map<NodeId, int> from;
    for (const PlannedMove& move : plan) {
        EXPECT_EQ(move.to, node(3));
        ++from[move.from];
    }
    EXPECT_EQ(from, (std::map<NodeId, int>{{node(0), 1}, {node(1), 1}, {node(2), 2}}));
    EXPECT_EQ(plan[0].from, node(2));  // documented source order: largest surplus first
    apply_plan(input, plan);
    EXPECT_EQ(counts(input),
              (std::map<NodeId, int>{{node(0), 5}, {node(1), 5}, {node(2), 4}, {node(3), 4}}));
}

// Rule: a plan applied as targets is a fixed point, and so is the state once the moves complete.
TEST(Planner, FixedPointWhileMovesInFlightAndAfterCompletion) {
    PlannerInput input = receivers(4);
    add(input, "t", node(0), 9);
    add(input, "u", node(1), 4);
    auto plan = plan_moves(input);
    ASSERT_EQ(plan.size(), 6u);  // T = 13: caps 4,3,3,3 after node(0) keeps the ceil slot
    apply_plan(input, plan);
    EXPECT_TRUE(plan_moves(input).empty());
    complete_all(input);
    EXPECT_TRUE(plan_moves(input).empty());
}

// Rule: balanced input plans nothing, and a node within its share keeps all its partitions.
TEST(Planner, NothingWithinItsShareMoves) {
    PlannerInput balanced = receivers(3);
    add(balanced, "t", node(0), 5);
    add(balanced, "t", node(1), 4);
    add(balanced, "t", node(2), 4);
    EXPECT_TRUE(plan_moves(balanced).empty());

    // 6/4/4/4: caps 5,5,4,4 (node(1) wins the tie for the second ceil slot): one move, 0 -> 1.
    PlannerInput input = receivers(4);
    add(input, "t", node(0), 6);
    for (int i = 1; i < 4; ++i) add(input, "t", node(i), 4);
    auto plan = plan_moves(input);
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0].from, node(0));
    EXPECT_EQ(plan[0].to, node(1));
}

// Rule: new moves top the in-flight count up to max_in_flight, never beyond, and in-flight moves
// to any target use the budget.
TEST(Planner, MaxInFlightCapsNewMovesCountingExistingOnes) {
    PlannerInput input = receivers(3);
    add(input, "t", node(0), 20);
    add(input, "t", node(0), 1, node(1));
    add(input, "t", node(0), 1, NodeId("gone"));
    input.max_in_flight = 5;
    EXPECT_EQ(plan_moves(input).size(), 3u);
    input.max_in_flight = 2;
    EXPECT_TRUE(plan_moves(input).empty());
    input.max_in_flight = 1;
    EXPECT_TRUE(plan_moves(input).empty());
}

// Rule: repeated plan/apply/partial-complete rounds over random clusters converge to max-min <= 1
// with exactly the minimal number of moves, never exceeding the in-flight cap.
TEST(Planner, RandomClustersConvergeWithMinimalMovesUnderCap) {
    std::mt19937 rng(20240607);
    for (int shape = 0; shape < 300; ++shape) {
        const int existing = 2 + static_cast<int>(rng() % 6);
        const int joined = static_cast<int>(rng() % 3);
        PlannerInput input = receivers(existing + joined);
        input.max_in_flight = 1 + rng() % 8;
        for (int i = 0; i < existing; ++i) {
            for (int p = static_cast<int>(rng() % 13); p > 0; --p) {
                add(input, "topic-" + std::to_string(rng() % 3), node(i), 1);
            }
        }
        const int expected = minimal_moves(counts(input));
        int moves = 0;
        for (int round = 0;; ++round) {
            ASSERT_LT(round, 1000) << "no convergence, shape " << shape;
            auto plan = plan_moves(input);
            size_t in_flight = 0;
            for (const auto& [key, a] : input.assignments)
                in_flight += a.target.value().empty() ? 0 : 1;
            ASSERT_LE(in_flight + plan.size(), std::max<size_t>(input.max_in_flight, in_flight));
            if (plan.empty() && in_flight == 0) break;
            moves += static_cast<int>(plan.size());
            apply_plan(input, plan);
            for (auto& [key, a] : input.assignments) {  // complete a random part; all when idle
                if (!a.target.value().empty() && (plan.empty() || rng() % 2 == 0))
                    a = {a.target, {}};
            }
        }
        auto final_counts = counts(input);
        auto [low, high] =
            std::minmax_element(final_counts.begin(), final_counts.end(),
                                [](auto& a, auto& b) { return a.second < b.second; });
        EXPECT_LE(high->second - low->second, 1) << "shape " << shape;
        EXPECT_EQ(moves, expected) << "shape " << shape;
    }
}

// Rule: partitions of a stay_put (dead) or empty owner never move and count toward no share.
TEST(Planner, StayPutAndOwnerlessPartitionsNeverMoveNorCount) {
    PlannerInput input = receivers(3);
    add(input, "t", NodeId("dead"), 10);
    add(input, "t", NodeId(), 3);
    add(input, "t", node(1), 4);
    input.stay_put.insert(NodeId("dead"));
    auto plan = plan_moves(input);  // T = 4 over 3: caps 2,1,1 -> node(1) sheds 2
    ASSERT_EQ(plan.size(), 2u);
    for (const PlannedMove& move : plan) EXPECT_EQ(move.from, node(1));
    EXPECT_NE(plan[0].to, plan[1].to);  // one each to node(0) and node(2)
}

// Rule: a draining (non-receiver) owner sheds every movable partition, first, and the receivers
// end within floor/ceil.
TEST(Planner, DrainingOwnerShedsEverythingWithinShares) {
    PlannerInput input = receivers(3);
    input.max_in_flight = 100;
    add(input, "t", NodeId("draining"), 8);
    add(input, "t", node(0), 3);
    add(input, "u", node(1), 1);
    auto plan = plan_moves(input);  // T = 12 over 3: 4 each
    ASSERT_EQ(plan.size(), 8u);
    for (const PlannedMove& move : plan) EXPECT_EQ(move.from, NodeId("draining"));
    apply_plan(input, plan);
    complete_all(input);
    EXPECT_EQ(counts(input), (std::map<NodeId, int>{{node(0), 4}, {node(1), 4}, {node(2), 4}}));

    PlannerInput first = receivers(2);  // draining surplus is planned before a receiver's
    first.max_in_flight = 1;
    add(first, "t", node(0), 6);
    add(first, "t", NodeId("draining"), 2);
    auto one = plan_moves(first);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].from, NodeId("draining"));
}

// Rule: the partition that leaves is from the topic the source holds most of, highest key first;
// among equal deficits the destination holding fewest of that topic wins.
TEST(Planner, PrefersFullestTopicAndTopicSpreadDestination) {
    PlannerInput input = receivers(3);
    add(input, "a", node(0), 3);  // "a" sorts first, so key order alone would take "b"/0
    add(input, "b", node(0), 1);
    add(input, "a", node(1), 1);
    add(input, "b", node(1), 1);
    auto plan = plan_moves(input);  // T = 6: caps 2,2,2 -> node(0) sheds 2, node(2) takes them
    ASSERT_EQ(plan.size(), 2u);
    EXPECT_EQ(plan[0].partition, (meta::PartitionKey{"a", PartitionId(2)}));
    EXPECT_EQ(plan[1].partition, (meta::PartitionKey{"a", PartitionId(1)}));

    PlannerInput spread = receivers(3);  // T = 7: caps 3,2,2; node(1) and node(2) each lack 1
    add(spread, "b", node(0), 5);
    add(spread, "b", node(1), 1);
    add(spread, "a", node(2), 1);
    auto moves = plan_moves(spread);
    ASSERT_EQ(moves.size(), 2u);
    EXPECT_EQ(moves[0].to, node(2));  // holds no "b"; node(1) would win on NodeId alone
    EXPECT_EQ(moves[1].to, node(1));
}

// Rule: the plan depends only on the input's contents, not on insertion order or repetition.
TEST(Planner, DeterministicUnderInsertionOrder) {
    PlannerInput input = receivers(4);
    add(input, "t", node(0), 7);
    add(input, "u", node(0), 4);
    add(input, "u", node(1), 5, node(3));
    std::vector<std::pair<meta::PartitionKey, meta::Assignment>> entries(input.assignments.begin(),
                                                                         input.assignments.end());
    std::shuffle(entries.begin(), entries.end(), std::mt19937(7));
    PlannerInput shuffled = receivers(4);
    for (const auto& [key, a] : entries) shuffled.assignments.emplace(key, a);
    const auto plan = plan_moves(input);
    EXPECT_FALSE(plan.empty());
    EXPECT_EQ(plan_moves(shuffled), plan);
    EXPECT_EQ(plan_moves(input), plan);
}

// Rule: no receivers plans nothing; one receiver collects every movable partition; an in-flight
// move to a non-receiver counts nowhere.
TEST(Planner, EdgeCases) {
    PlannerInput none;
    add(none, "t", node(0), 5);
    EXPECT_TRUE(plan_moves(none).empty());

    PlannerInput one = receivers(1);
    one.max_in_flight = 100;
    add(one, "t", node(0), 4);
    add(one, "t", NodeId("draining"), 3);
    auto plan = plan_moves(one);
    ASSERT_EQ(plan.size(), 3u);
    for (const PlannedMove& move : plan) EXPECT_EQ(move.to, node(0));

    // Counted at its owner it would make 4 over 2 (two moves); counted nowhere, 3 over 2.
    PlannerInput gone = receivers(2);
    add(gone, "t", node(0), 3);
    add(gone, "t", node(0), 1, NodeId("gone"));
    plan = plan_moves(gone);  // T = 3: caps 2,1 -> one move
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0], (PlannedMove{{"t", PartitionId(2)}, node(0), node(1)}));
    // 2 + 1 to "gone": counted nowhere 1/1 (one move); counted in T alone, caps 2,1 (none).
    PlannerInput uncounted = receivers(2);
    add(uncounted, "t", node(0), 2);
    add(uncounted, "t", node(0), 1, NodeId("gone"));
    EXPECT_EQ(plan_moves(uncounted).size(), 1u);
}

// Places partition `partition` of `topic` on `owner` (moving to `target`, when given).
void put(PlannerInput& input, const std::string& topic, uint32_t partition, const NodeId& owner,
         const NodeId& target = {}) {
    input.assignments[meta::PartitionKey{topic, PartitionId(partition)}] = {owner, target};
}

// Rule (replica pattern): a rebalance moving a child's partition p picks, among destinations the
// balance rules find equal, the one not holding the parent's partition p.
TEST(Planner, RebalancePrefersTheAntiAffineTargetForAChild) {
    PlannerInput input = receivers(3);
    input.parents["audit"] = "orders";
    for (uint32_t p = 0; p < 6; ++p) {
        put(input, "orders", p, p % 2 == 1 ? node(1) : node(2));  // odd on 1, even on 2
        put(input, "audit", p, node(0));
    }
    auto plan = plan_moves(input);  // T = 12: 4 each; node(0) sheds audit/5, then audit/4
    ASSERT_EQ(plan.size(), 2u);
    // By NodeId alone audit/5 would go to node(1), which holds orders/5, and audit/4 to node(2).
    EXPECT_EQ(plan[0], (PlannedMove{{"audit", PartitionId(5)}, node(0), node(2)}));
    EXPECT_EQ(plan[1], (PlannedMove{{"audit", PartitionId(4)}, node(0), node(1)}));
}

// Rule: a decommission (a draining owner shedding a child) keeps the same preference.
TEST(Planner, DecommissionPrefersTheAntiAffineTargetForAChild) {
    PlannerInput input = receivers(2);
    input.parents["audit"] = "orders";
    put(input, "orders", 0, node(1));
    put(input, "orders", 1, node(0));
    put(input, "audit", 0, NodeId("draining"));
    put(input, "audit", 1, NodeId("draining"));
    auto plan = plan_moves(input);  // T = 4: 2 each
    ASSERT_EQ(plan.size(), 2u);
    EXPECT_EQ(plan[0], (PlannedMove{{"audit", PartitionId(1)}, NodeId("draining"), node(1)}));
    EXPECT_EQ(plan[1], (PlannedMove{{"audit", PartitionId(0)}, NodeId("draining"), node(0)}));
}

// Rule: a parent's partition p moving prefers a destination not holding a child's partition p,
// and a linked partition in flight counts at its destination, not at its owner.
TEST(Planner, ParentMovesAvoidChildrenCountingInFlightLinksAtTheirTarget) {
    PlannerInput input = receivers(3);
    input.parents["audit"] = "orders";
    for (uint32_t p = 0; p < 4; ++p) put(input, "orders", p, node(0));
    put(input, "audit", 3, node(2), node(1));  // moving onto node(1)
    put(input, "x", 0, node(2));
    auto plan = plan_moves(input);  // T = 6: 2 each; node(0) sheds orders/3, then orders/2
    ASSERT_EQ(plan.size(), 2u);
    // node(1) and node(2) each lack one; node(1) is where audit/3 will be (and wins on NodeId).
    EXPECT_EQ(plan[0], (PlannedMove{{"orders", PartitionId(3)}, node(0), node(2)}));
    EXPECT_EQ(plan[1], (PlannedMove{{"orders", PartitionId(2)}, node(0), node(1)}));
}

// Rule: a linked partition moved earlier in the same plan counts at its new destination: a
// draining node shedding a parent's partition and its child's keeps them apart.
TEST(Planner, LinksMovedInTheSamePlanCountAtTheirDestination) {
    PlannerInput input = receivers(2);
    input.parents["audit"] = "orders";
    put(input, "orders", 0, NodeId("draining"));
    put(input, "audit", 0, NodeId("draining"));
    put(input, "a", 0, NodeId("draining"));
    put(input, "q", 0, node(1));
    auto plan = plan_moves(input);  // T = 4: 2 each; orders/0 leaves first, then audit/0, a/0
    ASSERT_EQ(plan.size(), 3u);
    EXPECT_EQ(plan[0], (PlannedMove{{"orders", PartitionId(0)}, NodeId("draining"), node(0)}));
    // node(0) and node(1) now lack one each; node(0) will hold orders/0.
    EXPECT_EQ(plan[1], (PlannedMove{{"audit", PartitionId(0)}, NodeId("draining"), node(1)}));
    EXPECT_EQ(plan[2], (PlannedMove{{"a", PartitionId(0)}, NodeId("draining"), node(0)}));
}

// Rule: balance outranks the replica pattern: a larger deficit, and then fewer partitions of the
// topic, win over a destination free of the linked partition, and the topic that leaves is still
// the one the source holds most of.
TEST(Planner, BalanceOutranksAffinity) {
    PlannerInput deficit = receivers(3);
    deficit.parents["audit"] = "orders";
    put(deficit, "audit", 0, node(0));
    for (const char* topic : {"aa", "ab", "ac", "ad", "ae"}) put(deficit, topic, 0, node(0));
    put(deficit, "orders", 0, node(1));
    put(deficit, "x", 0, node(2));
    put(deficit, "x", 1, node(2));
    auto plan = plan_moves(deficit);  // T = 9: 3 each; node(1) lacks 2, node(2) lacks 1
    ASSERT_EQ(plan.size(), 3u);
    // "audit" sorts last of node(0)'s one-partition topics, so it leaves first.
    EXPECT_EQ(plan[0], (PlannedMove{{"audit", PartitionId(0)}, node(0), node(1)}));

    PlannerInput spread = receivers(3);
    spread.parents["audit"] = "orders";
    put(spread, "audit", 0, node(0));
    for (const char* topic : {"aa", "ab", "ac", "ad"}) put(spread, topic, 0, node(0));
    put(spread, "orders", 0, node(1));
    put(spread, "y", 0, node(1));
    put(spread, "audit", 1, node(2));
    put(spread, "y", 1, node(2));
    auto moves = plan_moves(spread);  // T = 9: 3 each; node(1) and node(2) lack 1 each
    ASSERT_EQ(moves.size(), 2u);
    // node(1) holds orders/0 but no audit partition; node(2) already holds one.
    EXPECT_EQ(moves[0], (PlannedMove{{"audit", PartitionId(0)}, node(0), node(1)}));

    PlannerInput topic = receivers(2);
    topic.parents["audit"] = "orders";
    for (uint32_t p = 0; p < 2; ++p) put(topic, "orders", p, node(0));  // colocated with audit/0
    put(topic, "audit", 0, node(0));
    put(topic, "audit", 1, node(1));
    auto one = plan_moves(topic);  // T = 4: 2 each; node(0) holds most of "orders"
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].partition.topic, "orders");
}

// Rule: the partition that leaves is, within the topic balance picks, one whose move ends a
// colocation (Narad's TestRebalanceHonorsAntiAffinity: a child piled on one node ends with no
// partition p beside its parent's partition p).
TEST(Planner, RebalanceMovesTheColocatedChildPartitionFirst) {
    PlannerInput input = receivers(3);
    input.parents["replica"] = "orders";
    for (uint32_t p = 0; p < 3; ++p) {
        put(input, "orders", p, node(static_cast<int>(p)));
        put(input, "replica", p, node(0));
    }
    auto plan = plan_moves(input);  // T = 6: 2 each; node(0) sheds two replica partitions
    ASSERT_EQ(plan.size(), 2u);
    EXPECT_EQ(plan[0], (PlannedMove{{"replica", PartitionId(0)}, node(0), node(1)}));
    EXPECT_EQ(plan[1], (PlannedMove{{"replica", PartitionId(1)}, node(0), node(2)}));
    apply_plan(input, plan);
    complete_all(input);
    for (uint32_t p = 0; p < 3; ++p) {
        EXPECT_NE(input.assignments.at({"replica", PartitionId(p)}).owner,
                  input.assignments.at({"orders", PartitionId(p)}).owner)
            << "partition " << p;
    }
}

// Rule: affinity never causes a move: a balanced cluster with every child partition colocated
// plans nothing.
TEST(Planner, NoMoveOnlyForAffinity) {
    PlannerInput input = receivers(2);
    input.parents["audit"] = "orders";
    for (uint32_t p = 0; p < 2; ++p) {
        put(input, "orders", p, node(p));
        put(input, "audit", p, node(p));
    }
    EXPECT_TRUE(plan_moves(input).empty());
}

}  // namespace
}  // namespace narad::cluster
