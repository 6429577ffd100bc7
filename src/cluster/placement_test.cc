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

}  // namespace
}  // namespace narad::cluster
