// Security on a real node (the default of `narad serve`): Basic authentication on every route but
// the health checks, Narad's grant, ownership, root and self rules, the failed-login throttle,
// the audit trail, and root seeding with a generated password; then the same rules across a
// 3-node cluster, where users live in the shared metastore and topic writes are forwarded.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "base/base64.h"
#include "cluster/harness.h"
#include "cluster/ledger.h"
#include "net/test_support.h"

namespace narad::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

constexpr const char* kRootPassword = "root-pw-for-tests";

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

NodeOptions secured(std::string password = kRootPassword) {
    NodeOptions options;
    options.env["NARAD_SECURITY_ENABLED"] = "true";
    options.env["NARAD_ADMIN_PASSWORD"] = password;  // empty: the node generates one
    return options;
}

// One request as `credentials` ("user:password"; empty sends none).
struct Answer {
    int status = 0;
    std::string body;
    net::Headers headers;
    json parsed() const { return json::parse(body, nullptr, false); }
    std::string error() const {
        json j = parsed();
        return j.is_object() ? j.value("error", "") : "";
    }
    std::optional<std::string> header(std::string_view name) const {
        for (const auto& [key, value] : headers) {
            if (key.size() != name.size()) continue;
            bool same = true;
            for (size_t i = 0; i < key.size(); ++i) {
                same = same && std::tolower(static_cast<unsigned char>(key[i])) ==
                                   std::tolower(static_cast<unsigned char>(name[i]));
            }
            if (same) return value;
        }
        return std::nullopt;
    }
};

Answer call(const NodeProcess& node, const std::string& credentials, std::string_view method,
            std::string_view target, std::string_view body = {}, const net::Headers& headers = {}) {
    net::ClientOptions options = node.client_options();
    options.basic_auth = credentials;
    net::HttpClient client(options);
    auto response =
        client.request(method, target, body, body.empty() ? "" : "application/json", headers);
    EXPECT_TRUE(response.is_ok()) << response.status().to_string();
    if (!response.is_ok()) return {};
    return {response->status, response->body, response->headers};
}

std::string root() { return std::string("admin:") + kRootPassword; }

// One plain-http GET /readyz to `port`, whatever it answers.
Result<net::HttpResponse> call_raw(uint16_t port) {
    net::ClientOptions options;
    options.port = port;
    options.connect_timeout = seconds(5);
    options.request_timeout = seconds(5);
    return net::HttpClient(options).get("/readyz");
}

void add_user(const NodeProcess& node, const std::string& name, const std::string& password,
              const std::string& grants_json, const std::string& as = root()) {
    Answer created = call(node, as, "POST", "/v1/users",
                          R"({"username":")" + name + R"(","password":")" + password +
                              R"(","grants":)" + grants_json + "}");
    ASSERT_EQ(created.status, 201) << created.body;
}

void make_topic(const NodeProcess& node, const std::string& credentials, const std::string& name) {
    Answer created = call(node, credentials, "POST", "/v1/topics", R"({"name":")" + name + R"("})");
    ASSERT_EQ(created.status, 201) << created.body;
}

class SecurityTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { node_ = suite_.start(secured()); }
    static void TearDownTestSuite() { suite_.stop(); }
    static const NodeProcess& node() { return *node_; }
    static std::string data_dir() { return suite_.data_directory(); }

    static SuiteNode suite_;
    static NodeProcess* node_;
};

SuiteNode SecurityTest::suite_;
NodeProcess* SecurityTest::node_ = nullptr;

// Rule: a request whose head already shows it cannot pass (no credentials, a user that does not
// exist) is answered 401 before its body is read: the client announced 1 MiB, sent none of it, and
// still gets its answer and a closed connection.
TEST_F(SecurityTest, HopelessCredentialsAreRefusedBeforeTheBody) {
    for (const std::string& authorization :
         {std::string(), "Authorization: Basic " + base64_encode("nobody:whatever") + "\r\n"}) {
        net::testing::RawSocket socket(node().port());
        ASSERT_TRUE(socket.connected());
        ASSERT_TRUE(socket.send_all("POST /v1/topics/any/produce HTTP/1.1\r\nHost: n\r\n" +
                                    authorization +
                                    "Content-Type: application/json\r\n"
                                    "Content-Length: 1048576\r\n\r\n"));
        std::string answer;
        EXPECT_TRUE(socket.read_until_close(answer)) << "the node waited for the body";
        EXPECT_EQ(answer.rfind("HTTP/1.1 401", 0), 0u) << answer;
        EXPECT_NE(answer.find("WWW-Authenticate: Basic realm=\"narad\""), std::string::npos)
            << answer;
    }
    // A client that sends its body right behind the head, as curl and Go do, reads the 401 too:
    // the node drops what follows instead of resetting the connection.
    net::testing::RawSocket eager(node().port());
    ASSERT_TRUE(
        eager.send_all("POST /v1/topics/any/produce HTTP/1.1\r\nHost: n\r\n"
                       "Content-Type: application/json\r\nContent-Length: 65536\r\n\r\n" +
                       std::string(65536, 'x')));
    std::string answer;
    EXPECT_TRUE(eager.read_until_close(answer));
    EXPECT_EQ(answer.rfind("HTTP/1.1 401", 0), 0u) << answer;
}

// Rule: the cluster port takes no request before its connection proved the secret: not even one
// carrying the right secret itself, the way nodes used to authenticate.
TEST_F(SecurityTest, TheClusterPortWantsAProofNotTheSecret) {
    net::ClientOptions options;
    options.port = node().cluster_port();
    net::HttpClient client(options);
    auto refused = client.request("GET", "/internal/v1/node/status", {}, "",
                                  {{"x-narad-cluster-secret", kTestClusterSecret}});
    ASSERT_TRUE(refused.is_ok()) << refused.status().to_string();
    EXPECT_EQ(refused->status, 403) << refused->body;
    EXPECT_NE(refused->body.find("has not proved the cluster secret"), std::string::npos);
}

