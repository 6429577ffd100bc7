#include "cli/sub.h"

#include <gtest/gtest.h>

#include <map>

#include "cli/test_support.h"

namespace narad::cli {
namespace {

using testing::Call;
using testing::FakeApi;
using testing::FakeSleeper;
using testing::response;

struct SubHarness {
    FakeApi api;
    FakeSleeper sleeper;
    testing::CapturedOutput captured;
    std::atomic<int64_t> printed{0};
    SubContext context{api, captured.output, sleeper, printed, [](int64_t) { return int64_t{0}; }};
};

std::string message_body(int partition, int offset, std::string payload, std::string handle = "") {
    std::string body = "{\"topic\":\"t\",\"partition\":" + std::to_string(partition) +
                       ",\"offset\":" + std::to_string(offset) + ",\"payload\":" + payload +
                       ",\"timestamp\":0";
    if (!handle.empty()) body += ",\"receipt_handle\":\"" + handle + "\"";
    return body + "}\n";
}

// Rule: queue mode long-polls with wait=10s, prints each message, acks it, and on a consume
// error says so and pauses 1 s before retrying.
TEST(QueueSub, ConsumesPrintsAndAcks) {
    SubHarness h;
    h.api.answer(200, message_body(1, 7, "\"hi\"", "1:7:1"));
    h.api.answer(204);
    h.api.answer(204);
    h.api.answer(503, "{\"error\":\"control plane temporarily unavailable\"}");
    h.sleeper.on_sleep = [&] { h.sleeper.stop(); };
    run_queue_sub(h.context, {.topic = "t", .partition = 2});
    ASSERT_EQ(h.api.calls.size(), 4u);
    EXPECT_EQ(h.api.calls[0].target, "/v1/topics/t/consume?wait=10s&partition=2");
    EXPECT_EQ(h.api.calls[1].target, "/v1/topics/t/ack?receipt_handle=1%3A7%3A1");
    EXPECT_EQ(h.api.calls[2].method, "GET");
    EXPECT_EQ(h.captured.out.str(), "[p1 @7] hi\n");
    EXPECT_EQ(h.captured.err.str(),
              "subscribed to t (queue mode \xe2\x80\x94 messages below are being consumed and "
              "acked); ctrl-c to stop\n"
              "consume error (retrying): http 503: control plane temporarily unavailable\n");
    EXPECT_EQ(h.printed.load(), 1);
    ASSERT_EQ(h.sleeper.sleeps.size(), 1u);
    EXPECT_EQ(h.sleeper.sleeps[0], std::chrono::seconds(1));
}

// Rule: --no-ack never acks and says leases will lapse; --raw prints payloads only, no banner.
TEST(QueueSub, NoAckAndRaw) {
    SubHarness h;
    h.api.answer(200, message_body(0, 1, "{\"a\":1}", "0:1:1"));
    h.api.fail("transport: reset");
    h.sleeper.on_sleep = [&] { h.sleeper.stop(); };
    run_queue_sub(h.context, {.topic = "t", .raw = true, .no_ack = true});
    ASSERT_EQ(h.api.calls.size(), 2u);
    EXPECT_EQ(h.api.calls[1].method, "GET");
    EXPECT_EQ(h.captured.out.str(), "{\"a\":1}\n");
    EXPECT_EQ(h.captured.err.str(), "consume error (retrying): transport: reset\n");

    SubHarness banner;
    banner.sleeper.stop();
    run_queue_sub(banner.context, {.topic = "t", .no_ack = true});
    EXPECT_EQ(banner.captured.err.str(),
              "subscribed to t (queue mode, --no-ack \xe2\x80\x94 leases will lapse and messages "
              "will redeliver); ctrl-c to stop\n");
}

// Rule: peek starts every partition at its high watermark, reads by replay, jumps to the oldest
// offset on a 410, and sleeps 400 ms after a pass without progress.
TEST(Peek, TailsFromHighWatermarkAndJumpsOnGone) {
    SubHarness h;
    const std::string stats =
        R"({"name":"t","partition_stats":[{"index":1,"oldest_offset":7,"high_watermark":0},)"
        R"({"index":0,"oldest_offset":7,"high_watermark":5}]})";
    h.api.handler = [&](const Call& call) -> Result<net::HttpResponse> {
        if (call.target == "/v1/topics/t") return response(200, stats);
        if (call.target == "/v1/topics/t/consume?partition=0&offset=5") {
            return response(410,
                            "{\"error\":\"receipt handle no longer matches an active "
                            "reservation: offset 5 aged out of retention (oldest retained: 7)\"}");
        }
        if (call.target == "/v1/topics/t/consume?partition=0&offset=7") {
            return response(200, message_body(0, 7, "\"seven\""));
        }
        return response(204);
    };
    h.sleeper.on_sleep = [&] { h.sleeper.stop(); };
    ASSERT_TRUE(run_peek(h.context, {.topic = "t"}).is_ok());
    EXPECT_EQ(h.captured.out.str(), "[p0 @7] seven\n");
    EXPECT_EQ(h.captured.err.str(),
              "peeking t across 2 partition(s) \xe2\x80\x94 read-only, no reservations; ctrl-c to "
              "stop\n"
              "p0: offset 5 aged out; jumping to 7\n");
    std::vector<std::string> reads;
    for (const Call& call : h.api.calls) reads.push_back(call.target);
    const std::vector<std::string> expected{
        "/v1/topics/t",
        "/v1/topics/t/consume?partition=0&offset=5",
        "/v1/topics/t",
        "/v1/topics/t/consume?partition=0&offset=7",
        "/v1/topics/t/consume?partition=0&offset=8",
        "/v1/topics/t/consume?partition=1&offset=0",
        "/v1/topics/t/consume?partition=0&offset=8",  // second pass: no progress
        "/v1/topics/t/consume?partition=1&offset=0",
    };
    EXPECT_EQ(reads, expected);
    ASSERT_EQ(h.sleeper.sleeps.size(), 1u);
    EXPECT_EQ(h.sleeper.sleeps[0], std::chrono::milliseconds(400));
}

// Rule: peek's flag and stats errors use Go's texts.
TEST(Peek, ReportsStartErrors) {
    SubHarness h;
    EXPECT_EQ(run_peek(h.context, {.topic = "t", .from = 3}).message(),
              "--from requires --partition");
    h.api.answer(200, R"({"name":"t","partition_stats":[]})");
    EXPECT_EQ(run_peek(h.context, {.topic = "t"}).message(), "no partition stats for t");
    h.api.answer(200, R"({"name":"t","partition_stats":[{"index":0}]})");
    EXPECT_EQ(run_peek(h.context, {.topic = "t", .partition = 4}).message(),
              "no reachable partition 4 on t (stats are owner-local; is the owner up?)");
    h.api.answer(200, "garbage");
    EXPECT_TRUE(run_peek(h.context, {.topic = "t"}).message().starts_with("parse topic info: "));
}

// The topic answer of a cluster with partition 1's owner down: a partial answer with a zero
// placeholder for it.
constexpr const char* kPartialTopic =
    R"({"name":"orders","partitions":3,"partial":true,"partition_stats":[)"
    R"({"index":0,"oldest_offset":2,"high_watermark":10,"owner_node":"node-a","status":"ok"},)"
    R"({"index":1,"oldest_offset":0,"high_watermark":0,"owner_node":"node-b",)"
    R"("status":"owner_unavailable","owner_liveness":"dead"},)"
    R"({"index":2,"oldest_offset":0,"high_watermark":5,"owner_node":"node-c","status":"ok"}]})";

// Rule: peek refuses to start while a partition it would read is a placeholder (starting at its
// zero would replay the whole partition once the owner is back), naming partition and owner; a
// live partition peeks, and a given start (--partition with --from) runs.
TEST(Peek, RefusesAnUnavailablePartition) {
    SubHarness h;
    const std::string refusal =
        "partition 1 of \"orders\" is unavailable: its owner node-b is dead";
    h.api.answer(200, kPartialTopic);
    EXPECT_EQ(run_peek(h.context, {.topic = "orders"}).message(), refusal);
    h.api.answer(200, kPartialTopic);
    EXPECT_EQ(run_peek(h.context, {.topic = "orders", .partition = 1}).message(), refusal);
    EXPECT_EQ(h.api.calls.size(), 2u);  // nothing read

    h.api.answer(200, kPartialTopic);
    h.api.answer(204);
    h.sleeper.on_sleep = [&] { h.sleeper.stop(); };
    ASSERT_TRUE(run_peek(h.context, {.topic = "orders", .partition = 0, .raw = true}).is_ok());
    EXPECT_EQ(h.api.calls[3].target, "/v1/topics/orders/consume?partition=0&offset=10");

    SubHarness given;
    given.api.answer(200, kPartialTopic);
    given.api.answer(204);
    given.sleeper.on_sleep = [&] { given.sleeper.stop(); };
    ASSERT_TRUE(run_peek(given.context, {.topic = "orders", .partition = 1, .from = 3, .raw = true})
                    .is_ok());
    EXPECT_EQ(given.api.calls[1].target, "/v1/topics/orders/consume?partition=1&offset=3");
}

// Rule: replay of a placeholder fails naming partition and owner instead of printing an empty
// range; a live partition of the same topic replays from its oldest offset.
TEST(Replay, RefusesAnUnavailablePartition) {
    SubHarness h;
    h.api.answer(200, kPartialTopic);
    EXPECT_EQ(run_replay(h.context, {.topic = "orders", .partition = 1}).message(),
              "partition 1 of \"orders\" is unavailable: its owner node-b is dead");
    EXPECT_EQ(h.captured.err.str(), "");
    h.api.answer(200, kPartialTopic);
    h.api.answer(204);
    ASSERT_TRUE(run_replay(h.context, {.topic = "orders", .partition = 0}).is_ok());
    EXPECT_EQ(h.api.calls[2].target, "/v1/topics/orders/consume?partition=0&offset=2");
}

// Rule: --from with --partition starts that partition there instead of at the tail.
TEST(Peek, FromStartsAtOffset) {
    SubHarness h;
    h.api.answer(
        200,
        R"({"partition_stats":[{"index":0,"high_watermark":9},{"index":2,"high_watermark":9}]})");
    h.api.answer(204);
    h.sleeper.on_sleep = [&] { h.sleeper.stop(); };
    ASSERT_TRUE(
        run_peek(h.context, {.topic = "t", .partition = 2, .from = 3, .raw = true}).is_ok());
    EXPECT_EQ(h.api.calls[1].target, "/v1/topics/t/consume?partition=2&offset=3");
    EXPECT_EQ(h.captured.err.str(), "");
}

// Rule: replay reads [from, to) one offset at a time, defaulting to [oldest, hwm), skips aged-out
// offsets, stops at a 204 and reports the range.
TEST(Replay, ReadsRangeAndSkipsAgedOut) {
    SubHarness h;
    h.api.answer(200, R"({"partition_stats":[{"index":1,"oldest_offset":2,"high_watermark":6}]})");
    h.api.answer(200, message_body(1, 2, "\"a\""));
    h.api.answer(410, "{\"error\":\"aged out\"}");
    h.api.answer(200, message_body(1, 4, "\"b\""));
    h.api.answer(204);
    ASSERT_TRUE(run_replay(h.context, {.topic = "t", .partition = 1}).is_ok());
    EXPECT_EQ(h.api.calls.size(), 5u);
    EXPECT_EQ(h.api.calls[1].target, "/v1/topics/t/consume?partition=1&offset=2");
    EXPECT_EQ(h.captured.out.str(), "[p1 @2] a\n[p1 @4] b\n");
    EXPECT_EQ(h.captured.err.str(),
              "offset 3 aged out of retention; skipping forward\n"
              "2 message(s) replayed from p1 [2, 6)\n");
}

// Rule: replay errors: a missing partition, and any non-410 failure ends the command.
TEST(Replay, ReportsErrors) {
    SubHarness h;
    h.api.answer(200, R"({"partition_stats":[{"index":0}]})");
    EXPECT_EQ(run_replay(h.context, {.topic = "t", .partition = 3}).message(),
              "partition 3 not in stats (owner down, or index out of range)");
    h.api.answer(500, "{\"error\":\"consume failed\"}");
    EXPECT_EQ(run_replay(h.context, {.topic = "t", .partition = 0, .from = 0, .to = 2}).message(),
              "http 500: consume failed");
}

}  // namespace
}  // namespace narad::cli
