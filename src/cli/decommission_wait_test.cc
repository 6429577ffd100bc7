#include "cli/decommission_wait.h"

#include <gtest/gtest.h>

#include "cli/test_support.h"

namespace narad::cli {
namespace {

using std::chrono::seconds;
using testing::CapturedOutput;
using testing::FakeApi;
using testing::FakeSleeper;

std::string members(int owned, int moving, int backlog, const std::string& blocked = "") {
    std::string member = R"({"id":"n3","owned_partitions":)" + std::to_string(owned) +
                         R"(,"outbound_moves":)" + std::to_string(moving) +
                         R"(,"node_status":{"dispatch_backlog":)" + std::to_string(backlog) +
                         R"(,"produce_in_flight":0})";
    if (!blocked.empty()) {
        member += R"(,"decommission_blocked":[{"code":")" + blocked + R"(","message":"why"}])";
    }
    return R"({"members":[{"id":"n1","owned_partitions":9},)" + member + "}]}";
}

// Rule: the progress of the named node is read from the members list; a node no longer listed has
// left; a body that is not a members list is an error.
TEST(DrainProgress, ReadsTheNamedMember) {
    auto progress = drain_progress(members(4, 2, 17, "move_target"), "n3");
    ASSERT_TRUE(progress.is_ok());
    ASSERT_TRUE(progress->has_value());
    EXPECT_EQ((*progress)->owned, 4u);
    EXPECT_EQ((*progress)->moving_off, 2u);
    EXPECT_EQ((*progress)->dispatch_backlog, 17u);
    EXPECT_EQ((*progress)->blocked, std::vector<std::string>{"move_target: why"});
    EXPECT_EQ(format_drain_progress("n3", **progress),
              "n3: 4 partitions left, 2 moving off, WAL backlog 17; waiting on move_target: why");
    auto gone = drain_progress(R"({"members":[{"id":"n1"}]})", "n3");
    ASSERT_TRUE(gone.is_ok());
    EXPECT_FALSE(gone->has_value());
    EXPECT_EQ(drain_progress("[]", "n3").code(), Errc::corrupt);
}

// Rule: --wait prints a line only when the progress changes, sleeps the interval between polls,
// and ends with status 0 once the node has left.
TEST(WaitForDecommission, PrintsChangesUntilTheNodeHasLeft) {
    FakeApi api;
    FakeSleeper sleeper;
    CapturedOutput captured;
    api.answer(200, members(2, 1, 5));
    api.answer(200, members(2, 1, 5));  // unchanged: no line
    api.answer(200, members(0, 0, 0));
    api.answer(200, R"({"members":[{"id":"n1"}]})");
    ASSERT_TRUE(wait_for_decommission(api, captured.output, sleeper, "n3", seconds(2)).is_ok());
    EXPECT_EQ(captured.out.str(),
              "n3: 2 partitions left, 1 moving off, WAL backlog 5\n"
              "n3: 0 partitions left, 0 moving off, WAL backlog 0\n"
              "n3 is decommissioned: it has left the cluster\n");
    ASSERT_EQ(api.calls.size(), 4u);
    EXPECT_EQ(api.calls[0].target, "/v1/cluster/members?detail=true");
    EXPECT_EQ(sleeper.sleeps, (std::vector<std::chrono::nanoseconds>(3, seconds(2))));
}

// Rule: failed polls are reported and retried; ten in a row end the wait with the last error.
TEST(WaitForDecommission, GivesUpAfterTenFailedPollsInARow) {
    FakeApi api;
    FakeSleeper sleeper;
    CapturedOutput captured;
    api.answer(200, members(1, 1, 0));
    for (int i = 0; i < 10; ++i) api.fail("transport: connection refused");
    Status ended = wait_for_decommission(api, captured.output, sleeper, "n3", seconds(1));
    EXPECT_FALSE(ended.is_ok());
    EXPECT_EQ(ended.message(), "transport: connection refused");
    EXPECT_EQ(api.calls.size(), 11u);
}

// Rule: Ctrl-C (a stopped Sleeper) ends the wait with status 0; the drain goes on.
TEST(WaitForDecommission, InterruptEndsTheWait) {
    FakeApi api;
    FakeSleeper sleeper;
    CapturedOutput captured;
    api.answer(200, members(1, 1, 0));
    sleeper.on_sleep = [&] { sleeper.stop(); };
    EXPECT_TRUE(wait_for_decommission(api, captured.output, sleeper, "n3", seconds(1)).is_ok());
    EXPECT_EQ(api.calls.size(), 1u);
}

}  // namespace
}  // namespace narad::cli
