// One request must never take a node down: regression tests against a real node for every input
// that used to crash one or hold its memory (deep JSON on each route, a peer's reply of the wrong
// shape, an unauthenticated body on the cluster port, a bad start-up flag). After each, the node
// still answers /healthz and serves a normal produce and consume.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cluster/harness.h"
#include "net/cluster_guard.h"
#include "net/http_server.h"
#include "net/test_support.h"

namespace narad::testing {
namespace {

using nlohmann::json;

std::string nested_arrays(size_t levels) {
    return std::string(levels, '[') + std::string(levels, ']');
}

// 300,000 levels: about 600 KB, under the 1 MiB body limit, and far beyond any thread's stack
// for a recursive walk.
const std::string& deep_value() {
    static const std::string value = nested_arrays(300'000);
    return value;
}

std::string error_of(const net::HttpResponse& response) {
    json body = json::parse(response.body, nullptr, false);
    return body.is_object() && body.contains("error") && body["error"].is_string()
               ? body["error"].get<std::string>()
               : "";
}

class HostileInputTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        ClusterOptions options;
        options.nodes = 1;
        options.voters = 1;
        cluster_ = new Cluster(options);
        cluster_->start();
        auto client = cluster_->node(1).client();
        create_topic(client, "healthy", 3);
    }
    static void TearDownTestSuite() {
        delete cluster_;
        cluster_ = nullptr;
    }

    NodeProcess& node() { return cluster_->node(1); }

    net::HttpResponse call(std::string_view method, std::string_view target,
                           std::string_view body = {}) {
        auto response = client_.request(method, target, body, "application/json");
        EXPECT_TRUE(response.is_ok()) << response.status().to_string();
        return response.is_ok() ? *response : net::HttpResponse{};
    }

    // The node is up: /healthz answers and a produce is consumed and acked.
    void expect_node_serves() {
        SCOPED_TRACE("the node still serves");
        ASSERT_TRUE(node().running()) << "the node died; see " << node().log_path();
        EXPECT_EQ(call("GET", "/healthz").status, 200);
        std::string marker = "alive-" + std::to_string(++produced_);
        ASSERT_EQ(call("POST", "/v1/topics/healthy/produce", marker).status, 202);
        bool seen = eventually(
            [&] {
                auto response = call("GET", "/v1/topics/healthy/consume?wait=1s");
                if (response.status != 200) return false;
                json message = json::parse(response.body, nullptr, false);
                if (!message.is_object()) return false;
                std::string handle = message.value("receipt_handle", "");
                call("POST", "/v1/topics/healthy/ack?receipt_handle=" + handle);
                return message.value("payload", "") == marker;
            },
            std::chrono::seconds(30));
        EXPECT_TRUE(seen) << "the produced message never came back";
    }