TEST_F(SecurityTest, EveryRouteButTheHealthChecksNeedsCredentials) {
    EXPECT_EQ(call(node(), "", "GET", "/healthz").status, 200);
    EXPECT_EQ(call(node(), "", "GET", "/readyz").status, 200);
    for (const char* target : {"/v1/topics", "/v1/users", "/metrics", "/v1/cluster/members",
                               "/v1/topics/x/consume", "/no/such/route"}) {
        for (const std::string& credentials :
             {std::string(), std::string("admin:wrong"), std::string("nobody:x")}) {
            Answer refused = call(node(), credentials, "GET", target);
            EXPECT_EQ(refused.status, 401) << target << " " << credentials;
            EXPECT_EQ(refused.header("WWW-Authenticate").value_or(""), "Basic realm=\"narad\"");
            EXPECT_EQ(refused.error(), "authentication required");
        }
    }
    // A header that is not Basic, or not base64, is no credentials at all.
    for (const char* header : {"Bearer abc", "Basic !!!", "Basic YWRtaW4="}) {
        EXPECT_EQ(call(node(), "", "GET", "/v1/topics", {}, {{"Authorization", header}}).status,
                  401)
            << header;
    }
    EXPECT_EQ(call(node(), root(), "GET", "/metrics").status, 200);
    EXPECT_EQ(call(node(), root(), "GET", "/no/such/route").status, 404);
}

TEST_F(SecurityTest, TheRootUserIsSeededAndCannotBeRemovedOrDemoted) {
    Answer listed = call(node(), root(), "GET", "/v1/users/admin");
    ASSERT_EQ(listed.status, 200) << listed.body;
    json admin = listed.parsed();
    EXPECT_EQ(admin.value("username", ""), "admin");
    EXPECT_TRUE(admin.value("root", false));
    EXPECT_FALSE(admin.contains("grants"));
    EXPECT_FALSE(admin.contains("password_hash"));
    EXPECT_GT(admin.value("created_at_ms", int64_t{0}), 0);

    add_user(node(), "ops", "ops-pw", R"([{"action":"admin"}])");
    const std::string ops = "ops:ops-pw";
    Answer deleted = call(node(), ops, "DELETE", "/v1/users/admin");
    EXPECT_EQ(deleted.status, 403);
    EXPECT_EQ(deleted.error(), "the root admin cannot be deleted");
    Answer demoted = call(node(), ops, "PUT", "/v1/users/admin/grants", R"({"grants":[]})");
    EXPECT_EQ(demoted.status, 403);
    EXPECT_EQ(demoted.error(), "the root admin's grants are immutable");
    Answer root_password =
        call(node(), ops, "PUT", "/v1/users/admin/password", R"({"new_password":"x"})");
    EXPECT_EQ(root_password.status, 403);
    EXPECT_EQ(root_password.error(), "only the root admin may change the root password");
    EXPECT_EQ(call(node(), root(), "GET", "/v1/topics").status, 200) << "root still signs in";
}

TEST_F(SecurityTest, GrantsDecideProduceConsumeAndCreate) {
    add_user(node(), "writer", "w-pw",
             R"([{"action":"produce","patterns":["orders-*"]},)"
             R"({"action":"create","patterns":["orders-*"]},)"
             R"({"action":"consume","patterns":["audit"]}])");
    const std::string writer = "writer:w-pw";
    make_topic(node(), writer, "orders-eu");
    make_topic(node(), root(), "audit");

    Answer other = call(node(), writer, "POST", "/v1/topics", R"({"name":"billing"})");
    EXPECT_EQ(other.status, 403);
    EXPECT_EQ(other.error(), "create not allowed on this topic");

    EXPECT_EQ(call(node(), writer, "POST", "/v1/topics/orders-eu/produce", R"({"n":1})").status,
              202);
    Answer batch = call(node(), writer, "POST", "/v1/topics/audit/produce/batch",
                        R"({"messages":[{"payload":"x"}]})");
    EXPECT_EQ(batch.status, 403);
    EXPECT_EQ(batch.error(), "produce not allowed on this topic");
    Answer consume = call(node(), writer, "GET", "/v1/topics/orders-eu/consume");
    EXPECT_EQ(consume.status, 403);
    EXPECT_EQ(consume.error(), "consume not allowed on this topic");
    Answer ack = call(node(), writer, "POST", "/v1/topics/orders-eu/ack?receipt_handle=x");
    EXPECT_EQ(ack.status, 403);
    EXPECT_EQ(ack.error(), "consume not allowed on this topic");
    Answer replay =
        call(node(), writer, "GET", "/v1/topics/orders-eu/consume?partition=0&offset=0");
    EXPECT_EQ(replay.status, 403) << "replay is a consume";

    // Consume on "audit" covers consume and ack there, and nothing more.
    EXPECT_EQ(call(node(), root(), "POST", "/v1/topics/audit/produce", R"("m")").status, 202);
    Answer got;
    ASSERT_TRUE(eventually([&] {
        got = call(node(), writer, "GET", "/v1/topics/audit/consume?wait=1s");
        return got.status == 200;
    }));
    std::string receipt = got.parsed().value("receipt_handle", "");
    ASSERT_FALSE(receipt.empty()) << got.body;
    EXPECT_EQ(call(node(), writer, "POST", "/v1/topics/audit/ack?receipt_handle=" + receipt).status,
              204);
    EXPECT_EQ(call(node(), writer, "POST", "/v1/topics/audit/produce", R"("m")").status, 403);
}

TEST_F(SecurityTest, TheCreatorOwnsItsTopicAndOthersCannotChangeIt) {
    add_user(node(), "maker", "m-pw", R"([{"action":"create","patterns":["maker-*"]}])");
    add_user(node(), "reader", "r-pw", R"([{"action":"consume","patterns":["maker-*"]}])");
    const std::string maker = "maker:m-pw";
    const std::string reader = "reader:r-pw";
    // An owner named in the body is ignored: the caller owns what it creates.
    Answer created =
        call(node(), maker, "POST", "/v1/topics", R"({"name":"maker-a","owner":"reader"})");
    ASSERT_EQ(created.status, 201) << created.body;
    EXPECT_EQ(created.parsed().value("owner", ""), "maker");
    make_topic(node(), maker, "maker-b");

    // Ownership manages and reads; it does not produce.
    EXPECT_EQ(call(node(), maker, "GET", "/v1/topics/maker-a").status, 200);
    EXPECT_EQ(
        call(node(), maker, "PATCH", "/v1/topics/maker-a", R"({"retention_ms":7200000})").status,
        200);
    EXPECT_EQ(call(node(), maker, "POST", "/v1/topics/maker-a/produce", R"("m")").status, 403);

    // A consumer reads it and cannot change or delete it.
    EXPECT_EQ(call(node(), reader, "GET", "/v1/topics/maker-a").status, 200);
    EXPECT_EQ(call(node(), reader, "GET", "/v1/topics/maker-a/schema").status, 200);
    for (auto [method, body] :
         {std::pair<const char*, const char*>{"PATCH", R"({"partitions":4})"}, {"DELETE", ""}}) {
        Answer refused = call(node(), reader, method, "/v1/topics/maker-a", body);
        EXPECT_EQ(refused.status, 403) << method;
        EXPECT_EQ(refused.error(), "only the topic owner or an admin may modify this topic");
    }
    EXPECT_EQ(call(node(), maker, "DELETE", "/v1/topics/maker-a").status, 204);
    // An admin manages every topic.
    EXPECT_EQ(call(node(), root(), "DELETE", "/v1/topics/maker-b").status, 204);
}

