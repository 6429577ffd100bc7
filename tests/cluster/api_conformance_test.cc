// Walks every route and status code of Narad's /v1 API (notes/narad-go.md) against a real node.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "cluster/harness.h"

namespace narad::testing {
namespace {

using nlohmann::json;

class ApiConformanceTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir();
        node_ = new NodeProcess(dir_->path() + "/data", {});
        node_->start();
    }
    static void TearDownTestSuite() {
        EXPECT_EQ(node_->stop(), 0);
        delete node_;
        delete dir_;
    }

    net::HttpResponse call(std::string_view method, std::string_view target,
                           std::string_view body = {},
                           std::string_view content_type = "application/json") {
        auto response = client_.request(method, target, body, content_type);
        EXPECT_TRUE(response.is_ok()) << response.status().to_string();
        return response.is_ok() ? *response : net::HttpResponse{};
    }
    static std::string error_of(const net::HttpResponse& response) {
        auto body = json::parse(response.body, nullptr, false);
        return body.is_object() && body.contains("error") ? body["error"].get<std::string>() : "";
    }
    static std::string header(const net::HttpResponse& response, std::string_view name) {
        for (const auto& [key, value] : response.headers) {
            if (key == name) return value;
        }
        return "";
    }
    void create(const std::string& body) {
        auto response = call("POST", "/v1/topics", body);
        ASSERT_EQ(response.status, 201) << response.body;
    }
    json consume_one(const std::string& topic, const std::string& extra = "") {
        auto response = call("GET", "/v1/topics/" + topic + "/consume?wait=2s" + extra);
        EXPECT_EQ(response.status, 200) << response.body;
        return json::parse(response.body, nullptr, false);
    }

    static TempDir* dir_;
    static NodeProcess* node_;
    net::HttpClient client_ = node_->client();
};

TempDir* ApiConformanceTest::dir_ = nullptr;
NodeProcess* ApiConformanceTest::node_ = nullptr;

// Rule: health, readiness and metrics answer without auth in Narad's shapes.
TEST_F(ApiConformanceTest, HealthReadinessAndMetrics) {
    auto health = call("GET", "/healthz");
    EXPECT_EQ(health.status, 200);
    EXPECT_EQ(health.body, "{\"status\":\"ok\"}\n");
    auto ready = call("GET", "/readyz");
    EXPECT_EQ(ready.status, 200);
    EXPECT_EQ(ready.body, "{\"status\":\"ready\"}\n");
    auto metrics = call("GET", "/metrics");
    EXPECT_EQ(metrics.status, 200);
    EXPECT_NE(metrics.body.find("narad_http_requests_total{route=\"GET /healthz\""),
              std::string::npos);
}

// Rule: create answers 201 with the topic (no role key for a standalone create) and applies
// defaults.
TEST_F(ApiConformanceTest, CreateTopic) {
    auto response = call("POST", "/v1/topics", R"({"name":"create-a","partitions":4})");
    ASSERT_EQ(response.status, 201) << response.body;
    json topic = json::parse(response.body);
    EXPECT_EQ(topic["name"], "create-a");
    EXPECT_EQ(topic["partitions"], 4);
    EXPECT_EQ(topic["retention_ms"], 604800000);
    EXPECT_EQ(topic["visibility_timeout_ms"], 30000);
    EXPECT_EQ(topic["max_in_flight_per_partition"], 1024);
    EXPECT_EQ(topic["max_acked_ahead_per_partition"], 1024);
    EXPECT_TRUE(topic["created_at"].is_number());
    EXPECT_FALSE(topic.contains("role"));
    EXPECT_FALSE(topic.contains("schema"));
    EXPECT_EQ(response.body.back(), '\n');
}

