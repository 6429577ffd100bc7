#include "cli/ack_retry.h"

#include <gtest/gtest.h>

#include "cli/test_support.h"

namespace narad::cli {
namespace {

using std::chrono::milliseconds;
using testing::FakeApi;
using testing::FakeSleeper;

struct AckRun {
    AckOutcome outcome;
    std::vector<std::string> notes;
};

AckRun ack(FakeApi& api, FakeSleeper& sleeper) {
    AckRun run;
    run.outcome = ack_with_retry(api, "orders", "1:42:3", sleeper,
                                 [&](const std::string& note) { run.notes.push_back(note); });
    return run;
}

// Rule: a successful ack is one POST to /ack with the handle query-escaped, and no pause.
TEST(AckRetry, SucceedsFirstTime) {
    FakeApi api;
    FakeSleeper sleeper;
    api.answer(204);
    const AckRun run = ack(api, sleeper);
    EXPECT_EQ(run.outcome, AckOutcome::acked);
    ASSERT_EQ(api.calls.size(), 1u);
    EXPECT_EQ(api.calls[0].method, "POST");
    EXPECT_EQ(api.calls[0].target, "/v1/topics/orders/ack?receipt_handle=1%3A42%3A3");
    EXPECT_TRUE(sleeper.sleeps.empty());
    EXPECT_TRUE(run.notes.empty());
}

// Rule: a 410 means the lease lapsed: say so once and stop, no retry.
TEST(AckRetry, GoneStopsWithoutRetry) {
    FakeApi api;
    FakeSleeper sleeper;
    api.answer(410, "{\"error\":\"receipt handle no longer matches an active reservation\"}");
    api.answer(204);
    const AckRun run = ack(api, sleeper);
    EXPECT_EQ(run.outcome, AckOutcome::lapsed);
    EXPECT_EQ(api.calls.size(), 1u);
    EXPECT_TRUE(sleeper.sleeps.empty());
    ASSERT_EQ(run.notes.size(), 1u);
    EXPECT_EQ(run.notes[0], "lease lapsed before ack (410) \xe2\x80\x94 message may redeliver");
}

// Rule: other failures are retried up to 5 attempts, pausing attempt × 200 ms between them,
// then reported with the last error.
TEST(AckRetry, GivesUpAfterFiveAttemptsWithLinearBackoff) {
    FakeApi api;
    FakeSleeper sleeper;
    for (int i = 0; i < 4; ++i) api.answer(503, "{\"error\":\"acked-ahead set is full\"}");
    api.fail("transport: connection reset");
    api.answer(204);
    const AckRun run = ack(api, sleeper);
    EXPECT_EQ(run.outcome, AckOutcome::failed);
    EXPECT_EQ(api.calls.size(), 5u);
    const std::vector<std::chrono::nanoseconds> expected{milliseconds(200), milliseconds(400),
                                                         milliseconds(600), milliseconds(800)};
    EXPECT_EQ(sleeper.sleeps, expected);
    ASSERT_EQ(run.notes.size(), 1u);
    EXPECT_EQ(run.notes[0], "ack failed after retries: transport: connection reset");
}

// Rule: a transient failure followed by success is an ack, after one pause.
TEST(AckRetry, RecoversAfterTransientFailure) {
    FakeApi api;
    FakeSleeper sleeper;
    api.answer(503);
    api.answer(204);
    const AckRun run = ack(api, sleeper);
    EXPECT_EQ(run.outcome, AckOutcome::acked);
    EXPECT_EQ(api.calls.size(), 2u);
    ASSERT_EQ(sleeper.sleeps.size(), 1u);
    EXPECT_EQ(sleeper.sleeps[0], milliseconds(200));
}

// Rule: Ctrl-C during the backoff ends the retries at once.
TEST(AckRetry, InterruptStopsRetrying) {
    FakeApi api;
    FakeSleeper sleeper;
    sleeper.on_sleep = [&] { sleeper.stop(); };
    api.answer(500);
    api.answer(204);
    const AckRun run = ack(api, sleeper);
    EXPECT_EQ(run.outcome, AckOutcome::interrupted);
    EXPECT_EQ(api.calls.size(), 1u);
}

// Rule: the policy itself: ok is done, 410 is lapsed, others retry until the last attempt.
TEST(AckRetryPolicy, DecidesPerAttempt) {
    const AckRetryPolicy policy;
    EXPECT_EQ(policy.after(1, Status::ok()), AckRetryPolicy::Next::done);
    EXPECT_EQ(policy.after(1, Status(Errc::gone, "http 410: x")), AckRetryPolicy::Next::lapsed);
    EXPECT_EQ(policy.after(4, Status(Errc::unavailable, "http 503: x")),
              AckRetryPolicy::Next::retry);
    EXPECT_EQ(policy.after(5, Status(Errc::unavailable, "http 503: x")),
              AckRetryPolicy::Next::give_up);
    EXPECT_EQ(policy.backoff(3), milliseconds(600));
}

}  // namespace
}  // namespace narad::cli
