// Fan-out on real nodes (docs/fanout.md): Narad's own fan-out, delay and create-as-child cases,
// ported from its end-to-end suite, against one secured node; then the failure cases on a
// cluster (a moved parent partition, kill -9 of the parent's and the child's owner).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "cluster/harness.h"
#include "cluster/move_support.h"

namespace narad::testing {
namespace {

using namespace std::chrono_literals;

struct Answer {
    int status = 0;
    std::string body;
    json parsed() const { return json::parse(body, nullptr, false); }
};

Answer call(const NodeProcess& node, std::string_view method, std::string_view target,
            std::string_view body = {}, const std::string& credentials = "") {
    net::ClientOptions options = node.client_options();
    if (!credentials.empty()) options.basic_auth = credentials;
    net::HttpClient client(options);
    auto response = client.request(method, target, body, body.empty() ? "" : "application/json");
    EXPECT_TRUE(response.is_ok()) << response.status().to_string();
    if (!response.is_ok()) return {};
    return {response->status, response->body};
}

// Polls `done` about every 20 ms for at most `limit` (a bound, not a speed).
bool within(const std::function<bool()>& done, std::chrono::milliseconds limit = 30s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (done()) return true;
        std::this_thread::sleep_for(20ms);
    }
    return done();
}

// The sum of the high watermarks of `topic`'s partitions, as `node` reports them.
int64_t committed_on(const NodeProcess& node, const std::string& topic) {
    json details = call(node, "GET", "/v1/topics/" + topic).parsed();
    int64_t total = 0;
    for (const auto& p : details.value("partition_stats", json::array())) {
        total += p.value("high_watermark", int64_t{0});
    }
    return total;
}

// Every committed message of `topic`, replayed one offset at a time, partition by partition.
std::vector<json> replay_all(const NodeProcess& node, const std::string& topic) {
    std::vector<json> messages;
    json details = call(node, "GET", "/v1/topics/" + topic).parsed();
    for (const auto& p : details.value("partition_stats", json::array())) {
        int index = p["index"];
        for (int64_t offset = 0; offset < p.value("high_watermark", int64_t{0}); ++offset) {
            messages.push_back(call(node, "GET",
                                    "/v1/topics/" + topic + "/consume?partition=" +
                                        std::to_string(index) + "&offset=" + std::to_string(offset))
                                   .parsed());
        }
    }
    return messages;
}

// Never early: each copy in `child` was committed (whole seconds on the wire) at least its parent
// record's time plus the delay's whole seconds; records are matched by key.
void expect_never_early(const NodeProcess& node, const std::string& parent,
                        const std::string& child, int64_t delay_ms) {
    std::map<std::string, int64_t> parent_time;
    for (const json& m : replay_all(node, parent))
        parent_time[m.value("key", "")] = m.at("timestamp");
    for (const json& m : replay_all(node, child)) {
        ASSERT_TRUE(m.contains("key")) << m.dump();
        EXPECT_GE(m.at("timestamp").get<int64_t>(),
                  parent_time.at(m["key"].get<std::string>()) + delay_ms / 1000)
            << m.dump();
    }
}

class FanoutConformanceTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { node_ = suite_.start(); }
    static void TearDownTestSuite() { suite_.stop(); }

    Answer post(const std::string& target, const json& body) {
        return call(*node_, "POST", target, body.dump());
    }
    void create(const std::string& name, int64_t retention_ms = -1) {
        json body = {{"name", name}, {"partitions", 3}};
        if (retention_ms >= 0) body["retention_ms"] = retention_ms;
        Answer created = post("/v1/topics", body);
        ASSERT_EQ(created.status, 201) << created.body;
    }
    Answer attach(const std::string& parent, const std::string& child, int64_t delay_ms = 0) {
        json body = {{"child", child}};
        if (delay_ms != 0) body["delay_ms"] = delay_ms;
        return post("/v1/topics/" + parent + "/children", body);
    }
    void produce(const std::string& topic, const std::string& key, const json& value) {
        Answer produced =
            call(*node_, "POST", "/v1/topics/" + topic + "/produce?key=" + key, value.dump());
        ASSERT_EQ(produced.status, 202) << produced.body;
    }
    json children(const std::string& parent) {
        return call(*node_, "GET", "/v1/topics/" + parent + "/children").parsed();
    }
    bool anchored(const std::string& parent, const std::string& child) {
        json listing = children(parent);
        for (const auto& entry : listing.value("children", json::array())) {
            if (entry["name"] == child && entry["lag_complete"] == true) return true;
        }
        return false;
    }
    int64_t committed(const std::string& topic) { return committed_on(*node_, topic); }
    // Every committed record of `topic`, replayed, as key → payloads in offset order.
    std::map<std::string, std::vector<json>> replay(const std::string& topic) {
        std::map<std::string, std::vector<json>> by_key;
        for (const json& message : replay_all(*node_, topic)) {
            by_key[message.value("key", "")].push_back(message["payload"]);
        }
        return by_key;
    }