// Rule: create refuses bad input with 400/404/409/413 and Narad's texts, and creates nothing.
TEST_F(ApiConformanceTest, CreateTopicErrors) {
    struct Case {
        std::string body;
        int status;
        std::string error;
    };
    std::vector<Case> cases = {
        {"", 400, "invalid json: EOF"},
        {R"({"name":"x","bogus":1})", 400, "invalid json: json: unknown field \"bogus\""},
        {R"({"name":"../etc"})", 400,
         "invalid argument: topic name must match ^[A-Za-z0-9._-]{1,255}$"},
        {R"({"name":".."})", 400, "invalid argument: topic name must not be \"..\""},
        {R"({"name":""})", 400, "invalid argument: name required"},
        {R"({"name":"x","partitions":2})", 400,
         "invalid argument: partitions must be >= 3 (0 = use default)"},
        {R"({"name":"x","partitions":500})", 400,
         "invalid argument: partitions (500) exceeds topic.max_partitions (108)"},
        {R"({"name":"x","retention_ms":5})", 400,
         "invalid argument: retention_ms (5) is below the minimum of 3600000 (1 hour)"},
        {R"({"name":"x","parent":"no-such"})", 404, "topic not found"},
        {R"({"name":"x","fanout_delay_ms":5})", 400,
         "invalid argument: fanout_delay_ms requires parent"},
    };
    for (const auto& c : cases) {
        auto response = call("POST", "/v1/topics", c.body);
        EXPECT_EQ(response.status, c.status) << c.body;
        EXPECT_EQ(error_of(response), c.error) << c.body;
    }
    create(R"({"name":"dup"})");
    auto again = call("POST", "/v1/topics", R"({"name":"dup"})");
    EXPECT_EQ(again.status, 409);
    EXPECT_EQ(error_of(again), "topic already exists");
    auto huge = call("POST", "/v1/topics", std::string((1 << 20) + 1, ' '));
    EXPECT_EQ(huge.status, 413);
    EXPECT_EQ(error_of(huge), "request body too large");
    EXPECT_EQ(call("GET", "/v1/topics/x").status, 404);
}

// Rule: list pages by name with next_page_token, clamps the limit, refuses a bad one.
TEST_F(ApiConformanceTest, ListTopicsPages) {
    for (const char* name : {"page-a", "page-b", "page-c"}) {
        create(std::string(R"({"name":")") + name + "\"}");
    }
    auto first = json::parse(call("GET", "/v1/topics?limit=2&page_token=page-").body);
    ASSERT_EQ(first["topics"].size(), 2u);
    EXPECT_EQ(first["topics"][0]["name"], "page-a");
    EXPECT_EQ(first["next_page_token"], "page-b");
    EXPECT_EQ(first["topics"][0]["role"], "standalone");
    auto second = json::parse(call("GET", "/v1/topics?limit=2&page_token=page-b").body);
    EXPECT_EQ(second["topics"][0]["name"], "page-c");
    auto bad = call("GET", "/v1/topics?limit=0");
    EXPECT_EQ(bad.status, 400);
    EXPECT_EQ(error_of(bad), "limit must be a positive integer");
    EXPECT_EQ(call("GET", "/v1/topics?limit=5000").status, 200);
}

// Rule: GET returns the topic with partition_stats; `partition` narrows it; errors as Narad.
TEST_F(ApiConformanceTest, GetTopicWithStats) {
    create(R"({"name":"stats","partitions":3})");
    ASSERT_EQ(call("POST", "/v1/topics/stats/produce?partition=1", "hello", "text/plain").status,
              202);
    ASSERT_TRUE(eventually([&] {
        auto body = json::parse(call("GET", "/v1/topics/stats?partition=1").body);
        return body["partition_stats"][0]["high_watermark"] == 1;
    }));
    auto body = json::parse(call("GET", "/v1/topics/stats").body);
    ASSERT_EQ(body["partition_stats"].size(), 3u);
    json p1 = body["partition_stats"][1];
    EXPECT_EQ(p1["index"], 1);
    EXPECT_EQ(p1["segments"], 1);
    EXPECT_EQ(p1["oldest_offset"], 0);
    EXPECT_EQ(p1["next_offset"], 1);
    EXPECT_GT(p1["size_bytes"].get<int>(), 0);
    EXPECT_TRUE(p1.contains("oldest_segment_at"));
    EXPECT_EQ(p1["owner_node"], "n1");
    EXPECT_EQ(body["role"], "standalone");
    EXPECT_EQ(error_of(call("GET", "/v1/topics/stats?partition=3")), "invalid partition");
    EXPECT_EQ(call("GET", "/v1/topics/stats?partition=x").status, 400);
    EXPECT_EQ(error_of(call("GET", "/v1/topics/none?partition=x")), "topic not found");
}