TEST_F(SecurityTest, TopicReadsNeedAGrantAndTheListIsFiltered) {
    add_user(node(), "lister", "l-pw", R"([{"action":"produce","patterns":["seen-*"]}])");
    const std::string lister = "lister:l-pw";
    for (const char* name : {"hidden-1", "seen-1", "zz-hidden"}) make_topic(node(), root(), name);
    Answer hidden = call(node(), lister, "GET", "/v1/topics/hidden-1");
    EXPECT_EQ(hidden.status, 403);
    EXPECT_EQ(hidden.error(), "no grant on this topic");
    EXPECT_EQ(call(node(), lister, "GET", "/v1/topics/hidden-1/schema").status, 403);
    EXPECT_EQ(call(node(), lister, "GET", "/v1/topics/no-such-topic").status, 404);

    std::vector<std::string> names;
    std::string token;
    int pages = 0;
    do {
        Answer page = call(node(), lister, "GET", "/v1/topics?limit=1&page_token=" + token);
        ASSERT_EQ(page.status, 200) << page.body;
        json body = page.parsed();
        for (const json& topic : body["topics"]) names.push_back(topic.value("name", ""));
        token = body.value("next_page_token", "");
        ASSERT_LT(++pages, 100);
    } while (!token.empty());
    EXPECT_EQ(names, std::vector<std::string>{"seen-1"});
    EXPECT_GT(pages, 1) << "pages are cut before they are filtered";
}

TEST_F(SecurityTest, ClusterRoutesAreAnAdminsAlone) {
    add_user(node(), "plain", "p-pw", R"([{"action":"consume","patterns":["*"]}])");
    add_user(node(), "operator", "o-pw", R"([{"action":"admin"}])");
    for (const char* target : {"/v1/cluster/members", "/v1/cluster/status", "/v1/cluster/moves"}) {
        Answer refused = call(node(), "plain:p-pw", "GET", target);
        EXPECT_EQ(refused.status, 403) << target;
        EXPECT_EQ(refused.error(), "admin privileges required");
        EXPECT_EQ(call(node(), "operator:o-pw", "GET", target).status, 200) << target;
    }
    Answer decommission =
        call(node(), "plain:p-pw", "POST", "/v1/cluster/members/n1/decommission?dry_run=true");
    EXPECT_EQ(decommission.status, 403);
}

TEST_F(SecurityTest, UserRoutesFollowNaradsRules) {
    add_user(node(), "clerk", "c-pw", R"([{"action":"consume","patterns":["*"]}])");
    add_user(node(), "boss", "b-pw", R"([{"action":"admin"}])");
    const std::string clerk = "clerk:c-pw";
    const std::string boss = "boss:b-pw";
    for (auto [method, target] : {std::pair<const char*, const char*>{"GET", "/v1/users"},
                                  {"GET", "/v1/users/boss"},
                                  {"DELETE", "/v1/users/boss"}}) {
        Answer refused = call(node(), clerk, method, target);
        EXPECT_EQ(refused.status, 403) << method << " " << target;
        EXPECT_EQ(refused.error(), "admin privileges required");
    }
    struct Bad {
        std::string body;
        std::string error;
    };
    for (const Bad& bad : std::vector<Bad>{
             {R"({"username":"a/b","password":"x"})", "username must match ^[A-Za-z0-9._-]{1,64}$"},
             {R"({"username":"..","password":"x"})", "username must not be \"..\""},
             {R"({"username":"u1","password":""})", "password required"},
             {R"({"username":"u1","password":")" + std::string(73, 'p') + "\"}",
              "password must be at most 72 bytes"},
             {R"({"username":"u1","password":"x","grants":[{"action":"root"}]})",
              "unknown grant action \"root\""},
             {R"({"username":"u1","password":"x","grants":[{"action":"admin","patterns":["a"]}]})",
              "admin grants are global and must not carry patterns"},
             {R"({"username":"u1","password":"x","grants":[{"action":"produce"}]})",
              "grant \"produce\" requires at least one topic pattern"},
             {R"({"username":"u1","password":"x","extra":1})",
              "invalid json: json: unknown field \"extra\""},
         }) {
        Answer refused = call(node(), root(), "POST", "/v1/users", bad.body);
        EXPECT_EQ(refused.status, 400) << bad.body;
        EXPECT_EQ(refused.error(), bad.error) << bad.body;
    }
    EXPECT_EQ(call(node(), root(), "GET", "/v1/users/u1").status, 404) << "nothing was created";
    Answer twice =
        call(node(), root(), "POST", "/v1/users", R"({"username":"clerk","password":"x"})");
    EXPECT_EQ(twice.status, 409);

    // Only root confers admin; an admin confers the rest, even what it does not hold itself.
    Answer escalate = call(node(), boss, "POST", "/v1/users",
                           R"({"username":"boss2","password":"x","grants":[{"action":"admin"}]})");
    EXPECT_EQ(escalate.status, 403);
    EXPECT_EQ(escalate.error(), "cannot grant permissions you do not hold");
    Answer delegated = call(node(), boss, "PUT", "/v1/users/clerk/grants",
                            R"({"grants":[{"action":"produce","patterns":["x*"]}]})");
    ASSERT_EQ(delegated.status, 200) << delegated.body;
    EXPECT_EQ(delegated.parsed()["grants"],
              json::parse(R"([{"action":"produce","patterns":["x*"]}])"));
    Answer self = call(node(), boss, "PUT", "/v1/users/boss/grants", R"({"grants":[]})");
    EXPECT_EQ(self.status, 403);
    EXPECT_EQ(self.error(), "cannot modify your own grants");
    Answer self_delete = call(node(), boss, "DELETE", "/v1/users/boss");
    EXPECT_EQ(self_delete.status, 403);
    EXPECT_EQ(self_delete.error(), "cannot delete your own account");
    EXPECT_EQ(call(node(), root(), "PUT", "/v1/users/nobody/grants", R"({"grants":[]})").status,
              404);
    EXPECT_EQ(call(node(), root(), "PUT", "/v1/users/clerk/grants", R"({})").status, 400);

    // A deleted user can no longer sign in, and owns nothing: one created again under its name
    // does not inherit its topics.
    EXPECT_EQ(call(node(), root(), "PUT", "/v1/users/clerk/grants",
                   R"({"grants":[{"action":"create","patterns":["clerk-*"]}]})")
                  .status,
              200);
    make_topic(node(), clerk, "clerk-own");
    EXPECT_EQ(call(node(), clerk, "GET", "/v1/topics").status, 200);
    EXPECT_EQ(call(node(), boss, "DELETE", "/v1/users/clerk").status, 204);
    EXPECT_EQ(call(node(), clerk, "GET", "/v1/topics").status, 401);
    Answer orphan = call(node(), root(), "GET", "/v1/topics/clerk-own");
    ASSERT_EQ(orphan.status, 200) << orphan.body;
    EXPECT_FALSE(orphan.parsed().contains("owner")) << orphan.body;
    add_user(node(), "clerk", "c-pw2", "[]");
    EXPECT_EQ(call(node(), "clerk:c-pw2", "DELETE", "/v1/topics/clerk-own").status, 403);
}

