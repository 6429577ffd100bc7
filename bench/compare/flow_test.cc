#include "compare/flow.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "cli/bench_engine.h"

namespace narad::compare {
namespace {

constexpr const char* kRunId = "0123abcd";

TEST(IdPayloadTest, CarriesIdAndSendTimeInExactlyTheSize) {
    // Rule: a payload is exactly messageSize bytes and gives back its id and send time.
    const IdPayload payload(1024, kRunId);
    const std::string text = payload.make(0xfeedbeef12ull, 1'790'000'000'123'456'789);
    EXPECT_EQ(text.size(), 1024u);
    EXPECT_EQ(payload.size(), 1024u);
    auto parsed = payload.parse(text);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(parsed->id, 0xfeedbeef12ull);
    EXPECT_EQ(parsed->sent_wall_ns, 1'790'000'000'123'456'789);
}

TEST(IdPayloadTest, SmallestSizeStillRoundTrips) {
    // Rule: at the minimum size the id and the time still fit and parse.
    const IdPayload payload(IdPayload::kMinSize, kRunId);
    const std::string text = payload.make(~uint64_t{0}, 1'790'000'000'000'000'000);
    EXPECT_EQ(text.size(), IdPayload::kMinSize);
    auto parsed = payload.parse(text);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(parsed->id, ~uint64_t{0});
}

TEST(IdPayloadTest, PayloadsOfAnotherRunOrGarbageAreNotParsed) {
    // Rule: only this run's payloads count; leftovers from a warm-up or other run are foreign.
    const IdPayload mine(128, kRunId);
    const IdPayload other(128, "ffff0000");
    EXPECT_FALSE(mine.parse(other.make(5, 1'790'000'000'000'000'000)).has_value());
    EXPECT_FALSE(mine.parse("not json at all").has_value());
    std::string broken = mine.make(5, 1'790'000'000'000'000'000);
    broken[18] = 'z';  // first id digit, right after {"bench":"<run id>
    EXPECT_FALSE(mine.parse(broken).has_value());
}

TEST(FlowCapacityTest, FollowsThePlan) {
    // Rule: the bitmap holds count ids, or rate × duration, or the maximum.
    FlowPlan count;
    count.count = 1000;
    EXPECT_EQ(flow_capacity(count), 1000u);
    FlowPlan paced;
    paced.rate = 100;
    paced.duration_ns = 2'000'000'000;
    EXPECT_EQ(flow_capacity(paced), 201u);
    FlowPlan unpaced;
    unpaced.duration_ns = 1'000'000'000;
    EXPECT_EQ(flow_capacity(unpaced), kFlowCapacityMax);
}

TEST(FlowTest, CountModeHandsOutEveryIdExactlyOnceAcrossThreads) {
    // Rule: concurrent producers together claim ids 0..count-1, each once, in batches <= max.
    const IdPayload payload(64, kRunId);
    FlowPlan plan;
    plan.count = 10'007;
    Flow flow(plan, payload);
    flow.start();
    std::vector<std::vector<Flow::Claim>> claims(4);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < claims.size(); ++t) {
        threads.emplace_back([&flow, &mine = claims[t]] {
            while (auto claim = flow.claim(100)) mine.push_back(*claim);
        });
    }
    for (auto& thread : threads) thread.join();
    std::vector<bool> seen(plan.count, false);
    for (const auto& mine : claims) {
        for (const Flow::Claim& claim : mine) {
            EXPECT_GE(claim.count, 1u);
            EXPECT_LE(claim.count, 100u);
            for (uint64_t id = claim.first; id < claim.first + claim.count; ++id) {
                ASSERT_LT(id, plan.count);
                EXPECT_FALSE(seen[id]) << id;
                seen[id] = true;
            }
        }
    }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](bool b) { return b; }));
}

TEST(FlowTest, PacedClaimsNeverRunAheadOfTheSchedule) {
    // Rule: with a rate, id i is handed out only once i/rate seconds have passed.
    const IdPayload payload(64, kRunId);
    FlowPlan plan;
    plan.count = 50;
    plan.rate = 20'000;
    Flow flow(plan, payload);
    flow.start();
    uint64_t handed_out = 0;
    while (auto claim = flow.claim(10)) {
        const double elapsed_s = double(cli::bench::mono_ns() - flow.start_ns()) / 1e9;
        handed_out += claim->count;
        // Ids [0, handed_out) were all due: the last one's due time has passed.
        EXPECT_LE(double(handed_out - 1) / plan.rate, elapsed_s);
    }
    EXPECT_EQ(handed_out, 50u);
}