// Rule: PATCH changes only the allowed fields, grows partitions only, refuses visibility.
TEST_F(ApiConformanceTest, PatchTopic) {
    create(R"({"name":"patch","partitions":3})");
    auto grown = call("PATCH", "/v1/topics/patch", R"({"partitions":5,"retention_ms":7200000})");
    ASSERT_EQ(grown.status, 200) << grown.body;
    EXPECT_EQ(json::parse(grown.body)["partitions"], 5);
    EXPECT_EQ(json::parse(grown.body)["retention_ms"], 7200000);
    auto visibility = call("PATCH", "/v1/topics/patch", R"({"visibility_timeout_ms":1})");
    EXPECT_EQ(visibility.status, 400);
    EXPECT_EQ(error_of(visibility), "invalid json: json: unknown field \"visibility_timeout_ms\"");
    EXPECT_EQ(call("PATCH", "/v1/topics/patch", "{}").status, 400);
    auto shrink = call("PATCH", "/v1/topics/patch", R"({"partitions":4})");
    EXPECT_EQ(shrink.status, 400);
    EXPECT_NE(error_of(shrink).find("decrease is not supported"), std::string::npos);
    EXPECT_EQ(call("PATCH", "/v1/topics/none", R"({"partitions":4})").status, 404);
}

// Rule: DELETE removes the topic and its data; a recreated name starts empty.
TEST_F(ApiConformanceTest, DeleteAndRecreateStartsEmpty) {
    create(R"({"name":"reborn"})");
    ASSERT_EQ(call("POST", "/v1/topics/reborn/produce?partition=0", "old", "text/plain").status,
              202);
    ASSERT_EQ(consume_one("reborn")["payload"], "old");
    EXPECT_EQ(call("DELETE", "/v1/topics/reborn").status, 204);
    EXPECT_EQ(call("DELETE", "/v1/topics/reborn").status, 404);
    EXPECT_EQ(call("GET", "/v1/topics/reborn").status, 404);
    create(R"({"name":"reborn"})");
    auto stats = json::parse(call("GET", "/v1/topics/reborn").body);
    for (const auto& p : stats["partition_stats"]) EXPECT_EQ(p["high_watermark"], 0);
    auto replay = call("GET", "/v1/topics/reborn/consume?partition=0&offset=0");
    EXPECT_EQ(replay.status, 204);
}

// Rule: produce answers 202 with an empty body once durable; its errors follow Narad's order.
TEST_F(ApiConformanceTest, ProduceStatuses) {
    create(R"({"name":"prod","partitions":3})");
    auto accepted = call("POST", "/v1/topics/prod/produce?key=a", "x", "text/plain");
    EXPECT_EQ(accepted.status, 202);
    EXPECT_TRUE(accepted.body.empty());
    EXPECT_EQ(header(accepted, "content-type"), "");
    auto empty = call("POST", "/v1/topics/missing/produce", "", "text/plain");
    EXPECT_EQ(empty.status, 400);  // body checked before the topic
    EXPECT_EQ(error_of(empty), "message required");
    EXPECT_EQ(error_of(call("POST", "/v1/topics/missing/produce", "x", "text/plain")),
              "topic not found");
    EXPECT_EQ(error_of(call("POST", "/v1/topics/prod/produce?key=a&key=b", "x", "text/plain")),
              "duplicate key query parameter");
    EXPECT_EQ(error_of(call("POST", "/v1/topics/prod/produce?partition=3", "x", "text/plain")),
              "invalid argument: partition out of range");
    EXPECT_EQ(call("POST", "/v1/topics/prod/produce", std::string((1 << 20) + 1, 'x'), "text/plain")
                  .status,
              413);
    auto batch = call("POST", "/v1/topics/prod/produce/batch",
                      R"({"messages":[{"payload":1},{"payload":"two","key":"k"}]})");
    EXPECT_EQ(batch.status, 202);
    EXPECT_EQ(json::parse(batch.body)["accepted"], 2);
    EXPECT_EQ(call("POST", "/v1/topics/prod/produce/batch", R"({"messages":[{}]})").status, 400);
}

// Rule: a topic's JSON Schema is enforced on produce (400) and unchanged topics are unaffected.
TEST_F(ApiConformanceTest, SchemaIsEnforcedOnProduce) {
    create(R"({"name":"typed","schema":{"type":"object","required":["id"]}})");
    EXPECT_EQ(call("POST", "/v1/topics/typed/produce", R"({"id":1})", "application/json").status,
              202);
    auto refused = call("POST", "/v1/topics/typed/produce", R"({"x":1})", "application/json");
    EXPECT_EQ(refused.status, 400);
    EXPECT_NE(error_of(refused).find("invalid argument: schema:"), std::string::npos);
}