TEST_F(SecurityTest, PasswordsChangeByTheirOwnerOrAnAdmin) {
    add_user(node(), "pat", "old-pw", R"([{"action":"consume","patterns":["*"]}])");
    add_user(node(), "sam", "sam-pw", R"([{"action":"consume","patterns":["*"]}])");
    const std::string target = "/v1/users/pat/password";
    Answer no_proof = call(node(), "pat:old-pw", "PUT", target, R"({"new_password":"new-pw"})");
    EXPECT_EQ(no_proof.status, 403);
    EXPECT_EQ(no_proof.error(), "current password is incorrect");
    EXPECT_EQ(call(node(), "pat:old-pw", "PUT", target,
                   R"({"new_password":"new-pw","current_password":"guess"})")
                  .status,
              403);
    Answer other = call(node(), "sam:sam-pw", "PUT", target, R"({"new_password":"mine"})");
    EXPECT_EQ(other.status, 403);
    EXPECT_EQ(other.error(), "admin required");
    Answer empty = call(node(), "pat:old-pw", "PUT", target, R"({"new_password":""})");
    EXPECT_EQ(empty.status, 400);
    EXPECT_EQ(empty.error(), "new_password required");
    Answer long_one = call(node(), "pat:old-pw", "PUT", target,
                           R"({"new_password":")" + std::string(73, 'x') + "\"}");
    EXPECT_EQ(long_one.status, 400);

    EXPECT_EQ(call(node(), "pat:old-pw", "PUT", target,
                   R"({"new_password":"new-pw","current_password":"old-pw"})")
                  .status,
              204);
    EXPECT_EQ(call(node(), "pat:old-pw", "GET", "/v1/topics").status, 401);
    EXPECT_EQ(call(node(), "pat:new-pw", "GET", "/v1/topics").status, 200);
    // The grants are untouched by the password change.
    EXPECT_EQ(call(node(), root(), "GET", "/v1/users/pat").parsed()["grants"],
              json::parse(R"([{"action":"consume","patterns":["*"]}])"));
    // An admin resets without the old password.
    EXPECT_EQ(call(node(), root(), "PUT", target, R"({"new_password":"reset-pw"})").status, 204);
    EXPECT_EQ(call(node(), "pat:reset-pw", "GET", "/v1/topics").status, 200);
}

TEST_F(SecurityTest, WrongPasswordsThrottleThatUserOnly) {
    add_user(node(), "target", "t-pw", R"([{"action":"consume","patterns":["*"]}])");
    add_user(node(), "bystander", "b-pw", R"([{"action":"consume","patterns":["*"]}])");
    // Signed in once, so the node has the right password cached: the throttle still wins.
    ASSERT_EQ(call(node(), "target:t-pw", "GET", "/v1/topics").status, 200);
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(call(node(), "target:guess" + std::to_string(i), "GET", "/v1/topics").status,
                  401);
    }
    Answer throttled = call(node(), "target:guess5", "GET", "/v1/topics");
    EXPECT_EQ(throttled.status, 429);
    EXPECT_EQ(throttled.error(), "too many failed authentication attempts");
    EXPECT_EQ(call(node(), "target:t-pw", "GET", "/v1/topics").status, 429)
        << "the right password waits too: the throttle tells a guesser nothing";
    EXPECT_EQ(call(node(), "bystander:b-pw", "GET", "/v1/topics").status, 200);
}

TEST_F(SecurityTest, UserChangesAreAuditedWithoutSecrets) {
    const std::string password = "audit-secret-pw";
    add_user(node(), "audited", password, R"([{"action":"consume","patterns":["*"]}])");
    EXPECT_EQ(call(node(), root(), "PUT", "/v1/users/audited/grants",
                   R"({"grants":[{"action":"admin"}]})")
                  .status,
              200);
    EXPECT_EQ(
        call(node(), "audited:" + password, "PUT", "/v1/users/admin/grants", R"({"grants":[]})")
            .status,
        403);
    EXPECT_EQ(call(node(), root(), "DELETE", "/v1/users/audited").status, 204);

    std::string trail = read_file(data_dir() + "/audit.log");
    std::vector<json> lines;
    std::istringstream in(trail);
    for (std::string line; std::getline(in, line);) {
        json entry = json::parse(line, nullptr, false);
        if (entry.is_object() && entry.value("target", "") == "audited") lines.push_back(entry);
        if (entry.is_object() && entry.value("actor", "") == "audited") lines.push_back(entry);
    }
    ASSERT_EQ(lines.size(), 4u) << trail;
    EXPECT_EQ(lines[0].value("event", ""), "user.create");
    EXPECT_EQ(lines[0].value("actor", ""), "admin");
    EXPECT_EQ(lines[0].value("outcome", ""), "ok");
    EXPECT_EQ(lines[0].value("status", 0), 201);
    EXPECT_EQ(lines[1].value("event", ""), "user.grants");
    EXPECT_EQ(lines[2].value("event", ""), "user.grants");
    EXPECT_EQ(lines[2].value("actor", ""), "audited");
    EXPECT_EQ(lines[2].value("outcome", ""), "denied");
    EXPECT_EQ(lines[3].value("event", ""), "user.delete");
    EXPECT_EQ(trail.find(password), std::string::npos) << "a password reached the audit log";
    EXPECT_EQ(trail.find("$argon2"), std::string::npos) << "a hash reached the audit log";
    EXPECT_EQ(read_file(node_->log_path()).find(password), std::string::npos);
}

