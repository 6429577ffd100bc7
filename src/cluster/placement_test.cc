#include "cluster/placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace narad::cluster {
namespace {

meta::MetaState members(std::initializer_list<const char*> live, const char* down = nullptr) {
    meta::MetaState state;
    for (const char* node : live) {
        state.members[NodeId(node)] = meta::MemberInfo{.id = NodeId(node)};
        state.live.insert(NodeId(node));
    }
    if (down != nullptr) state.members[NodeId(down)] = meta::MemberInfo{.id = NodeId(down)};
    return state;
}

void assign(meta::MetaState& state, const std::string& topic, const std::vector<NodeId>& owners) {
    for (uint32_t p = 0; p < owners.size(); ++p) {
        state.assignments[meta::PartitionKey{topic, PartitionId(p)}] = {owners[p], {}};
    }
}

std::map<NodeId, int> count(const meta::MetaState& state, const std::string& topic = {}) {
    std::map<NodeId, int> counts;
    for (const auto& [node, member] : state.members) counts[node] = 0;
    for (const auto& [key, assignment] : state.assignments) {
        if (topic.empty() || key.topic == topic) ++counts[assignment.owner];
    }
    return counts;
}

int spread(const std::map<NodeId, int>& counts, const meta::MetaState& state) {
    int low = 1 << 30, high = 0;
    for (const auto& [node, n] : counts) {
        if (!state.is_live(node)) continue;
        low = std::min(low, n);
        high = std::max(high, n);
    }
    return high - low;
}

// Rule: twelve partitions over three live nodes land four on each.
TEST(Placement, TwelveOverThreeIsFourEach) {
    meta::MetaState state = members({"a", "b", "c"});
    auto owners = spread_partitions(state, "t", 0, 12).value();
    assign(state, "t", owners);
    for (const auto& [node, n] : count(state, "t")) EXPECT_EQ(n, 4) << node.value();
}

// Rule: a member whose liveness key is gone, or that is draining, gets nothing.
TEST(Placement, SkipsDownAndDrainingMembers) {
    meta::MetaState state = members({"a", "b", "c"}, "down");
    state.members[NodeId("c")].draining = true;
    auto owners = spread_partitions(state, "t", 0, 6).value();
    for (const NodeId& owner : owners) {
        EXPECT_TRUE(owner == NodeId("a") || owner == NodeId("b")) << owner.value();
    }
}

// Rule: with no live member the request is refused, not placed on a dead node.
TEST(Placement, NoLiveMemberIsUnavailable) {
    meta::MetaState state = members({}, "down");
    EXPECT_EQ(spread_partitions(state, "t", 0, 3).code(), Errc::unavailable);
}

// Rule: across many topics of odd sizes, per-topic and per-node totals each differ by at most one.
TEST(Placement, TotalsAndPerTopicCountsStayWithinOne) {
    meta::MetaState state = members({"a", "b", "c", "d"});
    const uint32_t sizes[] = {3, 5, 7, 1, 2, 9, 4, 6, 3, 11};
    for (size_t i = 0; i < std::size(sizes); ++i) {
        std::string topic = "t" + std::to_string(i);
        assign(state, topic, spread_partitions(state, topic, 0, sizes[i]).value());
        EXPECT_LE(spread(count(state, topic), state), 1) << topic;
        EXPECT_LE(spread(count(state), state), 1) << "after " << topic;
    }
}

// Rule: growing a topic places only the new partitions and keeps its spread within one.
TEST(Placement, GrowPlacesOnlyNewPartitions) {
    meta::MetaState state = members({"a", "b", "c"});
    assign(state, "t", spread_partitions(state, "t", 0, 4).value());
    auto added = spread_partitions(state, "t", 4, 5).value();
    ASSERT_EQ(added.size(), 5u);
    for (uint32_t i = 0; i < added.size(); ++i) {
        state.assignments[meta::PartitionKey{"t", PartitionId(4 + i)}] = {added[i], {}};
    }
    for (const auto& [node, n] : count(state, "t")) EXPECT_EQ(n, 3) << node.value();
}

// A topic record linking `child` under `parent`, as a create with `parent` leaves it.
void link(meta::MetaState& state, const std::string& parent, const std::string& child) {
    state.topics[parent].name = parent;
    state.topics[parent].role = meta::TopicRole::parent;
    state.topics[parent].children.push_back(child);
    state.topics[child].name = child;
    state.topics[child].role = meta::TopicRole::child;
    state.topics[child].parent = parent;
}

// Child partitions p placed on the owner of the parent's partition p.
int colocated(const meta::MetaState& state, const std::string& parent,
              const std::vector<NodeId>& child_owners, uint32_t first = 0) {
    int n = 0;
    for (uint32_t i = 0; i < child_owners.size(); ++i) {
        const meta::Assignment* held = state.find_assignment(parent, PartitionId(first + i));
        n += held != nullptr && held->owner == child_owners[i] ? 1 : 0;
    }
    return n;
}

// Rule (replica pattern): over 3 live nodes, a child created with the parent's partition count
// (3, and 6) has no partition p on the owner of the parent's partition p, and keeps the spread.
TEST(Placement, ChildPartitionsAvoidTheParentsOwners) {
    for (uint32_t partitions : {3u, 6u}) {
        meta::MetaState state = members({"a", "b", "c"});
        assign(state, "orders", spread_partitions(state, "orders", 0, partitions).value());
        auto owners = spread_partitions(state, "audit", 0, partitions, "orders").value();
        ASSERT_EQ(owners.size(), partitions);
        EXPECT_EQ(colocated(state, "orders", owners), 0) << partitions << " partitions";
        assign(state, "audit", owners);
        for (const auto& [node, n] : count(state, "audit")) {
            EXPECT_EQ(n, static_cast<int>(partitions / 3)) << node.value();
        }
        // Without the parent's name the same call colocates: the test above would catch a rule
        // that ignores it.
        EXPECT_GT(
            colocated(state, "orders", spread_partitions(state, "other", 0, partitions).value()),
            0);
    }
}

// Rule: placing a child's record as it will be stored (naming its parent) is the same call.
TEST(Placement, TopicRecordOverloadUsesItsParent) {
    meta::MetaState state = members({"a", "b", "c"});
    assign(state, "orders", spread_partitions(state, "orders", 0, 3).value());
    meta::Topic child;
    child.name = "audit";
    child.role = meta::TopicRole::child;
    child.parent = "orders";
    auto owners = spread_partitions(state, child, 0, 3).value();
    EXPECT_EQ(owners, spread_partitions(state, "audit", 0, 3, "orders").value());
    EXPECT_EQ(colocated(state, "orders", owners), 0);
}

// Rule: balance wins over the replica pattern: with one live node every partition of both lands
// on it, and each child partition counts as colocated.
TEST(Placement, OneLiveNodeTakesEverythingColocated) {
    meta::MetaState state = members({"a"}, "down");
    assign(state, "orders", spread_partitions(state, "orders", 0, 3).value());
    auto owners = spread_partitions(state, "audit", 0, 3, "orders").value();
    EXPECT_EQ(owners, (std::vector<NodeId>(3, NodeId("a"))));
    assign(state, "audit", owners);
    link(state, "orders", "audit");
    EXPECT_EQ(count_colocated_child_partitions(state), 3);
}

// Rule: when the counts the spread rule gives leave no full choice (3 of the parent's 4 partitions
// on one node of two, each node taking 2 of the child's), one partition stays colocated, not the 3
// that the plain spread would give, and the per-node counts are the spread rule's.
TEST(Placement, AvoidsWhereverBalanceLeavesAChoice) {
    meta::MetaState state = members({"a", "b"});
    assign(state, "orders", {NodeId("a"), NodeId("a"), NodeId("a"), NodeId("b")});
    assign(state, "filler", {NodeId("b"), NodeId("b")});
    auto plain = spread_partitions(state, "other", 0, 4).value();
    auto owners = spread_partitions(state, "audit", 0, 4, "orders").value();
    std::map<NodeId, int> plain_counts, counts;
    for (const NodeId& node : plain) ++plain_counts[node];
    for (const NodeId& node : owners) ++counts[node];
    EXPECT_EQ(counts, plain_counts);
    EXPECT_EQ(counts[NodeId("a")], 2);
    EXPECT_EQ(colocated(state, "orders", plain), 3);
    EXPECT_EQ(colocated(state, "orders", owners), 1);
}

// Rule: growing an existing child (its parent taken from its record) places the new partitions
// away from the parent's same-numbered ones too; a parent partition that does not exist is no
// constraint.
TEST(Placement, GrowingAChildAvoidsTheParentsOwners) {
    meta::MetaState state = members({"a", "b", "c"});
    assign(state, "orders", spread_partitions(state, "orders", 0, 6).value());
    link(state, "orders", "audit");
    assign(state, "audit", spread_partitions(state, "audit", 0, 3).value());
    auto added = spread_partitions(state, "audit", 3, 3).value();
    EXPECT_EQ(colocated(state, "orders", added, 3), 0);
    auto beyond = spread_partitions(state, "audit", 6, 3).value();  // orders has no p6..p8
    EXPECT_EQ(beyond.size(), 3u);
}

// Rule: the gauge counts child partitions on the owner of the parent's same-numbered partition,
// and nothing for standalone topics, detached children or unassigned partitions.
TEST(Placement, CountsColocatedChildPartitions) {
    meta::MetaState state = members({"a", "b", "c"});
    assign(state, "orders", {NodeId("a"), NodeId("b"), NodeId("c")});
    link(state, "orders", "audit");
    // p0 and p2 colocated; p3 has no parent partition (a owns orders/0, which does not count).
    assign(state, "audit", {NodeId("a"), NodeId("c"), NodeId("c"), NodeId("a")});
    EXPECT_EQ(count_colocated_child_partitions(state), 2);
    state.topics["copy"].name = "copy";  // standalone: never counts
    assign(state, "copy", {NodeId("a"), NodeId("b"), NodeId("c")});
    EXPECT_EQ(count_colocated_child_partitions(state), 2);
    state.assignments[meta::PartitionKey{"audit", PartitionId(0)}].owner = NodeId();
    state.assignments[meta::PartitionKey{"orders", PartitionId(0)}].owner = NodeId();
    EXPECT_EQ(count_colocated_child_partitions(state), 1);
    state.topics["audit"].role = meta::TopicRole::standalone;  // detached
    state.topics["audit"].parent.clear();
    EXPECT_EQ(count_colocated_child_partitions(state), 0);
}

}  // namespace
}  // namespace narad::cluster
