// Walks every route and status code of Narad's /v1 API (notes/narad-go.md) against a real node.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "cluster/harness.h"

namespace narad::testing {
namespace {

using nlohmann::json;

class ApiConformanceTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { node_ = suite_.start(); }
    static void TearDownTestSuite() { suite_.stop(); }

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

    static SuiteNode suite_;
    static NodeProcess* node_;
    net::HttpClient client_ = node_->client();
};

SuiteNode ApiConformanceTest::suite_;
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
    // The incarnation id: 16 hex digits, the same on every read.
    std::string id = topic["id"];
    EXPECT_EQ(id.size(), 16u);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
    EXPECT_EQ(json::parse(call("GET", "/v1/topics/create-a").body)["id"], id);
}

// Rule: retention_ms 0 keeps messages forever and is echoed as 0, on create and on PATCH; an
// absent retention_ms takes the server default.
TEST_F(ApiConformanceTest, RetentionZeroMeansForever) {
    auto forever = call("POST", "/v1/topics", R"({"name":"forever","retention_ms":0})");
    ASSERT_EQ(forever.status, 201) << forever.body;
    EXPECT_EQ(json::parse(forever.body)["retention_ms"], 0);
    EXPECT_EQ(json::parse(call("GET", "/v1/topics/forever").body)["retention_ms"], 0);
    create(R"({"name":"later-forever"})");
    auto patched = call("PATCH", "/v1/topics/later-forever", R"({"retention_ms":0})");
    ASSERT_EQ(patched.status, 200) << patched.body;
    EXPECT_EQ(json::parse(patched.body)["retention_ms"], 0);
    auto negative = call("PATCH", "/v1/topics/later-forever", R"({"retention_ms":-1})");
    EXPECT_EQ(negative.status, 400);
    EXPECT_EQ(error_of(negative), "retention_ms must be >= 0 (0 = keep forever)");
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
         "invalid argument: topic name must match ^[A-Za-z0-9._-]{1,200}$"},
        {R"({"name":")" + std::string(201, 'n') + R"("})", 400,
         "invalid argument: topic name must match ^[A-Za-z0-9._-]{1,200}$"},
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
    auto cased = call("POST", "/v1/topics", R"({"name":"DUP"})");
    EXPECT_EQ(cased.status, 409);
    EXPECT_EQ(error_of(cased),
              "topic name \"DUP\" differs only in letter case from the existing topic \"dup\"");
    EXPECT_EQ(call("GET", "/v1/topics/DUP").status, 404);
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