// The CLI's user commands against the node: add with the password on stdin, revoke part of the
// grants, passwd as the user itself (proving the old password) and as an admin, ls and rm.
TEST_F(SecurityTest, TheUserCommandsOfTheCli) {
    const std::string server = "-s http://127.0.0.1:" + std::to_string(node().port());
    const std::string as_root = server + " -u admin -p " + kRootPassword + " ";
    auto [added, add_out] =
        run_narad_cli(as_root +
                          "user add cli-user --user-password-stdin --grant produce:cli-a,cli-b "
                          "--grant consume:cli-a",
                      "cli-pw-1\n");
    ASSERT_EQ(added, 0) << add_out;
    EXPECT_EQ(call(node(), "cli-user:cli-pw-1", "GET", "/v1/topics").status, 200);

    auto [revoked, revoke_out] =
        run_narad_cli(as_root + "user revoke cli-user --grant produce:cli-b");
    ASSERT_EQ(revoked, 0) << revoke_out;
    EXPECT_EQ(call(node(), root(), "GET", "/v1/users/cli-user").parsed()["grants"],
              json::parse(R"([{"action":"produce","patterns":["cli-a"]},)"
                          R"({"action":"consume","patterns":["cli-a"]}])"));

    const std::string as_user = server + " -u cli-user -p cli-pw-1 ";
    auto [self, self_out] = run_narad_cli(as_user +
                                              "user passwd cli-user --current-password-stdin "
                                              "--new-password-stdin",
                                          "cli-pw-1\ncli-pw-2\n");
    ASSERT_EQ(self, 0) << self_out;
    EXPECT_EQ(self_out, "password of \"cli-user\" changed\n");
    EXPECT_EQ(call(node(), "cli-user:cli-pw-2", "GET", "/v1/topics").status, 200);
    auto [wrong, wrong_out] =
        run_narad_cli(server +
                      " -u cli-user -p cli-pw-2 user passwd cli-user --new-password x "
                      "--current-password nope");
    EXPECT_NE(wrong, 0);
    EXPECT_NE(wrong_out.find("current password is incorrect"), std::string::npos) << wrong_out;

    auto [listed, list_out] = run_narad_cli(as_root + "user ls");
    ASSERT_EQ(listed, 0) << list_out;
    EXPECT_NE(list_out.find("\"cli-user\""), std::string::npos) << list_out;
    EXPECT_EQ(list_out.find("password"), std::string::npos) << list_out;
    auto [removed, rm_out] = run_narad_cli(as_root + "user rm cli-user");
    ASSERT_EQ(removed, 0) << rm_out;
    EXPECT_EQ(call(node(), "cli-user:cli-pw-2", "GET", "/v1/topics").status, 401);
}

