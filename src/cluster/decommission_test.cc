#include "cluster/decommission.h"

#include <gtest/gtest.h>

namespace narad::cluster {
namespace {

const MonoTime kNow = MonoTime(std::chrono::hours(1000));

// A metastore view: `members` with their etcd role, `live` of them live (the others down for an
// hour), and topic t's partitions owned as `owners` says (with targets from `targets`).
struct View {
    meta::MetaState state;
    EtcdConfiguration etcd;

    View& member(const char* id, meta::EtcdRole role, bool live = true, bool draining = false) {
        NodeId node(id);
        state.members[node] = meta::MemberInfo{.id = node, .etcd_role = role, .draining = draining};
        if (live) {
            state.live.insert(node);
        } else {
            state.down_since[node] = kNow - std::chrono::hours(1);
        }
        if (role == meta::EtcdRole::voter) etcd.voters.insert(node);
        if (role == meta::EtcdRole::learner) etcd.learners.insert(node);
        return *this;
    }
    View& owns(const char* owner, int partition, const char* target = "") {
        state.assignments[{"t", PartitionId(partition)}] = {NodeId(owner), NodeId(target)};
        return *this;
    }
    DecommissionView view(uint32_t max_in_flight = 8) const {
        return DecommissionView{state, etcd, kNow, Millis(30'000), 3, max_in_flight};
    }
};

// Rule: a drained node leaves only once it reports the drain applied, no produce unanswered and
// an empty ingress WAL; a node that cannot be asked is held (its WAL may hold the only copy).
TEST(DecommissionGuards, TheNodesOwnReportHoldsItUntilItsWalIsEmpty) {
    EXPECT_TRUE(node_status_reasons(NodeStatus{true, 0, 0}).empty());
    auto codes_of = [](const Result<NodeStatus>& status) {
        std::vector<std::string> out;
        for (const auto& reason : node_status_reasons(status)) out.push_back(reason.code);
        return out;
    };
    using C = std::vector<std::string>;
    EXPECT_EQ(codes_of(NodeStatus{false, 0, 0}), C{"dispatch_backlog"});
    EXPECT_EQ(codes_of(NodeStatus{true, 2, 0}), C{"dispatch_backlog"});
    EXPECT_EQ(node_status_reasons(NodeStatus{true, 0, 7}).front().message,
              "its ingress WAL still holds 7 accepted records not yet handed to their owners; it "
              "is removed once they are");
    EXPECT_EQ(codes_of(Status(Errc::peer_error, "connection refused")),
              C{"node_status_unavailable"});
}

std::vector<std::string> codes(const std::vector<DecommissionReason>& reasons) {
    std::vector<std::string> out;
    for (const auto& reason : reasons) out.push_back(reason.code);
    return out;
}

using meta::EtcdRole;
using Codes = std::vector<std::string>;

// Rule (MinVoters): a voter never leaves if fewer than 3 voters would remain, unless a live node
// hosting no etcd member can replace it; a learner or a plain client leaves without the guard.
TEST(DecommissionGuards, MinVotersAndTheLearnerExemption) {
    View three;
    three.member("a", EtcdRole::voter).member("b", EtcdRole::voter).member("c", EtcdRole::voter);
    EXPECT_EQ(codes(decommission_refusals(three.view(), NodeId("a"))), Codes{"below_min_voters"});
    EXPECT_EQ(decommission_refusals(three.view(), NodeId("a")).front().message,
              "removing it would leave 2 voters, fewer than the 3 a cluster keeps; add a node "
              "first");
    View replaced = three;
    replaced.member("d", EtcdRole::none);
    EXPECT_TRUE(decommission_refusals(replaced.view(), NodeId("a")).empty());
    EXPECT_EQ(voter_replacement(replaced.view(), NodeId("a")), NodeId("d"));
    View draining_replacement = three;
    draining_replacement.member("d", EtcdRole::none, true, /*draining=*/true);
    EXPECT_FALSE(voter_replacement(draining_replacement.view(), NodeId("a")));
    View catching_up = three;
    catching_up.member("l", EtcdRole::learner);
    EXPECT_TRUE(decommission_refusals(catching_up.view(), NodeId("a")).empty())
        << "a learner catching up takes the leaving voter's place";
    View learner = three;
    learner.member("l", EtcdRole::learner).member("x", EtcdRole::none);
    EXPECT_TRUE(decommission_refusals(learner.view(), NodeId("l")).empty());
    EXPECT_TRUE(decommission_refusals(learner.view(), NodeId("x")).empty());
}

// Rule (live majority): with 2k+1 voters of which k are dead, removing a live voter would leave
// 2k with only k alive: refused; removing a dead voter first is fine.
TEST(DecommissionGuards, TheVotersLeftAliveMustBeAStrictMajority) {
    View five;
    five.member("a", EtcdRole::voter)
        .member("b", EtcdRole::voter)
        .member("c", EtcdRole::voter)
        .member("d", EtcdRole::voter, /*live=*/false)
        .member("e", EtcdRole::voter, /*live=*/false);
    EXPECT_EQ(codes(decommission_refusals(five.view(), NodeId("a"))), Codes{"no_healthy_majority"});
    EXPECT_EQ(decommission_refusals(five.view(), NodeId("a")).front().message,
              "removing it would leave 4 voters of which only 2 are alive, not a majority; bring "
              "the dead voters back first");
    EXPECT_TRUE(decommission_refusals(five.view(), NodeId("d")).empty());
}

// Rule: a node owning partitions is refused when it is dead (its data is only on its disk) or when
// nobody alive and not draining could take them.
TEST(DecommissionGuards, OwnersNeedReceiversAndALiveDisk) {
    View view;
    view.member("a", EtcdRole::voter)
        .member("b", EtcdRole::voter)
        .member("c", EtcdRole::voter)
        .member("d", EtcdRole::none, /*live=*/false)
        .owns("d", 0);
    EXPECT_EQ(codes(decommission_refusals(view.view(), NodeId("d"))), Codes{"owner_dead"});
    View alone;
    alone.member("x", EtcdRole::none).member("y", EtcdRole::none, true, /*draining=*/true);
    alone.owns("x", 0);
    EXPECT_EQ(codes(decommission_refusals(alone.view(), NodeId("x"))), Codes{"no_receivers"});
}

// Rule: a running drain is held by moves still aimed at the node (the long message when their
// source is dead), by a full move budget while nothing moves off it, and, once nothing else
// holds it, by its etcd leadership (leader first).
TEST(DecommissionGuards, RunningDrainBlockers) {
    View view;
    view.member("a", EtcdRole::voter)
        .member("b", EtcdRole::voter)
        .member("c", EtcdRole::voter)
        .member("d", EtcdRole::none)
        .member("x", EtcdRole::none, /*live=*/false)
        .owns("a", 0)
        .owns("b", 1, "d");
    EXPECT_EQ(codes(decommission_blockers(view.view(), NodeId("d"))), Codes{"move_target"});
    View stuck = view;
    stuck.owns("x", 2, "d");
    auto reasons = decommission_blockers(stuck.view(), NodeId("d"));
    ASSERT_EQ(codes(reasons), Codes{"move_target"});
    EXPECT_NE(reasons.front().message.find("1 of them from a source that is dead"),
              std::string::npos);
    // Every slot taken by other moves, nothing leaving "a" ("d" can take its vote).
    EXPECT_EQ(codes(decommission_blockers(view.view(/*max_in_flight=*/1), NodeId("a"))),
              Codes{"move_budget_full"});
    View leader = view;
    leader.etcd.leader = NodeId("c");
    EXPECT_EQ(codes(decommission_blockers(leader.view(), NodeId("c"))), Codes{"leader_transfer"});
    EXPECT_EQ(decommission_blockers(leader.view(), NodeId("c")).front().message,
              "it leads the cluster; leadership moves to another voter first");
    // Partitions moving off are progress, not a reason: nothing blocks "a", yet it holds them.
    View moving = view;
    moving.owns("a", 0, "b");
    EXPECT_TRUE(decommission_blockers(moving.view(), NodeId("a")).empty());
    EXPECT_FALSE(holds_nothing(drain_load(moving.state, NodeId("a"), kNow, Millis(30'000))));
    EXPECT_FALSE(holds_nothing(drain_load(view.state, NodeId("d"), kNow, Millis(30'000))))
        << "a move still aims at d";
    // A node owning nothing, aimed at by nothing, and no voter: nothing holds it.
    View client;
    client.member("a", EtcdRole::voter).member("b", EtcdRole::voter).member("c", EtcdRole::voter);
    client.member("e", EtcdRole::none);
    EXPECT_TRUE(decommission_blockers(client.view(), NodeId("e")).empty());
    EXPECT_TRUE(holds_nothing(drain_load(client.state, NodeId("e"), kNow, Millis(30'000))));
}

}  // namespace
}  // namespace narad::cluster