// Rule: DELETE removes the topic and its data; a recreated name starts empty, with a new id.
TEST_F(ApiConformanceTest, DeleteAndRecreateStartsEmpty) {
    create(R"({"name":"reborn"})");
    json first_id = json::parse(call("GET", "/v1/topics/reborn").body)["id"];
    ASSERT_EQ(call("POST", "/v1/topics/reborn/produce?partition=0", "old", "text/plain").status,
              202);
    ASSERT_EQ(consume_one("reborn")["payload"], "old");
    EXPECT_EQ(call("DELETE", "/v1/topics/reborn").status, 204);
    EXPECT_EQ(call("DELETE", "/v1/topics/reborn").status, 404);
    EXPECT_EQ(call("GET", "/v1/topics/reborn").status, 404);
    create(R"({"name":"reborn"})");
    auto stats = json::parse(call("GET", "/v1/topics/reborn").body);
    EXPECT_NE(stats["id"], first_id);  // a new incarnation
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

// Rule: schemas have versions: GET shows schema_version (0 without) and the current schema,
// GET …/schema the history oldest first; a PATCH registers a new version only for a compatible
// change (400 otherwise), honours schema_base_version (409), is idempotent for the same schema or
// an annotation-only change, and refuses `schema: null` (400) and an invalid schema (400).
TEST_F(ApiConformanceTest, SchemaVersions) {
    create(R"({"name":"versioned"})");
    auto plain = json::parse(call("GET", "/v1/topics/versioned").body);
    EXPECT_EQ(plain["schema_version"], 0);
    EXPECT_FALSE(plain.contains("schema"));
    EXPECT_EQ(json::parse(call("GET", "/v1/topics/versioned/schema").body),
              json::parse(R"({"topic":"versioned","version":0,"versions":[]})"));
    auto first = call("PATCH", "/v1/topics/versioned",
                      R"({"schema":{"type":"object","properties":{"qty":{"type":"integer"}}}})");
    ASSERT_EQ(first.status, 200) << first.body;
    EXPECT_EQ(json::parse(first.body)["schema_version"], 1);
    // Version 1 compiled and in force: a fraction is refused until a version widens it below.
    EXPECT_EQ(call("POST", "/v1/topics/versioned/produce", R"({"qty":1.5})").status, 400);
    auto narrower = call("PATCH", "/v1/topics/versioned",
                         R"({"schema":{"type":"object","properties":{"qty":{"type":"string"}}}})");
    EXPECT_EQ(narrower.status, 400);
    EXPECT_EQ(error_of(narrower),
              "invalid argument: schema incompatible with previous version: at /properties/qty: "
              "type \"integer\" no longer allowed");
    auto stale = call("PATCH", "/v1/topics/versioned",
                      R"({"schema_base_version":0,"schema":{"type":"object","properties":)"
                      R"({"qty":{"type":"number"}}}})");
    EXPECT_EQ(stale.status, 409);
    EXPECT_EQ(error_of(stale),
              "schema version conflict: schema_base_version 0 does not match the current version "
              "1 of \"versioned\"");
    auto wider = call("PATCH", "/v1/topics/versioned",
                      R"({"schema_base_version":1,"schema":{"type":"object","properties":)"
                      R"({"qty":{"type":"number"},"note":{"type":"string"}}}})");
    ASSERT_EQ(wider.status, 200) << wider.body;
    EXPECT_EQ(json::parse(wider.body)["schema_version"], 2);
    auto again = call("PATCH", "/v1/topics/versioned",
                      R"({"schema":{"title":"orders","properties":{"note":{"type":"string"},)"
                      R"("qty":{"type":"number"}},"type":"object"}})");
    ASSERT_EQ(again.status, 200) << again.body;
    EXPECT_EQ(json::parse(again.body)["schema_version"], 2);
    auto removed = call("PATCH", "/v1/topics/versioned", R"({"schema":null})");
    EXPECT_EQ(removed.status, 400);
    EXPECT_EQ(error_of(removed), "schema cannot be removed: a topic's schema may only be widened");
    auto invalid = call("PATCH", "/v1/topics/versioned", R"({"schema":false})");
    EXPECT_EQ(invalid.status, 400);
    EXPECT_EQ(error_of(invalid),
              "invalid argument: schema: a schema must be a JSON object or true");

    auto history = json::parse(call("GET", "/v1/topics/versioned/schema").body);
    EXPECT_EQ(history["topic"], "versioned");
    EXPECT_EQ(history["version"], 2);
    ASSERT_EQ(history["versions"].size(), 2u);
    EXPECT_EQ(history["versions"][0]["version"], 1);
    EXPECT_EQ(history["versions"][0]["schema"]["properties"]["qty"]["type"], "integer");
    EXPECT_EQ(history["versions"][1]["schema"]["properties"]["qty"]["type"], "number");
    auto got = json::parse(call("GET", "/v1/topics/versioned").body);
    EXPECT_EQ(got["schema_version"], 2);
    EXPECT_EQ(got["schema"], history["versions"][1]["schema"]);
    // The version in force validates produces: a number is now accepted for qty.
    EXPECT_EQ(call("POST", "/v1/topics/versioned/produce", R"({"qty":1.5})").status, 202);
    EXPECT_EQ(call("POST", "/v1/topics/versioned/produce", R"({"qty":"x"})").status, 400);
    EXPECT_EQ(call("GET", "/v1/topics/missing/schema").status, 404);
}

// Rule: a history of about 4 MiB (17 versions of 240 KiB) is stored, survives in the metastore and
// is served whole; the version past the per-topic budget gets 409 and changes nothing.
TEST_F(ApiConformanceTest, SchemaHistoryBudgetHoldsInTheMetastore) {
    std::string values;
    for (int i = 0; i < 22'000; ++i) {
        if (i > 0) values += ',';
        values += '"' + std::to_string(10'000'000 + i) + '"';
    }
    create(R"({"name":"wide-enum","schema":{"enum":[)" + values + "]}}");
    int version = 1;
    int status = 200;
    for (int extra = 0; extra < 40 && status == 200; ++extra) {
        values += ",\"x" + std::to_string(extra) + "\"";
        auto answer =
            call("PATCH", "/v1/topics/wide-enum", R"({"schema":{"enum":[)" + values + "]}}");
        status = answer.status;
        if (status == 200) {
            ++version;
        } else {
            EXPECT_EQ(status, 409) << answer.body;
            EXPECT_NE(error_of(answer).find("schema history budget exceeded"), std::string::npos)
                << error_of(answer);
        }
    }
    EXPECT_EQ(status, 409);
    EXPECT_GE(version, 17);
    auto history = json::parse(call("GET", "/v1/topics/wide-enum/schema").body);
    EXPECT_EQ(history["version"], version);
    EXPECT_EQ(history["versions"].size(), static_cast<size_t>(version));
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
    EXPECT_FALSE(m1.contains("key"));  // keyless is stored without a key (Narad 3.1)
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
    // Replays are not counted as consumed (Narad 3.0.1); a queue-mode delivery is.
    const std::string series = "narad_messages_consumed_total{topic=\"replay\",partition=\"0\"} 1";
    EXPECT_EQ(call("GET", "/metrics").body.find(series), std::string::npos);
    // Still deliverable in queue mode: replay reserved nothing.
    EXPECT_EQ(consume_one("replay", "&partition=0")["payload"], "r0");
    EXPECT_NE(call("GET", "/metrics").body.find(series), std::string::npos);
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

// Rule: the in-flight cap makes consume answer 204; past the acked-ahead cap an ack is still
// accepted, and consume then serves only the message blocking the frontier.
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
    // The window (1) is full, yet the next ack is accepted.
    EXPECT_EQ(call("POST", "/v1/topics/caps/ack?receipt_handle=" + h2).status, 204);
    // Only the head may be delivered while the window is full; it is still leased, so nothing,
    // though offset 3 waits and the in-flight cap has room.
    EXPECT_EQ(call("GET", "/v1/topics/caps/consume?partition=0").status, 204);
    EXPECT_EQ(call("POST", "/v1/topics/caps/ack?receipt_handle=" + h0).status, 204);
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
    auto acked = call("POST", "/v1/topics/batches/ack", json{{"receipt_handles", handles}}.dump());
    ASSERT_EQ(acked.status, 200);
    auto results = json::parse(acked.body)["results"];
    ASSERT_EQ(results.size(), 32u);
    for (int i = 0; i < 30; ++i) EXPECT_EQ(results[i]["status"], 204);
    EXPECT_EQ(results[30]["status"], 410);
    EXPECT_EQ(results[31]["status"], 400);
    EXPECT_EQ(call("GET", "/v1/topics/batches/consume?max=10").status, 204);
}

// A client that sends no X-Narad-Client header (a browser page, a bare curl).
net::HttpClient anonymous_client(const NodeProcess& node) {
    net::ClientOptions options;
    options.port = node.port();
    options.client_name.clear();
    options.basic_auth = node.credentials();
    return net::HttpClient(options);
}

// Rule (Narad 3.2): a batch payload is stored exactly as written and consumed as such (the JSON
// string "42" stays a string); base64 payloads and keys come back base64, marked with their
// encoding; a keyless message comes back with no key.
TEST_F(ApiConformanceTest, BatchProducePayloadsAndKeysComeBackAsSent) {
    create(R"({"name":"shapes","partitions":3})");
    // Pinned to one partition, so one consume sees them in order.
    std::string body =
        R"({"messages":[{"payload":"42","key":"text","partition":1},{"payload":42,"partition":1},)"
        R"({"payload":"AP8=","payload_encoding":"base64","key":"/wA=","key_encoding":"base64",)"
        R"("partition":1},{"payload":{"a":[1, 2]},"partition":1}]})";
    auto accepted = call("POST", "/v1/topics/shapes/produce/batch", body);
    ASSERT_EQ(accepted.status, 202) << accepted.body;
    EXPECT_EQ(json::parse(accepted.body)["accepted"], 4);
    auto response = call("GET", "/v1/topics/shapes/consume?max=10&partition=1&wait=2s");
    ASSERT_EQ(response.status, 200);
    json page = json::parse(response.body);
    ASSERT_EQ(page["messages"].size(), 4u) << response.body;
    EXPECT_EQ(page["messages"][0]["payload"], "42");
    EXPECT_EQ(page["messages"][0]["key"], "text");
    EXPECT_EQ(page["messages"][1]["payload"], 42);
    EXPECT_FALSE(page["messages"][1].contains("key"));
    EXPECT_EQ(page["messages"][2]["payload"], "AP8=");
    EXPECT_EQ(page["messages"][2]["payload_encoding"], "base64");
    EXPECT_EQ(page["messages"][2]["key"], "/wA=");
    EXPECT_EQ(page["messages"][2]["key_encoding"], "base64");
    EXPECT_NE(response.body.find(R"("payload":{"a":[1, 2]})"), std::string::npos);
}

// Rule (Narad 3.2): a batch takes up to 1,000 messages in up to 16 MiB, each up to 1 MiB; it is
// all or nothing, errors name the message, and the single produce's query parameters are
// refused.
TEST_F(ApiConformanceTest, BatchProduceLimits) {
    create(R"({"name":"limits","partitions":3})");
    auto batch = [](size_t n, const std::string& payload) {
        std::string out = R"({"messages":[)";
        for (size_t i = 0; i < n; ++i) out += (i ? "," : "") + (R"({"payload":)" + payload + "}");
        return out + "]}";
    };
    EXPECT_EQ(call("POST", "/v1/topics/limits/produce/batch", batch(1000, "1")).status, 202);
    auto too_many = call("POST", "/v1/topics/limits/produce/batch", batch(1001, "1"));
    EXPECT_EQ(too_many.status, 400);
    EXPECT_EQ(error_of(too_many), "too many messages: more than 1000 (max 1000)");
    // Sixteen near-1 MiB messages fit; one past 1 MiB is the single produce's 413.
    std::string near_mib = "\"" + std::string((1 << 20) - 64, 'x') + "\"";
    auto big = call("POST", "/v1/topics/limits/produce/batch", batch(15, near_mib));
    EXPECT_EQ(big.status, 202) << big.body;
    std::string over =
        R"({"messages":[{"payload":1},{"payload":")" + std::string(1 << 20, 'y') + R"("}]})";
    auto too_large = call("POST", "/v1/topics/limits/produce/batch", over);
    EXPECT_EQ(too_large.status, 413);
    EXPECT_EQ(error_of(too_large), "message 1: message too large");
    EXPECT_EQ(call("POST", "/v1/topics/limits/produce/batch", batch(17, near_mib)).status, 413);
    // Every other route keeps its 1 MiB body cap.
    EXPECT_EQ(call("POST", "/v1/topics/limits/produce", std::string((1 << 20) + 1, '1')).status,
              413);
    auto keyed = call("POST", "/v1/topics/limits/produce/batch?key=k", batch(1, "1"));
    EXPECT_EQ(keyed.status, 400);
    EXPECT_EQ(error_of(keyed),
              "key is set per message in a batch produce, not as a query parameter");
    // All or nothing: a bad partition in message 1 stores nothing, message 0 included.
    auto partial = call("POST", "/v1/topics/limits/produce/batch",
                        R"({"messages":[{"payload":"first"},{"payload":2,"partition":7}]})");
    EXPECT_EQ(partial.status, 400);
    EXPECT_EQ(error_of(partial), "message 1: invalid argument: partition out of range");
    // Format checks of every message run before any partition check.
    auto order = call(
        "POST", "/v1/topics/limits/produce/batch",
        R"({"messages":[{"payload":1,"partition":7},{"payload":"@","payload_encoding":"base64"}]})");
    EXPECT_EQ(order.status, 400);
    EXPECT_EQ(error_of(order), "message 1: invalid payload: illegal base64 data at input byte 0");
    // The refused batches were answered before the last accepted one was sent, so once the
    // partitions hold both accepted batches, anything refused would be there too.
    ASSERT_EQ(call("POST", "/v1/topics/limits/produce/batch", batch(1, "1")).status, 202);
    size_t stored = 0;
    EXPECT_TRUE(eventually([&] {
        auto details = json::parse(call("GET", "/v1/topics/limits").body);
        stored = 0;
        for (const auto& stats : details["partition_stats"]) {
            stored += stats["next_offset"].get<size_t>();
        }
        return stored >= 1016;
    }));
    EXPECT_EQ(stored, 1016u);  // the accepted batches, nothing of the refused ones
}

// Rule (Narad 3.2): a batch body may be zstd or gzip; any other Content-Encoding is 415.
TEST_F(ApiConformanceTest, BatchProduceContentEncoding) {
    create(R"({"name":"encoded","partitions":3})");
    std::string plain = R"({"messages":[{"payload":{"k":"v"}}]})";
    auto refused = client_.request("POST", "/v1/topics/encoded/produce/batch", plain,
                                   "application/json", {{"Content-Encoding", "br"}});
    ASSERT_TRUE(refused.is_ok());
    EXPECT_EQ(refused->status, 415) << refused->body;
    auto garbage = client_.request("POST", "/v1/topics/encoded/produce/batch", plain,
                                   "application/json", {{"Content-Encoding", "gzip"}});
    ASSERT_TRUE(garbage.is_ok());
    EXPECT_EQ(garbage->status, 400);
    EXPECT_TRUE(error_of(*garbage).starts_with("invalid json")) << garbage->body;
}

// Rule (Narad 3.1): batch consume takes max 1..100, needs an X-Narad-Client header, and does not
// combine with offset.
TEST_F(ApiConformanceTest, BatchConsumeRules) {
    create(R"({"name":"guarded","partitions":3})");
    net::HttpClient bare = anonymous_client(*node_);
    auto unguarded = bare.get("/v1/topics/guarded/consume?max=5");
    ASSERT_TRUE(unguarded.is_ok());
    EXPECT_EQ(unguarded->status, 400);
    EXPECT_TRUE(error_of(*unguarded)
                    .starts_with("a batch consume (max) must send an X-Narad-Client header"))
        << unguarded->body;
    auto single = bare.get("/v1/topics/guarded/consume");
    ASSERT_TRUE(single.is_ok());
    EXPECT_EQ(single->status, 204);  // a single consume needs no header
    EXPECT_EQ(call("GET", "/v1/topics/guarded/consume?max=101").status, 400);
    EXPECT_EQ(call("GET", "/v1/topics/guarded/consume?max=0").status, 400);
    auto with_offset = call("GET", "/v1/topics/guarded/consume?max=5&partition=0&offset=0");
    EXPECT_EQ(with_offset.status, 400);
    EXPECT_EQ(error_of(with_offset), "max does not combine with offset");
}

// Rule (Narad 3.1): POST /ack with a body of handles settles each on its own, `extend` from the
// query applying to all; 1 to 100 handles.
TEST_F(ApiConformanceTest, BatchAckOnTheAckRoute) {
    create(R"({"name":"bulkacks","partitions":3})");
    json body = {{"messages", json::array()}};
    for (int i = 0; i < 3; ++i) body["messages"].push_back({{"payload", i}});
    ASSERT_EQ(call("POST", "/v1/topics/bulkacks/produce/batch", body.dump()).status, 202);
    // Reserves all three (they reach their partitions on their own schedules).
    auto take_all = [&] {
        json handles = json::array();
        EXPECT_TRUE(eventually([&] {
            auto response = call("GET", "/v1/topics/bulkacks/consume?max=3&wait=200ms");
            if (response.status == 200) {
                json page = json::parse(response.body);
                for (const auto& m : page["messages"]) handles.push_back(m["receipt_handle"]);
            }
            return handles.size() == 3;
        }));
        return handles;
    };
    json handles = take_all();
    // extend=0 hands all three back at once.
    auto nacked =
        call("POST", "/v1/topics/bulkacks/ack?extend=0", json{{"receipt_handles", handles}}.dump());
    ASSERT_EQ(nacked.status, 200) << nacked.body;
    json nack_results = json::parse(nacked.body)["results"];
    ASSERT_EQ(nack_results.size(), 3u);
    for (const auto& r : nack_results) EXPECT_EQ(r["status"], 204);
    handles = take_all();
    auto acked = call("POST", "/v1/topics/bulkacks/ack", json{{"receipt_handles", handles}}.dump());
    ASSERT_EQ(acked.status, 200);
    json ack_results = json::parse(acked.body)["results"];
    ASSERT_EQ(ack_results.size(), 3u);
    for (const auto& r : ack_results) EXPECT_EQ(r["status"], 204);
    EXPECT_EQ(call("GET", "/v1/topics/bulkacks/consume?max=3").status, 204);
    json many = json::array();
    for (int i = 0; i < 101; ++i) many.push_back("0:0:1");
    auto too_many = call("POST", "/v1/topics/bulkacks/ack", json{{"receipt_handles", many}}.dump());
    EXPECT_EQ(too_many.status, 400);
    EXPECT_EQ(error_of(too_many), "too many receipt_handles: more than 100 (max 100)");
}

// Rule (Narad's cross-site guard, on a real node): a POST without a JSON or octet-stream type and
// without X-Narad-Client is 415 and changes nothing; a body-less ack needs the header too.
TEST_F(ApiConformanceTest, ContentTypeGuard) {
    net::HttpClient bare = anonymous_client(*node_);
    auto form = bare.request("POST", "/v1/topics", R"({"name":"guard"})",
                             "application/x-www-form-urlencoded");
    ASSERT_TRUE(form.is_ok());
    EXPECT_EQ(form->status, 415);
    EXPECT_EQ(error_of(*form),
              "state-changing requests must send Content-Type: application/json or "
              "application/octet-stream, or an X-Narad-Client header");
    EXPECT_EQ(call("GET", "/v1/topics/guard").status, 404);  // nothing was created
    auto ack = bare.request("POST", "/v1/topics/guard/ack?receipt_handle=0:0:1", "", "");
    ASSERT_TRUE(ack.is_ok());
    EXPECT_EQ(ack->status, 415);
    auto typed = bare.request("POST", "/v1/topics", R"({"name":"guard","partitions":3})",
                              "application/json; charset=utf-8");
    ASSERT_TRUE(typed.is_ok());
    EXPECT_EQ(typed->status, 201) << typed->body;
}

// Rule (Narad): a wait above the node's ceiling is cut to it, and the answer says to what.
TEST_F(ApiConformanceTest, WaitClampedHeader) {
    create(R"({"name":"clamped","partitions":3})");
    ASSERT_EQ(call("POST", "/v1/topics/clamped/produce?partition=0", "m", "text/plain").status,
              202);
    auto response = call("GET", "/v1/topics/clamped/consume?partition=0&wait=1h");
    EXPECT_EQ(response.status, 200);
    EXPECT_EQ(header(response, "x-narad-wait-clamped"), "10s");
    auto plain = call("GET", "/v1/topics/clamped/consume?partition=0&wait=1s");
    EXPECT_EQ(header(plain, "x-narad-wait-clamped"), "");
}

// Rule: a node runs from a Narad 3.2 config file: the flow-control caps answer 429 per client,
// the head cap 431, /metrics moves to http.metrics_addr (health on both ports), and the Narad
// settings without effect here are logged at start-up.
TEST_F(ApiConformanceTest, Narad32ConfigFileRunsANode) {
    TempDir dir;
    uint16_t metrics_port = free_port();
    std::string config = dir.path() + "/narad.json";
    {
        std::ofstream file(config);
        file << R"({"http":{"max_header_bytes":4096,"max_consume_in_flight_per_identity":1,)"
             << R"("max_produce_in_flight_per_identity":2,"metrics_addr":"127.0.0.1:)"
             << metrics_port << R"("},)"
             << R"("cluster":{"raft_snapshot_interval":"2m"},)"
             << R"("storage":{"consumer_offset_commit_interval_ms":500,)"
             << R"("cold_retention_walk_ms":60000},)"
             << R"("security":{"allow_plaintext_raft":true}})";
    }
    NodeProcess node(dir.path() + "/data", {.args = {"--config", config}});
    node.start();
    auto client = node.client();
    ASSERT_EQ(client
                  .request("POST", "/v1/topics", R"({"name":"capped","partitions":3})",
                           "application/json")
                  ->status,
              201);

    // One consume per identity: a second one while the first is parked is refused. The parked
    // poll goes again whenever it lost the race for the slot to a probe, until a probe was refused.
    std::atomic<bool> seen{false};
    std::thread parked([&] {
        auto other = node.client();
        while (!seen.load()) (void)other.get("/v1/topics/capped/consume?wait=5s");
    });
    net::HttpClient second = node.client();
    bool refused = eventually([&] {
        auto response = second.get("/v1/topics/capped/consume");
        return response.is_ok() && response->status == 429 &&
               error_of(*response) ==
                   "too many in-flight consume requests for this identity (limit 1 per node)" &&
               header(*response, "retry-after") == "1";
    });
    seen = true;
    EXPECT_TRUE(refused);
    // A batch of more messages than the produce cap counts as the cap: alone, it goes.
    auto batch = client.request("POST", "/v1/topics/capped/produce/batch",
                                R"({"messages":[{"payload":1},{"payload":2},{"payload":3}]})",
                                "application/json");
    ASSERT_TRUE(batch.is_ok());
    EXPECT_EQ(batch->status, 202) << batch->body;
    parked.join();

    auto big_head =
        second.request("GET", "/healthz", "", "", {{"X-Filler", std::string(5000, 'a')}});
    ASSERT_TRUE(big_head.is_ok()) << big_head.status().to_string();
    EXPECT_EQ(big_head->status, 431);

    net::ClientOptions metrics_options;
    metrics_options.host = "127.0.0.1";
    metrics_options.port = metrics_port;
    net::HttpClient metrics(metrics_options);
    auto scraped = metrics.get("/metrics");
    ASSERT_TRUE(scraped.is_ok());
    EXPECT_EQ(scraped->status, 200);
    EXPECT_NE(scraped->body.find("narad_http_batch_body_budget_rejections_total 0"),
              std::string::npos);
    EXPECT_EQ(metrics.get("/readyz")->status, 200);
    EXPECT_EQ(node.client().get("/metrics")->status, 404);
    EXPECT_EQ(node.client().get("/healthz")->status, 200);

    EXPECT_EQ(node.stop(), 0);
    std::ifstream log(node.log_path());
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("security.allow_plaintext_raft: the metastore is etcd"), std::string::npos);
    EXPECT_NE(text.find("cluster.raft_snapshot_interval"), std::string::npos);
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