TEST(SecuritySeedTest, AGeneratedRootPasswordGoesToAPrivateFileAndNeverToTheLog) {
    TempDir dir;
    NodeProcess node(dir.path() + "/data", secured(/*password=*/""));
    node.start();
    std::string path = dir.path() + "/data/admin-password";
    std::string password;
    ASSERT_TRUE(eventually([&] {
        password = read_file(path);
        return !password.empty();
    }));
    ASSERT_EQ(password.back(), '\n');
    password.pop_back();
    EXPECT_EQ(password.size(), 24u);
    struct stat info {};
    ASSERT_EQ(::stat(path.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0600u);
    EXPECT_EQ(call(node, "admin:" + password, "GET", "/v1/users").status, 200);
    std::string log = read_file(node.log_path());
    EXPECT_EQ(log.find(password), std::string::npos) << "the generated password was logged";
    EXPECT_NE(log.find("seeded root admin with a generated password"), std::string::npos);

    // A restart keeps the root user and writes no second password.
    ASSERT_EQ(node.stop(), 0);
    node.start();
    EXPECT_EQ(call(node, "admin:" + password, "GET", "/v1/users").status, 200);
    EXPECT_FALSE(std::ifstream(dir.path() + "/data/admin-password.pending").good());
    EXPECT_EQ(node.stop(), 0);
}

TEST(SecuritySeedTest, MetricsCanBeOpenedToScrapersWithoutCredentials) {
    TempDir dir;
    NodeOptions options = secured();
    options.env["NARAD_HTTP_METRICS_UNAUTHENTICATED"] = "true";
    NodeProcess node(dir.path() + "/data", options);
    node.start();
    EXPECT_EQ(call(node, "", "GET", "/metrics").status, 200);
    EXPECT_EQ(call(node, "", "GET", "/v1/topics").status, 401);
    EXPECT_EQ(node.stop(), 0);
}

// Clients that hold connections without finishing a request (slowloris), connections that sit
// idle, and a client guessing a password in a loop hold no thread: meanwhile another user's
// produces are all answered, each within a bound; the server closes the trickling connections at
// the read deadline and the idle ones at the idle timeout; the guesser is throttled and its
// victim's name with it, while the other user keeps signing in.
TEST(HostileClientsTest, SlowIdleAndGuessingClientsDoNotStarveOthers) {
    TempDir dir;
    NodeOptions options = secured();
    options.env["NARAD_HTTP_READ_TIMEOUT"] = "2s";
    options.env["NARAD_HTTP_IDLE_TIMEOUT"] = "3s";
    NodeProcess node(dir.path() + "/data", options);
    node.start();
    add_user(node, "victim", "v-pw", R"([{"action":"consume","patterns":["*"]}])");
    add_user(node, "worker", "w-pw", R"([{"action":"produce","patterns":["busy"]}])");
    make_topic(node, root(), "busy");

    std::vector<std::unique_ptr<net::testing::RawSocket>> idle;
    for (int i = 0; i < 300; ++i) {
        idle.push_back(std::make_unique<net::testing::RawSocket>(node.port()));
        ASSERT_TRUE(idle.back()->connected());
    }
    std::vector<std::unique_ptr<net::testing::RawSocket>> slow;
    for (int i = 0; i < 30; ++i) {
        slow.push_back(std::make_unique<net::testing::RawSocket>(node.port()));
        ASSERT_TRUE(slow.back()->send_all("GET /v1/topics HTTP/1.1\r\nHost: x\r\n"));
    }
    std::atomic<bool> stop{false};
    std::thread trickle([&] {
        // One more header byte every 200 ms: the head never completes.
        while (!stop.load()) {
            for (auto& socket : slow) (void)socket->send_all("X");
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
    });
    std::atomic<int> guessed_401{0}, guessed_429{0};
    auto guessing_since = std::chrono::steady_clock::now();
    std::thread guesser([&] {
        for (int i = 0; !stop.load(); ++i) {
            int status = call(node, "victim:guess" + std::to_string(i), "GET", "/v1/topics").status;
            if (status == 401) ++guessed_401;
            if (status == 429) ++guessed_429;
        }
    });

    net::ClientOptions worker_options;
    worker_options.port = node.port();
    worker_options.basic_auth = "worker:w-pw";
    worker_options.request_timeout = seconds(5);  // a bound on each answer, not a speed
    net::HttpClient worker(worker_options);
    // At least 40 produces, and on until the guesser has been throttled (bounded).
    for (int i = 0; i < 40 || (guessed_429.load() == 0 && i < 5000); ++i) {
        auto produced = worker.request("POST", "/v1/topics/busy/produce", "\"m\"");
        ASSERT_TRUE(produced.is_ok()) << i << ": " << produced.status().to_string();
        EXPECT_EQ(produced->status, 202) << produced->body;
    }
    EXPECT_EQ(call(node, "victim:v-pw", "GET", "/v1/topics").status, 429)
        << "the guessed name stays throttled while the guessing goes on";
    stop = true;
    trickle.join();
    guesser.join();
    auto guessing_for = std::chrono::steady_clock::now() - guessing_since;
    EXPECT_GE(guessed_401.load(), 1);
    // The bucket's 5, and one more per 12 s of guessing.
    EXPECT_LE(guessed_401.load(), 5 + 1 + guessing_for / seconds(12));
    EXPECT_GT(guessed_429.load(), 0);

    std::string ignored;
    for (auto& socket : slow) {
        EXPECT_TRUE(socket->read_until_close(ignored, seconds(10)))
            << "a trickling connection outlived the read deadline";
    }
    for (auto& socket : idle) {
        EXPECT_TRUE(socket->read_until_close(ignored, seconds(10)))
            << "an idle connection outlived the idle timeout";
    }
    EXPECT_EQ(node.stop(), 0);
}

// Rule: one client address cannot fill the node's connection cap: its connections beyond
// http.max_connections_per_address are answered 503 and closed, so a client from another address
// still gets a connection although the flood holds more than the node-wide cap would allow.
TEST(HostileClientsTest, OneAddressCannotFillTheNode) {
    TempDir dir;
    NodeOptions options = secured();
    options.env["NARAD_HTTP_MAX_CONNECTIONS"] = "110";
    options.env["NARAD_HTTP_MAX_CONNECTIONS_PER_ADDRESS"] = "100";
    options.env["NARAD_HTTP_IDLE_TIMEOUT"] = "60s";
    NodeProcess node(dir.path() + "/data", options);
    node.start();
    std::vector<std::unique_ptr<net::testing::RawSocket>> flood;
    int refused = 0;
    for (int i = 0; i < 130; ++i) {
        flood.push_back(std::make_unique<net::testing::RawSocket>(node.port(), "127.0.0.3"));
        ASSERT_TRUE(flood.back()->connected());
    }
    ASSERT_TRUE(eventually([&] {
        return scrape_metric(node, "narad_http_connections_refused_total").value_or(0) == 30;
    }));
    for (auto& socket : flood) {
        // A refused connection has its 503 waiting and is closed; an admitted one is silent.
        pollfd ready{socket->fd(), POLLIN, 0};
        if (::poll(&ready, 1, 0) != 1) continue;
        std::string answer;
        EXPECT_TRUE(socket->read_until_close(answer, seconds(5)));
        EXPECT_EQ(answer.rfind("HTTP/1.1 503", 0), 0u) << answer;
        EXPECT_NE(answer.find("too many connections from this address"), std::string::npos);
        ++refused;
    }
    EXPECT_EQ(refused, 30);
    net::ClientOptions client_options;
    client_options.port = node.port();
    client_options.basic_auth = root();
    client_options.connect_timeout = seconds(5);
    client_options.request_timeout = seconds(5);  // a bound on the answer, not a speed
    net::HttpClient other(client_options);
    auto served = other.request("GET", "/v1/topics");
    ASSERT_TRUE(served.is_ok()) << served.status().to_string();
    EXPECT_EQ(served->status, 200);
    flood.clear();
    EXPECT_EQ(node.stop(), 0);
}

// With security on, the in-flight consume cap is a user's, as Narad's: one user holding its only
// slot in a long poll does not stop another user on the same address, and is itself refused 429.
TEST(SecurityLimitsTest, TheConsumeCapIsPerUser) {
    TempDir dir;
    NodeOptions options = secured();
    options.env["NARAD_HTTP_MAX_CONSUME_IN_FLIGHT_PER_IDENTITY"] = "1";
    NodeProcess node(dir.path() + "/data", options);
    node.start();
    for (const char* name : {"ann", "ben"}) {
        add_user(node, name, "pw", R"([{"action":"consume","patterns":["*"]}])");
        // Signed in once, so the node recognises them before authenticating the next request.
        ASSERT_EQ(call(node, std::string(name) + ":pw", "GET", "/v1/topics").status, 200);
    }
    make_topic(node, root(), "capped");
    std::thread held([&] {
        EXPECT_EQ(call(node, "ann:pw", "GET", "/v1/topics/capped/consume?wait=5s").status, 204);
    });
    ASSERT_TRUE(eventually(
        [&] { return scrape_metric(node, "narad_http_requests_in_flight").value_or(0) >= 2; },
        seconds(5)))
        << "ann's poll never reached the node";
    EXPECT_EQ(call(node, "ben:pw", "GET", "/v1/topics/capped/consume?wait=0s").status, 204)
        << "ben has a slot of his own";
    Answer second = call(node, "ann:pw", "GET", "/v1/topics/capped/consume?wait=0s");
    EXPECT_EQ(second.status, 429) << second.body;
    held.join();
    EXPECT_EQ(node.stop(), 0);
}

// Users live in the shared metastore: one made through any node signs in on every node, a topic
// created through a node that is not the controller is owned by its caller, and a grant change
// takes effect everywhere.
TEST(SecurityClusterTest, UsersAndGrantsHoldOnEveryNode) {
    ClusterOptions options;
    options.nodes = 3;
    options.env["NARAD_SECURITY_ENABLED"] = "true";
    options.env["NARAD_ADMIN_PASSWORD"] = kRootPassword;
    Cluster cluster(options);
    cluster.start();
    std::string controller = cluster.controller_seen_by(1);
    int writer_node = 0;
    for (int i = 1; i <= 3; ++i) {
        if (cluster.node(i).node_id() != controller) writer_node = i;
    }
    ASSERT_NE(writer_node, 0);
    add_user(
        cluster.node(1), "dev", "dev-pw",
        R"([{"action":"create","patterns":["dev-*"]},{"action":"produce","patterns":["dev-*"]}])");
    for (int i = 1; i <= 3; ++i) {
        EXPECT_TRUE(eventually(
            [&] { return call(cluster.node(i), "dev:dev-pw", "GET", "/v1/topics").status == 200; },
            seconds(10)))
            << "node " << i;
        EXPECT_EQ(call(cluster.node(i), "dev:dev-pw", "GET", "/v1/cluster/members").status, 403);
    }
    Answer created = call(cluster.node(writer_node), "dev:dev-pw", "POST", "/v1/topics",
                          R"({"name":"dev-orders"})");
    ASSERT_EQ(created.status, 201) << created.body;
    EXPECT_EQ(created.parsed().value("owner", ""), "dev") << "the forwarded create kept its caller";
    Answer refused = call(cluster.node(writer_node), "dev:dev-pw", "POST", "/v1/topics",
                          R"({"name":"prod-orders"})");
    EXPECT_EQ(refused.status, 403) << refused.body;
    // The parameter that carries a forwarded caller is refused from clients, however spelled,
    // and a fragment cannot hide the real one from the controller.
    for (int i = 1; i <= 3; ++i) {
        for (const char* target :
             {"/v1/topics?narad_caller=admin", "/v1/topics?x=1&narad%5Fcaller=admin"}) {
            Answer forged =
                call(cluster.node(i), "dev:dev-pw", "POST", target, R"({"name":"prod-forged"})");
            EXPECT_EQ(forged.status, 400) << "node " << i << " " << target << ": " << forged.body;
        }
        Answer hidden = call(cluster.node(i), "dev:dev-pw", "POST",
                             "/v1/topics?x=1#&narad_caller=admin", R"({"name":"prod-hidden"})");
        EXPECT_NE(hidden.status, 201) << "node " << i << ": " << hidden.body;
    }
    EXPECT_EQ(call(cluster.node(1), root(), "GET", "/v1/topics/prod-forged").status, 404);
    EXPECT_EQ(call(cluster.node(1), root(), "GET", "/v1/topics/prod-hidden").status, 404);
    EXPECT_EQ(call(cluster.node(3), "dev:dev-pw", "POST", "/v1/topics/dev-orders/produce", "\"m\"")
                  .status,
              202);
    ASSERT_EQ(
        call(cluster.node(2), root(), "PUT", "/v1/users/dev/grants", R"({"grants":[]})").status,
        200);
    for (int i = 1; i <= 3; ++i) {
        EXPECT_TRUE(eventually(
            [&] {
                return call(cluster.node(i), "dev:dev-pw", "POST", "/v1/topics/dev-orders/produce",
                            "\"m\"")
                           .status == 403;
            },
            seconds(10)))
            << "node " << i;
    }
}

// Two nodes each owning partitions of a new topic `name`: 60 messages produced half through each
// node (so each commits to partitions the other owns) all come back through node 2, acked.
void commit_and_consume_across(Cluster& cluster, const std::string& name) {
    Answer created = call(cluster.node(1), root(), "POST", "/v1/topics",
                          R"({"name":")" + name + R"(","partitions":4})");
    ASSERT_EQ(created.status, 201) << created.body;
    std::map<std::string, int> owners;
    ASSERT_TRUE(eventually([&] {
        owners = owned_partitions(cluster, 1);
        return owners["n1"] > 0 && owners["n2"] > 0;
    })) << "the topic's partitions are not spread over both nodes";
    constexpr int kMessages = 60;
    Ledger ledger(kMessages);
    for (int id = 0; id < kMessages; ++id) {
        Answer produced =
            call(cluster.node(1 + id % 2), root(), "POST", "/v1/topics/" + name + "/produce",
                 "{\"id\":" + std::to_string(id) + "}");
        ASSERT_EQ(produced.status, 202) << produced.body;
        ledger.accept(id);
    }
    auto consumer = cluster.node(2).client();
    EXPECT_TRUE(eventually(
        [&] {
            consume_and_ack(consumer, name, ledger);
            return ledger.nothing_lost();
        },
        seconds(60), std::chrono::milliseconds(0)))
        << ledger.summary();
}

// Rule: the cluster secret rotates without a cut: a node holding the new secret and the old one
// (NARAD_CLUSTER_SECRET_PREVIOUS) and a node holding only the old one prove to each other, so
// commits and consumes cross between them both ways; a node with another secret cannot join, and
// says why at once.
TEST(SecurityClusterTest, TheClusterSecretRotatesWithoutACut) {
    ClusterOptions options;
    options.nodes = 2;
    options.voters = 1;
    options.env["NARAD_SECURITY_ENABLED"] = "true";
    options.env["NARAD_ADMIN_PASSWORD"] = kRootPassword;
    options.node_env[1] = {{"NARAD_CLUSTER_SECRET", "new-secret"},
                           {"NARAD_CLUSTER_SECRET_PREVIOUS", "old-secret"}};
    options.node_env[2] = {{"NARAD_CLUSTER_SECRET", "old-secret"}};
    Cluster cluster(options);
    cluster.start();
    commit_and_consume_across(cluster, "rotation");
    EXPECT_NE(read_file(cluster.node(1).log_path()).find("proved the previous cluster secret"),
              std::string::npos);

    NodeOptions outsider;
    outsider.node_id = "n3";
    outsider.join = cluster.node(1).cluster_address();
    outsider.env = options.env;
    outsider.env["NARAD_CLUSTER_SECRET"] = "some-other-secret";
    NodeProcess stranger(cluster.directory() + "/stranger", outsider);
    stranger.spawn();
    ASSERT_TRUE(eventually([&] { return !stranger.running(); }, seconds(30)))
        << "a node with another secret kept trying to join";
    EXPECT_NE(stranger.exit_status(), 0);
    std::string log = read_file(stranger.log_path());
    EXPECT_NE(log.find("did not prove that it holds this node's cluster secret"), std::string::npos)
        << log;
    EXPECT_NE(log.find("NARAD_CLUSTER_SECRET"), std::string::npos) << log;
    auto members = cluster.members(1);
    ASSERT_TRUE(members.has_value());
    EXPECT_EQ(members->dump().find("\"n3\""), std::string::npos);
}

// Rule: with TLS configured, the API port speaks only https (the CLI included, trusting
// SSL_CERT_FILE) and the cluster port only mutual TLS with certificates the cluster's authority
// signed, while commits and consumes cross between the nodes; SIGHUP puts a renewed API
// certificate in force without a restart.
TEST(SecurityTlsTest, EveryPortSpeaksTlsAndRenewsOnSighup) {
    TempDir pki;
    ASSERT_TRUE(net::testing::make_test_certificates(pki.path(),
                                                     {"api-ca", "cluster-ca", "other-ca"},
                                                     {{"api", "api-ca", "IP:127.0.0.1"},
                                                      {"api-renewed", "other-ca", "IP:127.0.0.1"},
                                                      {"n1", "cluster-ca", "IP:127.0.0.1"},
                                                      {"n2", "cluster-ca", "IP:127.0.0.1"},
                                                      {"intruder", "other-ca", "IP:127.0.0.1"}}));
    auto file = [&](const std::string& name) { return pki.path() + "/" + name; };
    std::filesystem::copy_file(file("api.pem"), file("live.pem"));
    std::filesystem::copy_file(file("api.key"), file("live.key"));
    ClusterOptions options;
    options.nodes = 2;
    options.voters = 2;  // both host an etcd member: their peer link runs mutual TLS too
    options.env["NARAD_SECURITY_ENABLED"] = "true";
    options.env["NARAD_ADMIN_PASSWORD"] = kRootPassword;
    options.env["NARAD_TLS_CERT_FILE"] = file("live.pem");
    options.env["NARAD_TLS_KEY_FILE"] = file("live.key");
    options.api_ca_file = file("api-ca.pem");
    for (int i : {1, 2}) {
        std::string node = "n" + std::to_string(i);
        options.node_env[i] = {{"NARAD_CLUSTER_TLS_CERT_FILE", file(node + ".pem")},
                               {"NARAD_CLUSTER_TLS_KEY_FILE", file(node + ".key")},
                               {"NARAD_CLUSTER_TLS_CA_FILE", file("cluster-ca.pem")}};
    }
    Cluster cluster(options);
    cluster.start();
    commit_and_consume_across(cluster, "sealed");

    auto plain = call_raw(cluster.node(1).port());
    EXPECT_FALSE(plain.is_ok() && plain->status > 0) << "the API port answered plain http";
    auto dial_cluster = [&](std::optional<net::TlsFiles> identity) {
        net::ClientOptions dial;
        dial.port = cluster.node(1).cluster_port();
        dial.connect_timeout = seconds(5);
        dial.request_timeout = seconds(5);
        if (identity) dial.tls = net::ClientTls{*identity, net::HostCheck::signature_only};
        return net::HttpClient(dial).request("POST", "/internal/v1/hello");
    };
    EXPECT_FALSE(dial_cluster(std::nullopt).is_ok()) << "the cluster port answered plain http";
    EXPECT_FALSE(dial_cluster(net::TlsFiles{"", "", file("cluster-ca.pem")}).is_ok())
        << "the cluster port took a client without a certificate";
    EXPECT_FALSE(dial_cluster(net::TlsFiles{file("intruder.pem"), file("intruder.key"),
                                            file("cluster-ca.pem")})
                     .is_ok())
        << "the cluster port took a certificate another authority signed";
    auto member =
        dial_cluster(net::TlsFiles{file("n2.pem"), file("n2.key"), file("cluster-ca.pem")});
    ASSERT_TRUE(member.is_ok()) << member.status().to_string();
    EXPECT_EQ(member->status, 400) << "past TLS, the handshake still wants its nonce";

    // The supervised etcd members take the cluster certificates: https with client certificates.
    for (int i : {1, 2}) {
        net::ClientOptions etcd;
        etcd.port = cluster.node(i).etcd_client_port();
        etcd.connect_timeout = seconds(5);
        etcd.request_timeout = seconds(5);
        EXPECT_FALSE(net::HttpClient(etcd).get("/health").is_ok()) << "etcd answered plain http";
        etcd.tls = net::ClientTls{{"", "", file("cluster-ca.pem")}, net::HostCheck::signature_only};
        EXPECT_FALSE(net::HttpClient(etcd).get("/health").is_ok())
            << "etcd took a client without a certificate";
        etcd.tls->files = {file("n1.pem"), file("n1.key"), file("cluster-ca.pem")};
        auto health = net::HttpClient(etcd).get("/health");
        ASSERT_TRUE(health.is_ok()) << health.status().to_string();
        EXPECT_EQ(health->status, 200) << health->body;
    }

    ::setenv("SSL_CERT_FILE", file("api-ca.pem").c_str(), 1);
    auto [listed, out] =
        run_narad_cli("-s https://127.0.0.1:" + std::to_string(cluster.node(2).port()) +
                      " -u admin -p " + kRootPassword + " topic ls");
    EXPECT_EQ(listed, 0) << out;
    EXPECT_NE(out.find("sealed"), std::string::npos) << out;
    EXPECT_EQ(out.find("warning"), std::string::npos) << out;
    ::unsetenv("SSL_CERT_FILE");

    std::filesystem::copy_file(file("api-renewed.pem"), file("live.pem"),
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(file("api-renewed.key"), file("live.key"),
                               std::filesystem::copy_options::overwrite_existing);
    ASSERT_EQ(::kill(cluster.node(1).pid(), SIGHUP), 0);
    net::ClientOptions renewed;
    renewed.port = cluster.node(1).port();
    renewed.basic_auth = root();
    renewed.connect_timeout = seconds(5);
    renewed.tls = net::ClientTls{{"", "", file("other-ca.pem")}, net::HostCheck::name};
    EXPECT_TRUE(eventually([&] {
        auto answer = net::HttpClient(renewed).get("/v1/topics");
        return answer.is_ok() && answer->status == 200;
    })) << "the renewed certificate never came into force";
    // Logged once every port has its new files, which may be just after the API port took them.
    EXPECT_TRUE(eventually([&] {
        return read_file(cluster.node(1).log_path()).find("TLS certificates reloaded") !=
               std::string::npos;
    }));
    EXPECT_TRUE(cluster.node(1).running());
}

}  // namespace
}  // namespace narad::testing