    static SuiteNode suite_;
    static NodeProcess* node_;
};

SuiteNode FanoutConformanceTest::suite_;
NodeProcess* FanoutConformanceTest::node_ = nullptr;

// Narad's TestFanoutEndToEnd: no backfill, keyed copies in per-key order, the listing with lag
// draining to 0, detach keeps the child's records and stops the copies, re-attach starts fresh.
TEST_F(FanoutConformanceTest, FanoutEndToEnd) {
    create("fan-parent");
    create("fan-child");
    produce("fan-parent", "k1", {{"pre", 1}});
    produce("fan-parent", "k2", {{"pre", 2}});
    // "Before the attach" is committed before it: a 202 only says the ingress WAL holds it.
    ASSERT_TRUE(within([&] { return committed("fan-parent") >= 2; }));
    Answer attached = attach("fan-parent", "fan-child");
    ASSERT_EQ(attached.status, 200) << attached.body;
    EXPECT_EQ(attached.parsed()["role"], "parent");
    EXPECT_EQ(attached.parsed()["children"], json::array({"fan-child"}));
    ASSERT_TRUE(within([&] { return anchored("fan-parent", "fan-child"); }));
    json child = call(*node_, "GET", "/v1/topics/fan-child").parsed();
    EXPECT_EQ(child["role"], "child");
    EXPECT_EQ(child["parent"], "fan-parent");

    const int n = 6;
    for (int i = 0; i < n; ++i) produce("fan-parent", "key-" + std::to_string(i % 3), {{"seq", i}});
    ASSERT_TRUE(within([&] { return committed("fan-child") >= n; }));
    int got = 0;
    for (const auto& [key, payloads] : replay("fan-child")) {
        EXPECT_FALSE(key.empty());
        int last = -1;
        for (const json& payload : payloads) {
            ASSERT_TRUE(payload.contains("seq")) << "copied from before the attach: " << payload;
            EXPECT_GT(payload["seq"].get<int>(), last) << key;
            last = payload["seq"];
        }
        got += static_cast<int>(payloads.size());
    }
    EXPECT_EQ(got, n);
    ASSERT_TRUE(within([&] {
        json listing = children("fan-parent");
        return listing["children"].size() == 1 && listing["children"][0]["lag_complete"] == true &&
               listing["children"][0]["lag_messages"] == 0;
    }));

    EXPECT_EQ(call(*node_, "DELETE", "/v1/topics/fan-parent/children/fan-child").status, 204);
    json detached = call(*node_, "GET", "/v1/topics/fan-child").parsed();
    EXPECT_EQ(detached["role"], "standalone");
    EXPECT_FALSE(detached.contains("parent"));
    produce("fan-parent", "k-detached", {{"detached", true}});

    ASSERT_EQ(attach("fan-parent", "fan-child").status, 200);
    ASSERT_TRUE(within([&] { return anchored("fan-parent", "fan-child"); }));
    produce("fan-parent", "k-new", {{"post", 1}});
    ASSERT_TRUE(within([&] { return committed("fan-child") >= n + 1; }));
    EXPECT_EQ(replay("fan-child").count("k-detached"), 0u);
    EXPECT_EQ(committed("fan-child"), n + 1);
}

// Narad's TestFanoutAttachRejectsInvalidLinks, with its statuses.
TEST_F(FanoutConformanceTest, AttachRejectsInvalidLinks) {
    for (const char* name : {"link-parent", "link-child", "link-other", "link-spare"}) {
        create(name);
    }
    ASSERT_EQ(attach("link-parent", "link-child").status, 200);
    EXPECT_EQ(attach("ghost", "link-spare").status, 404);
    EXPECT_EQ(attach("link-parent", "ghost").status, 404);
    EXPECT_EQ(attach("link-spare", "link-spare").status, 400);
    EXPECT_EQ(attach("link-child", "link-spare").status, 409);
    EXPECT_EQ(attach("link-spare", "link-parent").status, 409);
    EXPECT_EQ(attach("link-other", "link-child").status, 409);
    Answer duplicate = attach("link-parent", "link-child");
    EXPECT_EQ(duplicate.status, 409);
    EXPECT_EQ(duplicate.parsed()["error"],
              "already exists: \"link-child\" is already attached to \"link-parent\"");
    EXPECT_EQ(call(*node_, "DELETE", "/v1/topics/link-parent/children/link-spare").status, 404);
    EXPECT_EQ(post("/v1/topics/link-parent/children", json::object()).parsed()["error"],
              "child is required");
}