// Rule: unknown paths are 404 text, wrong methods 405 with Allow, the user routes and cluster
// routes answer (as root: the harness signs in).
TEST_F(ApiConformanceTest, RoutingAndClusterRoutes) {
    auto missing = call("GET", "/v1/nope");
    EXPECT_EQ(missing.status, 404);
    EXPECT_EQ(missing.body, "404 page not found\n");
    auto wrong = call("PUT", "/v1/topics");
    EXPECT_EQ(wrong.status, 405);
    EXPECT_EQ(header(wrong, "allow"), "GET, HEAD, POST");
    auto users = json::parse(call("GET", "/v1/users").body);
    ASSERT_TRUE(users.is_array());
    ASSERT_EQ(users.size(), 1u);
    EXPECT_EQ(users[0]["username"], "admin");
    auto members = json::parse(call("GET", "/v1/cluster/members").body);
    ASSERT_EQ(members["members"].size(), 1u);
    EXPECT_EQ(members["members"][0]["id"], "n1");
    EXPECT_EQ(members["members"][0]["status"], "alive");
    EXPECT_EQ(json::parse(call("GET", "/v1/cluster/moves").body)["moves"].size(), 0u);
    EXPECT_EQ(call("POST", "/v1/cluster/members/other/decommission").status, 404);
    EXPECT_EQ(call("POST", "/v1/topics/x/children", R"({"child":"y"})").status, 404);
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