    static Cluster* cluster_;
    net::HttpClient client_ = cluster_->node(1).client();
    int produced_ = 0;
};

Cluster* HostileInputTest::cluster_ = nullptr;

// Rule: a batch produce whose payload nests 300,000 levels deep is a 400 naming the limit.
TEST_F(HostileInputTest, DeepBatchPayloadIsRefused) {
    create_topic(client_, "deep-batch", 3);
    std::string body = R"({"messages":[{"payload":)" + deep_value() + "}]}";
    auto response = call("POST", "/v1/topics/deep-batch/produce/batch", body);
    EXPECT_EQ(response.status, 400) << response.body;
    EXPECT_EQ(error_of(response), "payload nests deeper than 256 levels");
    std::string shallow = R"({"messages":[{"payload":{"message 0":)" + nested_arrays(300) + "}}]}";
    auto refused = call("POST", "/v1/topics/deep-batch/produce/batch", shallow);
    EXPECT_EQ(refused.status, 400);
    EXPECT_EQ(error_of(refused), "message 0: payload nests deeper than 256 levels");
    expect_node_serves();
}

// Rule: a deep single produce is a 400, on a plain topic and on a topic with a schema.
TEST_F(HostileInputTest, DeepSingleProduceIsRefused) {
    ASSERT_EQ(call("POST", "/v1/topics",
                   R"({"name":"deep-schema","partitions":3,"schema":{"type":"array"}})")
                  .status,
              201);
    for (const char* topic : {"deep-schema", "healthy"}) {
        auto response = call("POST", std::string("/v1/topics/") + topic + "/produce", deep_value());
        EXPECT_EQ(response.status, 400) << topic << ": " << response.body;
        EXPECT_EQ(error_of(response), "payload nests deeper than 256 levels") << topic;
    }
    EXPECT_EQ(call("POST", "/v1/topics/deep-schema/produce", nested_arrays(200)).status, 202);
    expect_node_serves();
}

// Rule: a topic schema nested beyond 256 levels is refused on create and on PATCH, and creates
// nothing.
TEST_F(HostileInputTest, DeepTopicSchemaIsRefused) {
    auto created =
        call("POST", "/v1/topics",
             R"({"name":"deep-topic","partitions":3,"schema":{"items":)" + deep_value() + "}}");
    EXPECT_EQ(created.status, 400) << created.body;
    EXPECT_EQ(call("GET", "/v1/topics/deep-topic").status, 404);
    create_topic(client_, "patched", 3);
    auto patched =
        call("PATCH", "/v1/topics/patched", R"({"schema":{"items":)" + nested_arrays(400) + "}}");
    EXPECT_EQ(patched.status, 400) << patched.body;
    EXPECT_EQ(error_of(patched), "schema nests deeper than 256 levels");
    expect_node_serves();
}

// Rule: a deep body to any other JSON route is a 400 with a JSON error.
TEST_F(HostileInputTest, DeepBodyToJsonRoutesIsRefused) {
    // The batch ack's body cap is 64 KiB: 20,000 levels fit under it, past Go's depth limit; the
    // 300,000-level body is over the cap and refused 413 before it is parsed.
    std::vector<std::pair<std::string, std::string>> cases = {
        {"/v1/topics", deep_value()}, {"/v1/topics/healthy/ack", nested_arrays(20'000)}};
    for (const auto& [target, body] : cases) {
        auto response = call("POST", target, body);
        EXPECT_EQ(response.status, 400) << target << ": " << response.body;
        EXPECT_FALSE(error_of(response).empty()) << target;
    }
    EXPECT_EQ(call("POST", "/v1/topics/healthy/ack", deep_value()).status, 413);
    auto field = call("POST", "/v1/topics", R"({"name":"x","bogus":)" + deep_value() + "}");
    EXPECT_EQ(field.status, 400);
    expect_node_serves();
}

// Rule: the cluster port refuses a request without the cluster secret on its head alone: a
// 16 MiB body announced and not sent is answered 403 and the connection closed.
TEST_F(HostileInputTest, UnauthenticatedBodyToClusterPortIsRefusedBeforeItIsSent) {
    net::testing::RawSocket socket(node().cluster_port());
    ASSERT_TRUE(socket.connected());
    ASSERT_TRUE(socket.send_all(
        "POST /internal/v1/commit?topic=healthy&incarnation=x&partition=0 HTTP/1.1\r\n"
        "Host: n1\r\nContent-Type: application/octet-stream\r\nContent-Length: 16777216\r\n\r\n"));
    std::string answer;
    EXPECT_TRUE(socket.read_until_close(answer)) << "the connection stayed open";
    EXPECT_EQ(answer.rfind("HTTP/1.1 403", 0), 0u) << answer;
    EXPECT_NE(answer.find("cluster secret"), std::string::npos) << answer;
    expect_node_serves();
}

// A node the test plays: a member of the cluster that proves the cluster secret, then answers
// every call with well-formed JSON of the wrong shape.
class WrongShapePeer {
  public:
    WrongShapePeer()
        : handler_([](net::HttpRequest request, net::Responder respond) {
              std::string body = R"({"partitions":[{"index":"zero","segments":{}}],)"
                                 R"("moves":[{"topic":7,"partition":"one","from":[]}],)"
                                 R"("results":"none","messages":{"a":1}})";
              if (request.path.ends_with("/consume")) body = R"({"partition":"x","offset":[]})";
              respond(net::HttpResponse{200, "application/json", body, {}});
          }) {
        net::ServerOptions options;
        options.address = "127.0.0.1";
        options.port = 0;
        server_ = std::make_unique<net::HttpServer>(options, guard_);
        EXPECT_TRUE(server_->start().is_ok());
    }
    uint16_t port() const { return server_->port(); }

  private:
    net::testing::FunctionHandler handler_;
    net::ClusterGuard guard_{{.current = kTestClusterSecret}, net::PlaneAccess::proved, handler_};
    std::unique_ptr<net::HttpServer> server_;
};

// Rule: a peer's reply of the wrong shape (right JSON, wrong types) never takes the node down:
// the topic read, the moves report and a consume that reaches the peer all answer.
TEST_F(HostileInputTest, PeerReplyOfTheWrongShapeIsContained) {
    create_topic(client_, "shapes", 3);
    WrongShapePeer peer;
    const std::string prefix = "/narad/narad/";
    json member = {{"id", "fake"},
                   {"api_addr", "127.0.0.1:1"},
                   {"cluster_addr", "127.0.0.1:" + std::to_string(peer.port())},
                   {"etcd_role", "none"},
                   {"etcd_member_id", "0"},
                   {"draining", false},
                   {"joined_at", 0}};
    ASSERT_TRUE(cluster_->etcd_put(prefix + "members/fake", member.dump()));
    ASSERT_TRUE(cluster_->etcd_put(prefix + "live/fake", "alive"));
    ASSERT_TRUE(cluster_->etcd_put(prefix + "assign/shapes/00000",
                                   json{{"owner", "fake"}, {"target", ""}}.dump()));
    ASSERT_TRUE(cluster_->etcd_put(prefix + "assign/shapes/00001",
                                   json{{"owner", "n1"}, {"target", "fake"}}.dump()));
    ASSERT_TRUE(eventually([&] {
        auto members = cluster_->members(1);
        return members && members->dump().find("\"fake\"") != std::string::npos;
    }));
    auto topic = call("GET", "/v1/topics/shapes");
    EXPECT_EQ(topic.status, 200) << topic.body;
    auto moves = call("GET", "/v1/cluster/moves?detail=true");
    EXPECT_EQ(moves.status, 200) << moves.body;
    auto consumed = call("GET", "/v1/topics/shapes/consume?partition=0");
    EXPECT_GE(consumed.status, 200) << consumed.body;
    auto acked = call("POST", "/v1/topics/shapes/ack/batch", R"({"receipt_handles":["0:1:2"]})");
    EXPECT_EQ(acked.status, 200) << acked.body;
    expect_node_serves();
    // Leave the cluster as it was for the other tests.
    ASSERT_TRUE(cluster_->etcd_put(prefix + "assign/shapes/00000",
                                   json{{"owner", "n1"}, {"target", ""}}.dump()));
    ASSERT_TRUE(cluster_->etcd_put(prefix + "assign/shapes/00001",
                                   json{{"owner", "n1"}, {"target", ""}}.dump()));
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Rule: a listen address without a port is a clear error at start-up with exit status 2, never an
// abort; so is any address the configuration cannot use.
TEST(StartupInputTest, AddressWithoutPortExitsWithStatus2) {
    TempDir dir;
    for (const auto& [flag, value, field] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"--addr", "127.0.0.1", "http.addr"},
             {"--join", "127.0.0.1", "cluster.join"},
             {"--meta-endpoints", "127.0.0.1:2379", "cluster.meta_endpoints"}}) {
        NodeOptions options;
        options.args = {flag, value};
        NodeProcess process(dir.path() + "/data" + field, options);
        process.spawn();
        ASSERT_TRUE(eventually([&] { return !process.running(); }, std::chrono::seconds(30)))
            << flag << " " << value << ": the node started";
        int status = process.exit_status();
        ASSERT_TRUE(WIFEXITED(status)) << flag << ": ended by signal " << WTERMSIG(status);
        EXPECT_EQ(WEXITSTATUS(status), 2) << flag;
        std::string log = read_file(process.log_path());
        EXPECT_NE(log.find(field), std::string::npos) << log;
        EXPECT_EQ(log.find("Assertion"), std::string::npos) << log;
    }
}

}  // namespace
}  // namespace narad::testing