// Narad's TestFanoutSchemaGate: attach needs compatible schemas, a schema-less child adopts the
// parent's, an attached child's schema is the parent's to change, and detach keeps it.
TEST_F(FanoutConformanceTest, SchemaGate) {
    for (const char* name : {"sg-parent", "sg-child", "sg-different"}) create(name);
    json v1 = {{"type", "object"}, {"required", {"id"}}};
    json v2 = {
        {"type", "object"}, {"required", {"id"}}, {"properties", {{"note", {{"type", "string"}}}}}};
    ASSERT_EQ(call(*node_, "PATCH", "/v1/topics/sg-parent", json{{"schema", v1}}.dump()).status,
              200);
    ASSERT_EQ(call(*node_, "PATCH", "/v1/topics/sg-different", json{{"schema", v2}}.dump()).status,
              200);
    EXPECT_EQ(attach("sg-child", "sg-different").status, 409);
    EXPECT_EQ(attach("sg-parent", "sg-different").status, 409);
    ASSERT_EQ(attach("sg-parent", "sg-child").status, 200);
    EXPECT_EQ(call(*node_, "POST", "/v1/topics/sg-child/produce", R"({"name":"no id"})").status,
              400);
    EXPECT_EQ(call(*node_, "POST", "/v1/topics/sg-child/produce", R"({"id":1})").status, 202);
    EXPECT_EQ(call(*node_, "PATCH", "/v1/topics/sg-child", json{{"schema", v2}}.dump()).status,
              409);
    ASSERT_EQ(call(*node_, "PATCH", "/v1/topics/sg-parent", json{{"schema", v2}}.dump()).status,
              200);
    EXPECT_EQ(call(*node_, "GET", "/v1/topics/sg-child").parsed()["schema_version"], 2);
    EXPECT_EQ(call(*node_, "DELETE", "/v1/topics/sg-parent/children/sg-child").status, 204);
    EXPECT_EQ(call(*node_, "POST", "/v1/topics/sg-child/produce", R"({"name":"x"})").status, 400);
}

// Narad's TestFanoutSecurity: attach and detach are owner-or-admin on the parent; fan-out has no
// grant of its own (a producer's message reaches the child).
TEST_F(FanoutConformanceTest, Security) {
    std::string root = node_->credentials();
    ASSERT_FALSE(root.empty());
    auto add_user = [&](const std::string& name, const json& grants) {
        Answer created =
            call(*node_, "POST", "/v1/users",
                 json{{"username", name}, {"password", name + "-pw-1"}, {"grants", grants}}.dump(),
                 root);
        ASSERT_EQ(created.status, 201) << created.body;
    };
    add_user("alice", json::array({{{"action", "create"}, {"patterns", {"sec-*"}}},
                                   {{"action", "produce"}, {"patterns", {"sec-*"}}},
                                   {{"action", "consume"}, {"patterns", {"sec-*"}}}}));
    add_user("bob", json::array());
    add_user("carol", json::array({{{"action", "produce"}, {"patterns", {"sec-parent"}}}}));
    const std::string alice = "alice:alice-pw-1", bob = "bob:bob-pw-1", carol = "carol:carol-pw-1";
    for (const char* name : {"sec-parent", "sec-child"}) {
        Answer created = call(*node_, "POST", "/v1/topics",
                              json{{"name", name}, {"partitions", 3}}.dump(), alice);
        ASSERT_EQ(created.status, 201) << created.body;
    }
    std::string body = json{{"child", "sec-child"}}.dump();
    EXPECT_EQ(call(*node_, "POST", "/v1/topics/sec-parent/children", body, bob).status, 403);
    ASSERT_EQ(call(*node_, "POST", "/v1/topics/sec-parent/children", body, alice).status, 200);
    ASSERT_TRUE(within([&] { return anchored("sec-parent", "sec-child"); }));
    EXPECT_EQ(
        call(*node_, "POST", "/v1/topics/sec-parent/produce?key=k", R"({"v":1})", carol).status,
        202);
    ASSERT_TRUE(within([&] {
        return call(*node_, "GET", "/v1/topics/sec-child/consume?wait=500ms", "", alice).status ==
               200;
    }));
    EXPECT_EQ(call(*node_, "DELETE", "/v1/topics/sec-parent/children/sec-child", "", carol).status,
              403);
    EXPECT_EQ(call(*node_, "DELETE", "/v1/topics/sec-parent/children/sec-child", "", root).status,
              204);
}

