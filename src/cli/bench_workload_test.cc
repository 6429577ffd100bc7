#include "cli/bench_workload.h"

#include <gtest/gtest.h>

#include "base/json_text.h"
#include "cli/json_text.h"

namespace narad::cli::bench {
namespace {

net::HttpResponse answer(int status, std::string body = "") {
    net::HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    return r;
}

// Rule: keys rotate over --keys distinct values; no keys means none are sent.
TEST(BenchRequests, KeysAndProduceTargets) {
    EXPECT_EQ(message_key(7, 0), "");
    EXPECT_EQ(message_key(7, 3), "k1");
    EXPECT_EQ(produce_target("t", ""), "/v1/topics/t/produce");
    EXPECT_EQ(produce_target("t", "k1"), "/v1/topics/t/produce?key=k1");
    EXPECT_EQ(produce_target("t", "", 2), "/v1/topics/t/produce?partition=2");
}

// Rule: a batch produce embeds each payload as a JSON value, with its key when there is one.
TEST(BenchRequests, BatchProduceBody) {
    const std::string body = produce_batch_body({"{\"a\":1}", "{\"b\":2}"}, {"k0", ""});
    EXPECT_EQ(body,
              "{\"messages\":[{\"payload\":{\"a\":1},\"key\":\"k0\"},{\"payload\":{\"b\":2}}]}");
    EXPECT_TRUE(is_valid_json(body));
    EXPECT_EQ(produce_batch_body({"1", "2"}, {}, 2),
              "{\"messages\":[{\"payload\":1,\"partition\":2},{\"payload\":2,\"partition\":2}]}");
    EXPECT_EQ(parse_accepted("{\"accepted\":2}\n"), 2u);
    EXPECT_FALSE(parse_accepted("{}").has_value());
    EXPECT_FALSE(parse_accepted("{\"accepted\":-1}").has_value());
}

// Rule: consume uses ?wait (and ?max only for batches); answers parse to payload + handle.
TEST(BenchRequests, ConsumeTargetsAndDeliveries) {
    EXPECT_EQ(consume_target("t", 1, "2s"), "/v1/topics/t/consume?wait=2s");
    EXPECT_EQ(consume_target("t", 100, "2s"), "/v1/topics/t/consume?wait=2s&max=100");
    EXPECT_EQ(consume_target("t", 1000, "2s"), "/v1/topics/t/consume?wait=2s&max=100");
    auto single = parse_deliveries(
        R"({"topic":"t","partition":0,"offset":3,"payload":{"x":1},"timestamp":1,"receipt_handle":"0:3:1"})",
        Shape::single);
    ASSERT_TRUE(single.has_value());
    ASSERT_EQ(single->size(), 1u);
    EXPECT_EQ((*single)[0].payload, "{\"x\":1}");
    EXPECT_EQ((*single)[0].receipt_handle, "0:3:1");
    auto batch = parse_deliveries(
        R"({"messages":[{"payload":1,"receipt_handle":"0:1:1"},{"payload":"s","receipt_handle":"1:1:1"}]})",
        Shape::batch);
    ASSERT_TRUE(batch.has_value());
    ASSERT_EQ(batch->size(), 2u);
    EXPECT_EQ((*batch)[1].payload, "\"s\"");
    EXPECT_FALSE(parse_deliveries("{\"messages\":5}", Shape::batch).has_value());
    EXPECT_FALSE(parse_deliveries("garbage", Shape::single).has_value());
}

// Rule: acks go one by one to /ack or together to /ack/batch, whose per-handle results parse.
TEST(BenchRequests, AckShapes) {
    EXPECT_EQ(ack_target("t", "0:3:1"), "/v1/topics/t/ack?receipt_handle=0%3A3%3A1");
    EXPECT_EQ(ack_batch_target("t"), "/v1/topics/t/ack/batch");
    EXPECT_EQ(ack_batch_body({"0:1:1", "1:2:1"}), "{\"receipt_handles\":[\"0:1:1\",\"1:2:1\"]}");
    auto results = parse_ack_results(
        R"({"results":[{"receipt_handle":"0:1:1","status":204},{"receipt_handle":"1:2:1","status":410,"error":"x"}]})");
    ASSERT_TRUE(results.has_value());
    ASSERT_EQ(results->size(), 2u);
    EXPECT_EQ((*results)[1].receipt_handle, "1:2:1");
    EXPECT_EQ((*results)[1].status, 410);
}

// Rule: consumers run while producers do, then stop when this run's messages are all consumed,
// after two empty polls in a row, or at the drain timeout.
TEST(DrainState, StopsOnlyAfterProducersFinish) {
    DrainState s;
    s.produced_ok = 100;
    s.consumed_run = 100;
    s.empty_polls = 5;
    EXPECT_FALSE(should_stop_consuming(s));
    s.producers_done = true;
    EXPECT_TRUE(should_stop_consuming(s));
    s.consumed_run = 50;
    EXPECT_TRUE(should_stop_consuming(s));  // two empty polls
    s.empty_polls = 1;
    s.drain_timeout_ns = 10;
    s.producers_done_at_ns = 100;
    s.now_ns = 105;
    EXPECT_FALSE(should_stop_consuming(s));
    s.now_ns = 110;
    EXPECT_TRUE(should_stop_consuming(s));
}

// Rule: in count mode producers issue ceil(count/batch) requests, the last one partial, then
// close; accepted messages and failures by status are counted.
TEST(ProduceWorkload, IssuesCountMessagesInBatches) {
    BenchConfig config;
    config.topic = "t";
    config.count = 25;
    config.batch = 10;
    config.keys = 2;
    const BenchPayload payload(64, "abcdabcd");
    ProduceWorkload producers(config, payload, mono_ns());
    std::vector<net::LoadRequest> requests;
    while (auto request = producers.next(0)) requests.push_back(std::move(*request));
    ASSERT_EQ(requests.size(), 3u);
    EXPECT_EQ(requests[0].target, "/v1/topics/t/produce/batch");
    EXPECT_EQ(requests[0].content_type, "application/json");
    auto messages = array_elements(*find_member(*object_members(requests[2].body), "messages"));
    ASSERT_TRUE(messages.has_value());
    EXPECT_EQ(messages->size(), 5u);
    requests[0].on_response(answer(202, "{\"accepted\":10}"));
    requests[1].on_response(answer(503, "{\"error\":\"x\"}"));
    requests[2].on_response(Status(Errc::peer_error, "reset"));
    EXPECT_EQ(producers.stats().ok(), 10u);
    EXPECT_EQ(producers.stats().failed(), 15u);
    const std::map<std::string, uint64_t> errors{{"503", 1}, {"transport", 1}};
    EXPECT_EQ(producers.stats().errors(), errors);
}

// Rule: single-message produce posts the raw payload, of exactly --size bytes, with its key.
TEST(ProduceWorkload, SingleMessagesPostRawPayload) {
    BenchConfig config;
    config.topic = "t";
    config.count = 2;
    config.keys = 5;
    const BenchPayload payload(100, "abcdabcd");
    ProduceWorkload producers(config, payload, mono_ns());
    auto first = producers.next(0);
    auto second = producers.next(1);
    ASSERT_TRUE(first && second);
    EXPECT_FALSE(producers.next(0).has_value());
    EXPECT_EQ(first->target, "/v1/topics/t/produce?key=k0");
    EXPECT_EQ(second->target, "/v1/topics/t/produce?key=k1");
    EXPECT_EQ(first->body.size(), 100u);
    EXPECT_TRUE(payload.sent_at(first->body).has_value());
    first->on_response(answer(202));
    EXPECT_EQ(producers.stats().ok(), 1u);
}

// Rule: a consumer connection acks what it received before polling again, records end-to-end
// latency for this run's messages, retries failed acks and counts a 410 as lapsed.
TEST(ConsumeWorkload, ConsumesThenAcksWithRetry) {
    BenchConfig config;
    config.topic = "t";
    config.ack_policy.backoff_step = std::chrono::milliseconds(0);
    const BenchPayload payload(64, "abcdabcd");
    ConsumeWorkload consumers(config, payload, 1);

    auto poll = consumers.next(0);
    ASSERT_TRUE(poll.has_value());
    EXPECT_EQ(poll->method, "GET");
    EXPECT_EQ(poll->target, "/v1/topics/t/consume?wait=2s");
    const std::string mine = payload.make(wall_ns() - 5'000'000);
    poll->on_response(answer(200, "{\"topic\":\"t\",\"partition\":0,\"offset\":0,\"payload\":" +
                                      mine + ",\"timestamp\":1,\"receipt_handle\":\"0:0:1\"}"));
    EXPECT_EQ(consumers.received(), 1u);
    EXPECT_EQ(consumers.received_run(), 1u);
    EXPECT_EQ(consumers.end_to_end().count(), 1u);
    EXPECT_GE(consumers.end_to_end().max(), 5'000'000);

    auto ack = consumers.next(0);
    ASSERT_TRUE(ack.has_value());
    EXPECT_EQ(ack->method, "POST");
    EXPECT_EQ(ack->target, "/v1/topics/t/ack?receipt_handle=0%3A0%3A1");
    ack->on_response(answer(503, "{\"error\":\"acked-ahead set is full\"}"));
    auto retry = consumers.next(0);
    ASSERT_TRUE(retry.has_value());
    EXPECT_EQ(retry->target, ack->target);
    retry->on_response(answer(204));
    EXPECT_EQ(consumers.ack_stats().ok(), 1u);

    auto poll2 = consumers.next(0);
    ASSERT_TRUE(poll2.has_value());
    poll2->on_response(answer(200, "{\"payload\":{\"other\":1},\"receipt_handle\":\"0:1:1\"}"));
    EXPECT_EQ(consumers.received(), 2u);
    EXPECT_EQ(consumers.received_run(), 1u);  // not this run's message
    auto ack2 = consumers.next(0);
    ASSERT_TRUE(ack2.has_value());
    ack2->on_response(answer(410, "{\"error\":\"gone\"}"));
    EXPECT_EQ(consumers.lapsed(), 1u);

    // Producers done with one message, and this run's one message consumed: the connection closes.
    consumers.producers_finished(1);
    EXPECT_FALSE(consumers.next(0).has_value());
}

// Rule: batched consumers ask for --batch messages and ack them together via /ack/batch,
// retrying only the handles that failed.
TEST(ConsumeWorkload, BatchAcksRetryOnlyFailedHandles) {
    BenchConfig config;
    config.topic = "t";
    config.batch = 3;
    config.ack_policy.backoff_step = std::chrono::milliseconds(0);
    const BenchPayload payload(64, "abcdabcd");
    ConsumeWorkload consumers(config, payload, 1);
    auto poll = consumers.next(0);
    ASSERT_TRUE(poll.has_value());
    EXPECT_EQ(poll->target, "/v1/topics/t/consume?wait=2s&max=3");
    poll->on_response(answer(
        200,
        R"({"messages":[{"payload":1,"receipt_handle":"a"},{"payload":2,"receipt_handle":"b"},{"payload":3,"receipt_handle":"c"}]})"));
    auto ack = consumers.next(0);
    ASSERT_TRUE(ack.has_value());
    EXPECT_EQ(ack->target, "/v1/topics/t/ack/batch");
    EXPECT_EQ(ack->body, "{\"receipt_handles\":[\"a\",\"b\",\"c\"]}");
    ack->on_response(answer(
        200,
        R"({"results":[{"receipt_handle":"a","status":204},{"receipt_handle":"b","status":503},{"receipt_handle":"c","status":410}]})"));
    EXPECT_EQ(consumers.ack_stats().ok(), 1u);
    EXPECT_EQ(consumers.lapsed(), 1u);
    auto retry = consumers.next(0);
    ASSERT_TRUE(retry.has_value());
    EXPECT_EQ(retry->body, "{\"receipt_handles\":[\"b\"]}");
    retry->on_response(answer(200, R"({"results":[{"receipt_handle":"b","status":204}]})"));
    EXPECT_EQ(consumers.ack_stats().ok(), 2u);
    EXPECT_EQ(consumers.ack_failed(), 0u);
}

// Rule: an ack that keeps failing is given up after the policy's attempts and counted.
TEST(ConsumeWorkload, GivesUpAckAfterMaxAttempts) {
    BenchConfig config;
    config.topic = "t";
    config.ack_policy.backoff_step = std::chrono::milliseconds(0);
    config.ack_policy.max_attempts = 2;
    const BenchPayload payload(64, "abcdabcd");
    ConsumeWorkload consumers(config, payload, 1);
    auto poll = consumers.next(0);
    poll->on_response(answer(200, R"({"payload":1,"receipt_handle":"h"})"));
    auto first = consumers.next(0);
    first->on_response(Status(Errc::peer_error, "reset"));
    auto second = consumers.next(0);
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(second->method, "POST");
    second->on_response(answer(500));
    EXPECT_EQ(consumers.ack_failed(), 1u);
    const std::map<std::string, uint64_t> errors{{"500", 1}};
    EXPECT_EQ(consumers.ack_stats().errors(), errors);
    auto next = consumers.next(0);
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(next->method, "GET");  // back to polling
}

}  // namespace
}  // namespace narad::cli::bench
