// The smoke test: one short run of a small cluster that touches most of a node's threads —
// produce routed between nodes, consume and ack through every node, a node joining and one
// partition moving onto it, then every node stopped cleanly. It is the multi-process test of
// `make tsan` (label `smoke`), where every node runs under ThreadSanitizer and the harness fails
// the test on any report in a node's log, so it stays short: one etcd voter, two nodes, then a
// third. Every wait is on a condition with a deadline.
#include "cluster/move_support.h"

namespace narad::testing {
namespace {

// Rule: with 3 partitions on two nodes and producers and consumers running through both, a third
// node joining takes exactly one partition by a completed move; every produce answers 202,
// nothing accepted is lost, and every node then stops cleanly (exit code 0).
TEST(SmokeTest, ProduceConsumeAndOneMoveAcrossThreeNodes) {
    ClusterOptions options;
    options.nodes = 3;
    options.voters = 1;
    options.env["NARAD_CLUSTER_VOTERS"] = "1";
    // The planner runs on the controller's tick: a short one lets the move start soon after the
    // join.
    options.env["NARAD_CLUSTER_CONTROLLER_TICK"] = "500ms";
    Cluster cluster(options);
    ASSERT_NO_FATAL_FAILURE(cluster.start_first(2));
    const std::string topic = "smoke";
    {
        auto client = cluster.node(1).client();
        ASSERT_NO_FATAL_FAILURE(create_topic(client, topic, 3));
    }
    std::map<int, Assignment> initial;
    ASSERT_TRUE(eventually(
        [&] {
            initial = read_assignments(cluster, topic, 3);
            return !initial.empty();
        },
        seconds(30), milliseconds(100)))
        << "the topic's assignments never appeared";
    std::map<std::string, int> counts = owner_counts(initial);
    ASSERT_EQ(counts.size(), 2u) << json(counts).dump();

    Ledger ledger(100'000);
    Traffic traffic(cluster, topic, ledger);
    for (int index = 1; index <= 2; ++index) {
        traffic.produce_through(index, 50);
        traffic.consume_through(index);
    }
    ASSERT_TRUE(accepted_grows_by(ledger, 100)) << "traffic never started";

    ASSERT_NO_FATAL_FAILURE(cluster.join(3));
    traffic.produce_through(3, 50);
    traffic.consume_through(3);
    bool moved = eventually(
        [&] {
            auto moves = list_moves(cluster, 1);
            return moves && moves->empty() && owned_partitions(cluster, 1)["n3"] == 1;
        },
        seconds(120), milliseconds(100));
    EXPECT_TRUE(moved) << "the move onto n3 did not finish: "
                       << moves_json(cluster, 1, true).value_or(json()).dump()
                       << move_logs(cluster);
    EXPECT_TRUE(accepted_grows_by(ledger, 100)) << "produce stopped after the move";
    bool drained = traffic.drain(seconds(120));

    EXPECT_EQ(traffic.refused(), 0) << "produce did not answer 202:" << traffic.refusal_samples();
    EXPECT_TRUE(drained) << ledger.summary();
    EXPECT_TRUE(ledger.nothing_lost()) << ledger.summary();
    EXPECT_EQ(ledger.strays(), 0);
    EXPECT_EQ(metric(cluster, 3, kCompleted), 1);
    // A clean stop runs every shutdown path, where a node's threads meet one last time.
    for (int index = 3; index >= 1; --index) {
        EXPECT_EQ(cluster.node(index).stop(), 0) << "n" << index << " did not stop cleanly";
    }
}

}  // namespace
}  // namespace narad::testing