// Narad's TestFanoutDeleteParentDetachesChildren: the child survives standalone, records kept.
TEST_F(FanoutConformanceTest, DeleteParentDetachesChildren) {
    create("del-parent");
    create("del-child");
    ASSERT_EQ(attach("del-parent", "del-child").status, 200);
    ASSERT_TRUE(within([&] { return anchored("del-parent", "del-child"); }));
    produce("del-parent", "k", {{"v", 1}});
    ASSERT_TRUE(within([&] { return committed("del-child") == 1; }));
    EXPECT_EQ(call(*node_, "DELETE", "/v1/topics/del-parent").status, 204);
    json child = call(*node_, "GET", "/v1/topics/del-child").parsed();
    EXPECT_EQ(child["role"], "standalone");
    EXPECT_FALSE(child.contains("parent"));
    EXPECT_EQ(committed("del-child"), 1);
}

// Narad's TestRetentionFloorEnforcedByAPI.
TEST_F(FanoutConformanceTest, RetentionFloorEnforcedByApi) {
    EXPECT_EQ(post("/v1/topics", {{"name", "floor-reject"}, {"retention_ms", 1'800'000}}).status,
              400);
    create("floor-ok", 3'600'000);
    EXPECT_EQ(call(*node_, "PATCH", "/v1/topics/floor-ok", R"({"retention_ms":1800000})").status,
              400);
}

// Narad's TestFanoutDelayChildEndToEnd: the delay shows on both sides, direct produce is 409,
// nothing arrives before the delay and everything (with keys) after; detach clears the delay.
TEST_F(FanoutConformanceTest, DelayChildEndToEnd) {
    create("dly-parent");
    create("dly-child");
    const int64_t delay_ms = 1500;
    ASSERT_EQ(attach("dly-parent", "dly-child", delay_ms).status, 200);
    EXPECT_EQ(call(*node_, "GET", "/v1/topics/dly-child").parsed()["fanout_delay_ms"], delay_ms);
    ASSERT_TRUE(within([&] { return anchored("dly-parent", "dly-child"); }));
    EXPECT_EQ(children("dly-parent")["children"][0]["delay_ms"], delay_ms);
    EXPECT_EQ(call(*node_, "POST", "/v1/topics/dly-child/produce", R"({"v":1})").status, 409);
    auto produced_at = std::chrono::steady_clock::now();
    for (int i = 0; i < 3; ++i) produce("dly-parent", "k" + std::to_string(i), {{"seq", i}});
    ASSERT_TRUE(within([&] { return committed("dly-child") == 3; }));
    EXPECT_GE(std::chrono::steady_clock::now() - produced_at, std::chrono::milliseconds(delay_ms));
    // The unit tests check the delay to the millisecond.
    expect_never_early(*node_, "dly-parent", "dly-child", delay_ms);
    EXPECT_EQ(call(*node_, "DELETE", "/v1/topics/dly-parent/children/dly-child").status, 204);
    EXPECT_EQ(call(*node_, "POST", "/v1/topics/dly-child/produce", R"({"v":2})").status, 202);
}

// Narad's TestFanoutDelayRetentionInvariant: the parent keeps delay + 1 h, at attach and on PATCH.
TEST_F(FanoutConformanceTest, DelayRetentionInvariant) {
    create("dret-parent", 7'200'000);
    create("dret-child");
    EXPECT_EQ(attach("dret-parent", "dret-child", 3'600'001).status, 400);
    EXPECT_EQ(attach("dret-parent", "dret-child", -5).status, 400);
    ASSERT_EQ(attach("dret-parent", "dret-child", 1500).status, 200);
    EXPECT_EQ(call(*node_, "PATCH", "/v1/topics/dret-parent", R"({"retention_ms":3600000})").status,
              400);
    EXPECT_EQ(call(*node_, "PATCH", "/v1/topics/dret-parent", R"({"retention_ms":3700000})").status,
              200);
    EXPECT_EQ(call(*node_, "DELETE", "/v1/topics/dret-parent/children/dret-child").status, 204);
    EXPECT_EQ(call(*node_, "PATCH", "/v1/topics/dret-parent", R"({"retention_ms":3600000})").status,
              200);
}