// Rule: payloads come back as produced: JSON verbatim, text as a string, binary as base64.
TEST_F(ApiConformanceTest, PayloadsComeBackAsProduced) {
    create(R"({"name":"payloads","partitions":3})");
    std::string binary("\x00\xff\x10", 3);
    ASSERT_EQ(call("POST", "/v1/topics/payloads/produce?partition=0&key=k1", R"( {"a": [1, 2]} )",
                   "application/json")
                  .status,
              202);
    ASSERT_EQ(call("POST", "/v1/topics/payloads/produce?partition=1", "plain <text>", "text/plain")
                  .status,
              202);
    ASSERT_EQ(
        call("POST", "/v1/topics/payloads/produce?partition=2", binary, "application/octet-stream")
            .status,
        202);
    auto json_message = call("GET", "/v1/topics/payloads/consume?partition=0&wait=2s");
    ASSERT_EQ(json_message.status, 200);
    EXPECT_NE(json_message.body.find(R"("payload": {"a": [1, 2]} ,)"), std::string::npos)
        << json_message.body;
    json m0 = json::parse(json_message.body);
    EXPECT_EQ(m0["key"], "k1");
    EXPECT_EQ(m0["offset"], 0);
    EXPECT_TRUE(m0["timestamp"].get<int64_t>() > 1'600'000'000);  // Unix seconds
    EXPECT_TRUE(m0["timestamp"].get<int64_t>() < 100'000'000'000);
    json m1 = consume_one("payloads", "&partition=1");
    EXPECT_EQ(m1["payload"], "plain <text>");
    EXPECT_FALSE(m1.contains("payload_encoding"));
    EXPECT_TRUE(m1.contains("key"));  // a generated one, as Narad
    json m2 = consume_one("payloads", "&partition=2");
    EXPECT_EQ(m2["payload"], "AP8Q");
    EXPECT_EQ(m2["payload_encoding"], "base64");
}

// Rule: replay reads without reserving; past the HWM is 204; it needs a partition.
TEST_F(ApiConformanceTest, Replay) {
    create(R"({"name":"replay","partitions":3})");
    ASSERT_EQ(call("POST", "/v1/topics/replay/produce?partition=0", "r0", "text/plain").status,
              202);
    ASSERT_TRUE(eventually([&] {
        return call("GET", "/v1/topics/replay/consume?partition=0&offset=0").status == 200;
    }));
    json message = json::parse(call("GET", "/v1/topics/replay/consume?partition=0&offset=0").body);
    EXPECT_EQ(message["payload"], "r0");
    EXPECT_FALSE(message.contains("receipt_handle"));
    EXPECT_EQ(call("GET", "/v1/topics/replay/consume?partition=0&offset=1").status, 204);
    auto no_partition = call("GET", "/v1/topics/replay/consume?offset=0");
    EXPECT_EQ(no_partition.status, 400);
    EXPECT_EQ(error_of(no_partition), "partition required for replay-mode consume");
    EXPECT_EQ(error_of(call("GET", "/v1/topics/replay/consume?wait=5")),
              "invalid wait: time: missing unit in duration \"5\"");
    EXPECT_EQ(error_of(call("GET", "/v1/topics/nope/consume")), "topic not found");
    EXPECT_EQ(call("GET", "/v1/topics/replay/consume?partition=1").status, 204);
    // Still deliverable in queue mode: replay reserved nothing.
    EXPECT_EQ(consume_one("replay", "&partition=0")["payload"], "r0");
}

// Rule: ack, extend and nack answer 204; a stale or repeated handle 410; malformed 400.
TEST_F(ApiConformanceTest, AckExtendNack) {
    create(R"({"name":"acks","partitions":3})");
    ASSERT_EQ(call("POST", "/v1/topics/acks/produce?partition=0", "m", "text/plain").status, 202);
    json first = consume_one("acks");
    std::string handle = first["receipt_handle"];
    EXPECT_EQ(call("POST", "/v1/topics/acks/ack?receipt_handle=" + handle + "&extend=true").status,
              204);
    EXPECT_EQ(call("POST", "/v1/topics/acks/ack?receipt_handle=" + handle + "&extend=0").status,
              204);
    json again = consume_one("acks");  // nacked: delivered again at once
    EXPECT_EQ(again["offset"], first["offset"]);
    std::string second = again["receipt_handle"];
    EXPECT_NE(second, handle);
    auto stale = call("POST", "/v1/topics/acks/ack?receipt_handle=" + handle);
    EXPECT_EQ(stale.status, 410);
    EXPECT_EQ(error_of(stale), "receipt handle no longer matches an active reservation");
    EXPECT_EQ(call("POST", "/v1/topics/acks/ack?receipt_handle=" + second).status, 204);
    EXPECT_EQ(call("POST", "/v1/topics/acks/ack?receipt_handle=" + second).status, 410);
    EXPECT_EQ(error_of(call("POST", "/v1/topics/acks/ack?receipt_handle=zz")),
              "receipt handle is malformed");
    EXPECT_EQ(error_of(call("POST", "/v1/topics/acks/ack")), "receipt_handle required");
    EXPECT_EQ(call("POST", "/v1/topics/acks/ack?receipt_handle=1:2:3&extend=yes").status, 400);
    EXPECT_EQ(call("GET", "/v1/topics/acks/consume").status, 204);
}

// Rule: the in-flight cap makes consume answer 204; the acked-ahead cap makes ack answer 503 and
// consume then serve only the message blocking the frontier.
TEST_F(ApiConformanceTest, FlowControlCaps) {
    create(R"({"name":"caps","partitions":3,"max_in_flight_per_partition":3,)"
           R"("max_acked_ahead_per_partition":1})");
    for (int i = 0; i < 4; ++i) {
        ASSERT_EQ(call("POST", "/v1/topics/caps/produce?partition=0", "m" + std::to_string(i),
                       "text/plain")
                      .status,
                  202);
    }
    ASSERT_TRUE(eventually([&] {
        auto body = json::parse(call("GET", "/v1/topics/caps?partition=0").body);
        return body["partition_stats"][0]["high_watermark"] == 4;
    }));
    json m0 = consume_one("caps", "&partition=0");
    json m1 = consume_one("caps", "&partition=0");
    json m2 = consume_one("caps", "&partition=0");
    EXPECT_EQ(call("GET", "/v1/topics/caps/consume?partition=0").status, 204);  // in-flight full
    std::string h1 = m1["receipt_handle"], h2 = m2["receipt_handle"], h0 = m0["receipt_handle"];
    EXPECT_EQ(call("POST", "/v1/topics/caps/ack?receipt_handle=" + h1).status, 204);
    auto full = call("POST", "/v1/topics/caps/ack?receipt_handle=" + h2);
    EXPECT_EQ(full.status, 503);
    EXPECT_EQ(error_of(full), "acked-ahead set is full; head of queue may be stuck");
    // Only the head may be delivered while the window is full; it is still leased, so nothing.
    EXPECT_EQ(call("GET", "/v1/topics/caps/consume?partition=0").status, 204);
    EXPECT_EQ(call("POST", "/v1/topics/caps/ack?receipt_handle=" + h0).status, 204);
    EXPECT_EQ(call("POST", "/v1/topics/caps/ack?receipt_handle=" + h2).status, 204);
    EXPECT_EQ(consume_one("caps", "&partition=0")["offset"], 3);
}

// Rule: batch consume and batch ack carry many messages and a status per handle.
TEST_F(ApiConformanceTest, BatchConsumeAndAck) {
    create(R"({"name":"batches","partitions":3})");
    json body = {{"messages", json::array()}};
    for (int i = 0; i < 30; ++i) body["messages"].push_back({{"payload", {{"i", i}}}});
    ASSERT_EQ(call("POST", "/v1/topics/batches/produce/batch", body.dump()).status, 202);
    std::set<int> seen;
    json handles = json::array();
    ASSERT_TRUE(eventually([&] {
        auto response = call("GET", "/v1/topics/batches/consume?max=100&wait=200ms");
        if (response.status == 200) {
            json page = json::parse(response.body);
            for (const auto& m : page["messages"]) {
                seen.insert(m["payload"]["i"].get<int>());
                handles.push_back(m["receipt_handle"]);
            }
        }
        return seen.size() == 30;
    })) << "saw "
        << seen.size() << " of 30";
    handles.push_back("0:999:1");
    handles.push_back("garbage");
    auto acked =
        call("POST", "/v1/topics/batches/ack/batch", json{{"receipt_handles", handles}}.dump());
    ASSERT_EQ(acked.status, 200);
    auto results = json::parse(acked.body)["results"];
    ASSERT_EQ(results.size(), 32u);
    for (int i = 0; i < 30; ++i) EXPECT_EQ(results[i]["status"], 204);
    EXPECT_EQ(results[30]["status"], 410);
    EXPECT_EQ(results[31]["status"], 400);
    EXPECT_EQ(call("GET", "/v1/topics/batches/consume?max=10").status, 204);
}

// Rule: a long-poll is answered as soon as a message arrives.
TEST_F(ApiConformanceTest, LongPollWakesOnProduce) {
    create(R"({"name":"poll","partitions":3})");
    std::thread producer([&] {
        auto other = node_->client();
        // Produce once the long-poll is parked (it shows in the in-flight gauge of HTTP requests).
        (void)eventually([&] {
            auto metrics = other.get("/metrics");
            return metrics.is_ok() &&
                   metrics->body.find("narad_http_requests_in_flight 2") != std::string::npos;
        });
        (void)other.post("/v1/topics/poll/produce", "wake", "text/plain");
    });
    auto response = call("GET", "/v1/topics/poll/consume?wait=10s");
    producer.join();
    ASSERT_EQ(response.status, 200);
    EXPECT_EQ(json::parse(response.body)["payload"], "wake");
}

// Rule: unknown paths are 404 text, wrong methods 405 with Allow, users 501, cluster routes work.
TEST_F(ApiConformanceTest, RoutingAndClusterRoutes) {
    auto missing = call("GET", "/v1/nope");
    EXPECT_EQ(missing.status, 404);
    EXPECT_EQ(missing.body, "404 page not found\n");
    auto wrong = call("PUT", "/v1/topics");
    EXPECT_EQ(wrong.status, 405);
    EXPECT_EQ(header(wrong, "allow"), "GET, HEAD, POST");
    EXPECT_EQ(call("GET", "/v1/users").status, 501);
    auto members = json::parse(call("GET", "/v1/cluster/members").body);
    ASSERT_EQ(members["members"].size(), 1u);
    EXPECT_EQ(members["members"][0]["id"], "n1");
    EXPECT_EQ(members["members"][0]["status"], "alive");
    EXPECT_EQ(json::parse(call("GET", "/v1/cluster/moves").body)["moves"].size(), 0u);
    EXPECT_EQ(call("POST", "/v1/cluster/members/other/decommission").status, 404);
    EXPECT_EQ(call("POST", "/v1/topics/x/children", R"({"child":"y"})").status, 501);
}

// Rule: garbage in bodies, paths and parameters never crashes the node nor causes a 5xx.
TEST_F(ApiConformanceTest, GarbageNeverCrashesTheNode) {
    create(R"({"name":"fuzz","partitions":3})");
    std::mt19937 random(12345);
    auto garbage = [&](size_t max) {
        std::string s(random() % max, '\0');
        for (char& c : s) c = static_cast<char>(random() % 256);
        return s;
    };
    const std::vector<std::pair<std::string, std::string>> routes = {
        {"POST", "/v1/topics"},
        {"PATCH", "/v1/topics/fuzz"},
        {"POST", "/v1/topics/fuzz/produce/batch"},
        {"POST", "/v1/topics/fuzz/ack/batch"},
        {"POST", "/v1/topics/fuzz/ack?receipt_handle="},
        {"GET", "/v1/topics/fuzz/consume?wait="},
        {"GET", "/v1/topics/fuzz/consume?partition="},
        {"POST", "/v1/topics/fuzz/produce?partition="},
    };
    for (int i = 0; i < 2000; ++i) {
        const auto& [method, route] = routes[random() % routes.size()];
        std::string target = route;
        if (target.back() == '=') target += net::url_encode(garbage(12));
        auto response = client_.request(method, target, garbage(300), "application/json");
        ASSERT_TRUE(response.is_ok()) << "node stopped answering at request " << i;
        EXPECT_LT(response->status, 500) << method << " " << target << ": " << response->body;
    }
    EXPECT_EQ(call("GET", "/healthz").status, 200);
}

}  // namespace
}  // namespace narad::testing
