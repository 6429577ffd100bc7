#include "compare/runner.h"

#include <gtest/gtest.h>

namespace narad::compare {
namespace {

Workload named(const std::string& name, double percent = 0, const std::string& reference = "") {
    Workload w;
    w.name = name;
    w.count = 10;
    w.rate_percent_of_max = percent;
    w.rate_reference = reference;
    return w;
}

TEST(RunnerOrderTest, ShareOfMaxWorkloadsRunAfterTheOthers) {
    // Rule: a workload at a share of a system's max runs after every max workload, so the max
    // it needs is measured first; each group keeps its order.
    const auto ordered = order_workloads(
        {named("half", 50, "full"), named("a"), named("quarter", 25, "full"), named("full")});
    ASSERT_EQ(ordered.size(), 4u);
    EXPECT_EQ(ordered[0].name, "a");
    EXPECT_EQ(ordered[1].name, "full");
    EXPECT_EQ(ordered[2].name, "half");
    EXPECT_EQ(ordered[3].name, "quarter");
}

TEST(RunnerReferenceTest, UsesThisSystemsOwnMaxTheLowerOfProduceAndConsume) {
    // Rule: each system runs at a share of ITS OWN max, the rate its whole path sustained.
    RunRow nats;
    nats.workload = "full";
    nats.system = "nats";
    nats.produce_msgs_per_s = 30'000;
    nats.consume_msgs_per_s = 20'000;
    RunRow redis = nats;
    redis.system = "redis-always";
    redis.produce_msgs_per_s = 50'000;
    redis.consume_msgs_per_s = 60'000;
    const std::vector<RunRow> rows = {nats, redis};
    const Workload half = named("half", 50, "full");
    EXPECT_EQ(reference_rate(rows, half, "nats"), std::optional<double>(20'000));
    EXPECT_EQ(reference_rate(rows, half, "redis-always"), std::optional<double>(50'000));
}

TEST(RunnerReferenceTest, NoReferenceWhenTheMaxRowFailedOrIsMissing) {
    // Rule: without a measured max there is no rate to run at (the row is skipped, not guessed).
    RunRow failed;
    failed.workload = "full";
    failed.system = "nats";
    failed.outcome = RunRow::Outcome::failed;
    failed.produce_msgs_per_s = 1'000;
    failed.consume_msgs_per_s = 1'000;
    const Workload half = named("half", 50, "full");
    EXPECT_FALSE(reference_rate({failed}, half, "nats").has_value());
    EXPECT_FALSE(reference_rate({failed}, half, "narad-batch").has_value());
}

}  // namespace
}  // namespace narad::compare