TEST(FlowTest, AcksCountUniqueIdsAndDuplicatesSeparately) {
    // Rule: a message is consumed once its ack succeeds; a second ack of it is a duplicate.
    const IdPayload payload(64, kRunId);
    FlowPlan plan;
    plan.count = 10;
    Flow flow(plan, payload);
    flow.start();
    auto id = flow.received(flow.payload(3));
    ASSERT_EQ(id, std::optional<uint64_t>(3));
    EXPECT_EQ(flow.acked_unique(), 0u);  // received is not consumed
    flow.acked(3);
    flow.acked(3);
    flow.acked(4);
    EXPECT_EQ(flow.acked_unique(), 2u);
    EXPECT_EQ(flow.duplicates(), 1u);
    EXPECT_EQ(flow.end_to_end().count(), 1u);
    EXPECT_GT(flow.last_ack_ns(), 0);
}

TEST(FlowTest, ForeignPayloadsAreCountedButNotTracked) {
    // Rule: a payload of another run is received (and may be acked) but never counts.
    const IdPayload payload(64, kRunId);
    const IdPayload other(64, "99999999");
    FlowPlan plan;
    plan.count = 10;
    Flow flow(plan, payload);
    EXPECT_FALSE(flow.received(other.make(1, 1'790'000'000'000'000'000)).has_value());
    EXPECT_EQ(flow.foreign(), 1u);
    EXPECT_EQ(flow.end_to_end().count(), 0u);
}

TEST(FlowTest, AbortEndsClaimsAndConsumers) {
    // Rule: an aborted phase hands out nothing more and stops its consumers.
    const IdPayload payload(64, kRunId);
    FlowPlan plan;
    plan.count = 10;
    Flow flow(plan, payload);
    flow.start();
    flow.abort("watchdog");
    flow.abort("second reason is not kept");
    EXPECT_FALSE(flow.claim(5).has_value());
    EXPECT_TRUE(flow.consumers_should_stop());
    EXPECT_EQ(flow.abort_reason(), "watchdog");
}

TEST(FlowTest, ConsumersRunUntilEveryProducedMessageIsAcked) {
    // Rule: consumers keep going until the producers are done and all they produced is acked.
    const IdPayload payload(64, kRunId);
    FlowPlan plan;
    plan.count = 2;
    Flow flow(plan, payload);
    flow.start();
    flow.produced(2, 0);
    EXPECT_FALSE(flow.consumers_should_stop());  // producers still running
    flow.producers_finished();
    flow.acked(0);
    EXPECT_FALSE(flow.consumers_should_stop());
    flow.acked(1);
    EXPECT_TRUE(flow.consumers_should_stop());
}

TEST(DrainRuleTest, StopsOnDrainTimeoutWithMessagesMissing) {
    // Rule: a lost message cannot hold consumers forever: the drain timeout ends them.
    DrainInputs in;
    in.producers_finished = true;
    in.produced_ok = 10;
    in.acked_unique = 9;
    in.producers_finished_at_ns = 1'000;
    in.drain_timeout_ns = 500;
    in.now_ns = 1'499;
    EXPECT_FALSE(consumers_should_stop(in));
    in.now_ns = 1'500;
    EXPECT_TRUE(consumers_should_stop(in));
    in.producers_finished = false;
    EXPECT_FALSE(consumers_should_stop(in));
    in.aborted = true;
    EXPECT_TRUE(consumers_should_stop(in));
}

TEST(FlowTest, DurationModeEndsWhenTheDurationHasPassed) {
    // Rule: in duration mode nothing is handed out once the duration is over.
    const IdPayload payload(64, kRunId);
    FlowPlan plan;
    plan.duration_ns = 1;  // over by the time claim() looks
    Flow flow(plan, payload);
    flow.start();
    while (cli::bench::mono_ns() <= flow.start_ns() + 1) {
    }
    EXPECT_FALSE(flow.claim(10).has_value());
}

}  // namespace
}  // namespace narad::compare
