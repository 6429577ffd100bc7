#include "cli/bench_engine.h"

#include <gtest/gtest.h>

namespace narad::cli::bench {
namespace {

// Rule: pacing is open loop: request k is due k*batch/rate seconds after the start.
TEST(RatePacer, SchedulesRequestsEvenly) {
    const RatePacer unlimited(0, 1);
    EXPECT_FALSE(unlimited.limited());
    EXPECT_EQ(unlimited.due_offset_ns(1000), 0);
    const RatePacer thousand(1000, 1);
    EXPECT_TRUE(thousand.limited());
    EXPECT_EQ(thousand.due_offset_ns(0), 0);
    EXPECT_EQ(thousand.due_offset_ns(1), 1'000'000);
    EXPECT_EQ(thousand.due_offset_ns(2500), 2'500'000'000);
    const RatePacer batched(1000, 10);  // 10 messages per request: 100 requests/s
    EXPECT_EQ(batched.due_offset_ns(3), 30'000'000);
}

// Rule: stats count messages, requests and errors by reason; empty polls are requests only.
TEST(OpStats, CountsSuccessFailureAndEmpty) {
    OpStats stats;
    stats.success(10, 2'000'000, 500);
    stats.success(5, 4'000'000, 300);
    stats.failure(3, "503");
    stats.failure(1, "503");
    stats.failure(2, "transport");
    stats.empty(1'000'000'000);
    EXPECT_EQ(stats.ok(), 15u);
    EXPECT_EQ(stats.failed(), 6u);
    EXPECT_EQ(stats.requests(), 6u);
    EXPECT_EQ(stats.last_success_ns(), 500);
    EXPECT_EQ(stats.latency().count(), 2u);
    const std::map<std::string, uint64_t> expected{{"503", 2}, {"transport", 1}};
    EXPECT_EQ(stats.errors(), expected);
}

// Rule: a summary's rates divide settled messages by the elapsed time.
TEST(OpResult, ComputesRates) {
    OpStats stats;
    stats.success(1000, 1'000'000, 10);
    const OpResult result = summarize(stats, 0, 500'000'000);
    EXPECT_EQ(result.elapsed_ns, 500'000'000);
    EXPECT_DOUBLE_EQ(result.messages_per_second(), 2000);
    EXPECT_DOUBLE_EQ(result.megabytes_per_second(256), 0.512);
    EXPECT_EQ(result.latency.count, 1u);
    EXPECT_EQ(summarize(stats, 10, 5).elapsed_ns, 0);
}

}  // namespace
}  // namespace narad::cli::bench