// Narad's TestCreateAsChildEndToEnd: one call creates, attaches, inherits the partition count.
TEST_F(FanoutConformanceTest, CreateAsChildEndToEnd) {
    create("rep-parent");
    Answer created = post("/v1/topics", {{"name", "rep-child"}, {"parent", "rep-parent"}});
    ASSERT_EQ(created.status, 201) << created.body;
    EXPECT_EQ(created.parsed()["role"], "child");
    EXPECT_EQ(created.parsed()["parent"], "rep-parent");
    EXPECT_EQ(created.parsed()["partitions"], 3);
    ASSERT_TRUE(within([&] { return anchored("rep-parent", "rep-child"); }));
    for (int i = 0; i < 6; ++i) produce("rep-parent", "key-" + std::to_string(i % 3), {{"seq", i}});
    ASSERT_TRUE(within([&] { return committed("rep-child") == 6; }));
    for (const auto& [key, payloads] : replay("rep-child")) EXPECT_FALSE(key.empty());
}

// Narad's TestCreateAsChildDelayChildRejectsDirectProduce.
TEST_F(FanoutConformanceTest, CreateAsChildDelayChildRejectsDirectProduce) {
    create("delay-parent");
    Answer created =
        post("/v1/topics",
             {{"name", "delay-replica"}, {"parent", "delay-parent"}, {"fanout_delay_ms", 60'000}});
    ASSERT_EQ(created.status, 201) << created.body;
    EXPECT_EQ(created.parsed()["fanout_delay_ms"], 60'000);
    EXPECT_EQ(call(*node_, "POST", "/v1/topics/delay-replica/produce?key=k", R"({"x":1})").status,
              409);
}

// Narad's TestCreateAsChildValidationSurface: a failed create leaves no topic behind.
TEST_F(FanoutConformanceTest, CreateAsChildValidationSurface) {
    create("val-parent");
    struct Case {
        json body;
        int status;
    };
    for (const Case& c : std::vector<Case>{
             {{{"name", "x1"}, {"parent", "ghost"}}, 404},
             {{{"name", "x2"}, {"fanout_delay_ms", 1000}}, 400},
             {{{"name", "x3"}, {"parent", "x3"}}, 400},
             {{{"name", "x4"}, {"parent", "val-parent"}, {"fanout_delay_ms", -1}}, 400},
         }) {
        EXPECT_EQ(post("/v1/topics", c.body).status, c.status) << c.body.dump();
        EXPECT_EQ(call(*node_, "GET", "/v1/topics/" + c.body["name"].get<std::string>()).status,
                  404);
    }
}

// ---- Dead letters (ours)
// -------------------------------------------------------------------------

// Rule: a message nacked max_deliveries times lands once in the dead-letter topic, with its key,
// payload and origin, and the partition moves on to the next message; the settings are checked.
TEST_F(FanoutConformanceTest, PoisonMessageLandsOnceInTheDeadLetterTopic) {
    create("dl-target");
    Answer created = post("/v1/topics", {{"name", "dl-source"},
                                         {"partitions", 3},
                                         {"max_deliveries", 3},
                                         {"dead_letter_topic", "dl-target"}});
    ASSERT_EQ(created.status, 201) << created.body;
    EXPECT_EQ(created.parsed()["max_deliveries"], 3);
    EXPECT_EQ(created.parsed()["dead_letter_topic"], "dl-target");
    EXPECT_EQ(post("/v1/topics", {{"name", "dl-bad"}, {"max_deliveries", 3}}).status, 400);
    EXPECT_EQ(post("/v1/topics",
                   {{"name", "dl-bad"}, {"max_deliveries", 3}, {"dead_letter_topic", "ghost"}})
                  .status,
              400);
    EXPECT_EQ(call(*node_, "GET", "/v1/topics/dl-bad").status, 404);
    ASSERT_EQ(
        call(*node_, "POST", "/v1/topics/dl-source/produce?partition=1&key=p", R"({"poison":true})")
            .status,
        202);
    ASSERT_EQ(
        call(*node_, "POST", "/v1/topics/dl-source/produce?partition=1", R"({"ok":1})").status,
        202);
    for (int delivery = 1; delivery <= 3; ++delivery) {
        json message =
            call(*node_, "GET", "/v1/topics/dl-source/consume?partition=1&wait=5s").parsed();
        ASSERT_EQ(message.value("offset", -1), 0) << message.dump();
        Answer nacked =
            call(*node_, "POST",
                 "/v1/topics/dl-source/ack?extend=0&reason=bad%20input&receipt_handle=" +
                     message["receipt_handle"].get<std::string>());
        ASSERT_EQ(nacked.status, 204) << nacked.body;
    }
    json next = call(*node_, "GET", "/v1/topics/dl-source/consume?partition=1&wait=5s").parsed();
    EXPECT_EQ(next.value("offset", -1), 1) << next.dump();
    ASSERT_TRUE(within([&] { return committed("dl-target") == 1; }));
    auto letters = replay("dl-target");
    ASSERT_EQ(letters.count("p"), 1u);
    const json& letter = letters["p"].at(0);
    EXPECT_EQ(letter["origin"]["topic"], "dl-source");
    EXPECT_EQ(letter["origin"]["partition"], 1);
    EXPECT_EQ(letter["origin"]["offset"], 0);
    EXPECT_EQ(letter["origin"]["deliveries"], 3);
    EXPECT_EQ(letter["origin"]["reason"], "bad input");
    EXPECT_EQ(letter["payload"], json::parse(R"({"poison":true})"));
    EXPECT_EQ(call(*node_, "POST", "/v1/topics/dl-source/ack?reason=x&receipt_handle=0:1:1").status,
              400);
}

// ---- On a cluster
// --------------------------------------------------------------------------------

// What a topic holds, read back through node `through` by replay (one offset at a time, as Narad's
// replay does not take `max`):
// how many records, and how many of them carry each id.
struct Holdings {
    int64_t records = 0;
    std::map<int, int> copies;  // id -> records carrying it
    int duplicates() const {
        int extra = 0;
        for (const auto& [id, n] : copies) extra += n - 1;
        return extra;
    }
};

Holdings holdings(Cluster& cluster, int through, const std::string& topic, int partitions) {
    Holdings out;
    auto client = cluster.node(through).client(seconds(30));
    for (int p = 0; p < partitions; ++p) {
        int64_t hwm = high_watermark(cluster, through, topic, p);
        for (int64_t offset = 0; offset < hwm; ++offset) {
            auto response =
                client.get("/v1/topics/" + topic + "/consume?partition=" + std::to_string(p) +
                           "&offset=" + std::to_string(offset));
            json message;
            if (response.is_ok() && response->status == 200) {
                message = json::parse(response->body, nullptr, false);
            }
            if (!message.is_object() || !message.contains("payload")) {
                ADD_FAILURE() << topic << "/" << p << " replay at " << offset << " of " << hwm
                              << ": " << describe(response);
                break;
            }
            ++out.records;
            ++out.copies[message["payload"].value("id", -1)];
        }
    }
    return out;
}

int64_t total_committed(Cluster& cluster, int through, const std::string& topic, int partitions) {
    int64_t total = 0;
    for (int p = 0; p < partitions; ++p)
        total += std::max<int64_t>(0, high_watermark(cluster, through, topic, p));
    return total;
}

bool anchored_on(Cluster& cluster, int through, const std::string& parent,
                 const std::string& child) {
    auto client = cluster.node(through).client(seconds(10));
    auto listing = get_json(client, "/v1/topics/" + parent + "/children");
    if (!listing || !listing->contains("children")) return false;
    for (const auto& entry : (*listing)["children"]) {
        if (entry["name"] == child && entry["lag_complete"] == true) return true;
    }
    return false;
}

void create_child(Cluster& cluster, const std::string& name, const std::string& parent,
                  int64_t delay_ms) {
    auto client = cluster.node(1).client();
    json body = {{"name", name}, {"parent", parent}};
    if (delay_ms > 0) body["fanout_delay_ms"] = delay_ms;
    auto created = client.post("/v1/topics", body.dump());
    ASSERT_TRUE(created.is_ok() && created->status == 201) << describe(created);
}

// Small fan-out batches that each wait 100 ms before their commit, so an immediate child lags
// behind a burst of produce for several seconds.
std::map<std::string, std::string> slow_fanout_env() {
    return {{"NARAD_FANOUT_MAX_BATCH_RECORDS", "16"},
            {"NARAD_FAILPOINTS", "fanout.before_child_commit=sleep(100)"}};
}

// Rule: parent partitions move (a fourth node joins and takes its share) while a delay child holds
// its whole pending window and an immediate child lags: once the delay has passed, each child holds
// every record the parent committed, none twice (the cursors travel with the partitions, and the
// new owners' re-sends are skipped by the copies' stamps).
TEST(FanoutClusterTest, MovesCarryTheCursorsOfLaggingAndDelayedChildren) {
    Cluster cluster(move_cluster(4, slow_fanout_env()));
    const std::string parent = "mvpar";
    const int partitions = 4;
    auto before = start_with_topic(cluster, parent, partitions);
    ASSERT_EQ(before.size(), 4u);
    ASSERT_NO_FATAL_FAILURE(create_child(cluster, "mvimm", parent, 0));
    const int64_t delay_ms = 20'000;
    ASSERT_NO_FATAL_FAILURE(create_child(cluster, "mvdly", parent, delay_ms));
    ASSERT_TRUE(eventually(
        [&] {
            return anchored_on(cluster, 1, parent, "mvimm") &&
                   anchored_on(cluster, 1, parent, "mvdly");
        },
        seconds(30), milliseconds(50)));
    Ledger ledger(100'000);
    int produced = prefill(cluster, 1, parent, partitions, 800, 256, ledger, 0);
    ASSERT_EQ(ledger.accepted_count(), produced);
    ASSERT_NO_FATAL_FAILURE(cluster.join(4));
    // Moves start while the delay child's window is pending and the immediate child lags.
    ASSERT_TRUE(eventually(
        [&] {
            auto moves = list_moves(cluster, 1);
            return moves && !moves->empty();
        },
        seconds(30), milliseconds(50)));
    EXPECT_TRUE(wait_no_moves(cluster, 1, seconds(120))) << move_logs(cluster);
    auto after = read_assignments(cluster, parent, partitions);
    int parent_moves = 0;
    for (const auto& [p, assignment] : after) parent_moves += assignment.owner != before[p].owner;
    EXPECT_GE(parent_moves, 1) << "no partition of the parent moved";
    int64_t parent_records = total_committed(cluster, 1, parent, partitions);
    ASSERT_EQ(parent_records, produced);
    for (const std::string child : {"mvimm", "mvdly"}) {
        ASSERT_TRUE(
            eventually([&] { return total_committed(cluster, 1, child, partitions) >= produced; },
                       seconds(120), milliseconds(200)))
            << child << " holds " << total_committed(cluster, 1, child, partitions) << " of "
            << produced << "\n"
            << move_logs(cluster);
        Holdings held = holdings(cluster, 1, child, partitions);
        int lost = 0;
        for (int id = 0; id < produced; ++id) lost += held.copies.count(id) == 0 ? 1 : 0;
        std::printf(
            "%s: %lld records for %d produced, lost %d, duplicates %d; %.0f moves, %d of "
            "the parent\n",
            child.c_str(), static_cast<long long>(held.records), produced, lost, held.duplicates(),
            metric(cluster, 4, kCompleted), parent_moves);
        EXPECT_EQ(lost, 0) << child;
        EXPECT_EQ(held.duplicates(), 0) << child;
    }
    EXPECT_GE(metric(cluster, 4, kCompleted), 1);
}

// Rule: kill -9 of the owner of parent partitions while it fans out, then of a node owning child
// partitions: after both restart the child holds every record the parent committed, once each.
TEST(FanoutClusterTest, KillingParentAndChildOwnersLosesAndDoublesNothing) {
    Cluster cluster(move_cluster(3, slow_fanout_env()));
    const std::string parent = "kpar";
    const int partitions = 3;
    auto assignments = start_with_topic(cluster, parent, partitions);
    ASSERT_EQ(assignments.size(), 3u);
    ASSERT_NO_FATAL_FAILURE(create_child(cluster, "kchild", parent, 0));
    ASSERT_TRUE(eventually([&] { return anchored_on(cluster, 1, parent, "kchild"); }, seconds(30),
                           milliseconds(50)));
    Ledger ledger(100'000);
    int produced = prefill(cluster, 1, parent, partitions, 500, 256, ledger, 0);
    int parent_owner = cluster.index_of(assignments.at(0).owner);
    ASSERT_GE(parent_owner, 1);
    // Part way through the fan-out: the child has some of the copies, not all.
    ASSERT_TRUE(eventually([&] { return total_committed(cluster, 1, "kchild", partitions) > 0; },
                           seconds(30), milliseconds(20)));
    cluster.kill(parent_owner);
    ASSERT_NO_FATAL_FAILURE(cluster.restart(parent_owner));
    auto child_assignments = read_assignments(cluster, "kchild", partitions);
    ASSERT_FALSE(child_assignments.empty());
    int child_owner = cluster.index_of(child_assignments.at(1).owner);
    ASSERT_GE(child_owner, 1);
    cluster.kill(child_owner);
    ASSERT_NO_FATAL_FAILURE(cluster.restart(child_owner));
    ASSERT_TRUE(
        eventually([&] { return total_committed(cluster, 1, "kchild", partitions) >= produced; },
                   seconds(120), milliseconds(200)))
        << total_committed(cluster, 1, "kchild", partitions) << " of " << produced;
    Holdings held = holdings(cluster, 1, "kchild", partitions);
    int lost = 0;
    for (int id = 0; id < produced; ++id) lost += held.copies.count(id) == 0 ? 1 : 0;
    std::printf("kchild: %lld records for %d produced, lost %d, duplicates %d\n",
                static_cast<long long>(held.records), produced, lost, held.duplicates());
    EXPECT_EQ(lost, 0);
    EXPECT_EQ(held.duplicates(), 0);
    EXPECT_EQ(held.records, produced);
}

// Rule: a node killed (failpoint crash) right after a dead letter's commit, before the message is
// settled: after the restart the message is delivered again, exhausted again, and the dead-letter
// topic still holds it once.
TEST(DeadLetterCrashTest, CrashBetweenTheDeadLetterAndTheAckLosesAndDoublesNothing) {
    TempDir dir;
    NodeOptions options;
    options.env["NARAD_FAILPOINTS"] = "dead_letter.after_commit=crash@1";
    NodeProcess node(dir.path() + "/data", options);
    node.start();
    auto post = [&](const std::string& target, const std::string& body) {
        return call(node, "POST", target, body);
    };
    ASSERT_EQ(post("/v1/topics", R"({"name":"dlc-target"})").status, 201);
    ASSERT_EQ(post("/v1/topics",
                   R"({"name":"dlc-source","max_deliveries":2,"dead_letter_topic":"dlc-target"})")
                  .status,
              201);
    ASSERT_EQ(post("/v1/topics/dlc-source/produce?partition=0&key=p", R"({"poison":1})").status,
              202);
    auto nack_twice = [&] {
        for (int i = 0; i < 2; ++i) {
            json message =
                call(node, "GET", "/v1/topics/dlc-source/consume?partition=0&wait=5s").parsed();
            ASSERT_EQ(message.value("offset", -1), 0) << message.dump();
            ASSERT_EQ(post("/v1/topics/dlc-source/ack?extend=0&receipt_handle=" +
                               message["receipt_handle"].get<std::string>(),
                           "")
                          .status,
                      204);
        }
    };
    ASSERT_NO_FATAL_FAILURE(nack_twice());
    // The dead letter is committed, then the node dies before it settles the message.
    ASSERT_TRUE(within([&] { return !node.running(); }));
    node.env().erase("NARAD_FAILPOINTS");
    node.restart();
    ASSERT_NO_FATAL_FAILURE(nack_twice());
    // Settled: the source partition has nothing more to deliver.
    ASSERT_TRUE(within([&] {
        return call(node, "GET", "/v1/topics/dlc-source/consume?partition=0").status == 204;
    }));
    EXPECT_EQ(committed_on(node, "dlc-target"), 1);
    EXPECT_EQ(node.stop(), 0);
}

// Rule: a delay child's pending window survives kill -9 of the parent's owner: every record is
// delivered after the restart, none before its delay (whole seconds on the wire, and the elapsed
// time since the produce).
TEST(FanoutRestartTest, DelayWindowSurvivesKillOfTheParentsOwner) {
    TempDir dir;
    NodeProcess node(dir.path() + "/data", {});
    node.start();
    ASSERT_EQ(call(node, "POST", "/v1/topics", R"({"name":"rs-parent"})").status, 201);
    const int64_t delay_ms = 4000;
    ASSERT_EQ(
        call(node, "POST", "/v1/topics",
             json{{"name", "rs-child"}, {"parent", "rs-parent"}, {"fanout_delay_ms", delay_ms}}
                 .dump())
            .status,
        201);
    auto anchored = [&] {
        json listing = call(node, "GET", "/v1/topics/rs-parent/children").parsed();
        return listing.contains("children") && listing["children"].size() == 1 &&
               listing["children"][0]["lag_complete"] == true;
    };
    ASSERT_TRUE(within(anchored));
    auto produced_at = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) {
        ASSERT_EQ(call(node, "POST", "/v1/topics/rs-parent/produce?key=k" + std::to_string(i),
                       json{{"id", i}}.dump())
                      .status,
                  202);
    }
    node.kill();
    node.restart();
    ASSERT_TRUE(within([&] { return committed_on(node, "rs-parent") == 5; }));
    ASSERT_TRUE(within([&] { return committed_on(node, "rs-child") == 5; }));
    EXPECT_GE(std::chrono::steady_clock::now() - produced_at, std::chrono::milliseconds(delay_ms));
    expect_never_early(node, "rs-parent", "rs-child", delay_ms);
    EXPECT_EQ(node.stop(), 0);
}

}  // namespace
}  // namespace narad::testing
