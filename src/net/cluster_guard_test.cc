#include "net/cluster_guard.h"

#include <gtest/gtest.h>

#include "net/http_client.h"
#include "net/http_server.h"
#include "net/peer_pool.h"
#include "net/test_support.h"

namespace narad::net {
namespace {

using testing::FunctionHandler;
using testing::text_response;

std::string header_of(const HttpResponse& response, std::string_view name) {
    for (const auto& [key, value] : response.headers) {
        if (key == name) return value;
    }
    return "";
}

class ClusterGuardTest : public ::testing::Test {
  protected:
    // One request on the connection `connection`.
    HttpResponse call(ClusterGuard& guard, const std::shared_ptr<ConnectionState>& connection,
                      std::string target, Headers headers = {}, std::string method = "POST") {
        HttpRequest request;
        request.method = std::move(method);
        request.target = std::move(target);
        request.headers = std::move(headers);
        request.connection = connection;
        return testing::screen_and_handle(guard, std::move(request));
    }
    HttpResponse hello(ClusterGuard& guard, const std::shared_ptr<ConnectionState>& connection,
                       const std::string& nonce) {
        return call(guard, connection, std::string(auth::kClusterHelloPath),
                    {{std::string(auth::kClusterNonceHeader), nonce}});
    }
    HttpResponse prove(ClusterGuard& guard, const std::shared_ptr<ConnectionState>& connection,
                       const std::string& proof) {
        return call(guard, connection, std::string(auth::kClusterProofPath),
                    {{std::string(auth::kClusterProofHeader), proof}});
    }
    // The dialling side's two steps with `secret`; the proof step's answer.
    HttpResponse handshake(ClusterGuard& guard, const std::shared_ptr<ConnectionState>& connection,
                           std::string_view secret) {
        std::string nonce = auth::make_nonce();
        auto answer = hello(guard, connection, nonce);
        EXPECT_EQ(answer.status, 200) << answer.body;
        last_proof_ = auth::cluster_proof(secret, auth::ProofRole::client, nonce,
                                          header_of(answer, auth::kClusterNonceHeader));
        return prove(guard, connection, last_proof_);
    }
    static std::shared_ptr<ConnectionState> fresh() { return std::make_shared<ConnectionState>(); }

    FunctionHandler inner_{[](HttpRequest request, Responder respond) {
        respond(text_response(200, "inner " + request.path));
    }};
    std::string last_proof_;
};

// Rule: with no secret every request is refused 403, the handshake included.
TEST_F(ClusterGuardTest, NoSecretRefusesEverything) {
    ClusterGuard guard({}, PlaneAccess::proved, inner_);
    auto connection = fresh();
    connection->authenticated = true;
    auto refused = call(guard, connection, "/internal/v1/ping", {}, "GET");
    EXPECT_EQ(refused.status, 403);
    EXPECT_NE(refused.body.find("cluster secret not configured"), std::string::npos);
    EXPECT_EQ(hello(guard, fresh(), auth::make_nonce()).status, 403);
}

// Rule: a connection that has not proved the secret is refused 403 (a JSON error) whatever the
// route, and the old header carrying the secret itself proves nothing; after a right proof the
// inner handler sees the requests.
TEST_F(ClusterGuardTest, RequestsNeedAProvedConnection) {
    ClusterGuard guard({.current = "s3cret"}, PlaneAccess::proved, inner_);
    auto connection = fresh();
    auto refused = call(guard, connection, "/internal/v1/ping", {}, "GET");
    EXPECT_EQ(refused.status, 403);
    EXPECT_EQ(refused.content_type, "application/json");
    EXPECT_NE(refused.body.find("has not proved the cluster secret"), std::string::npos);
    EXPECT_EQ(
        call(guard, connection, "/internal/v1/ping", {{"x-narad-cluster-secret", "s3cret"}}, "GET")
            .status,
        403);
    EXPECT_EQ(call(guard, nullptr, "/internal/v1/ping", {}, "GET").status, 403);

    EXPECT_EQ(handshake(guard, connection, "s3cret").status, 204);
    auto served = call(guard, connection, "/internal/v1/ping", {}, "GET");
    EXPECT_EQ(served.status, 200);
    EXPECT_EQ(served.body, "inner /internal/v1/ping");
}

// Rule: the guard proves itself with every secret it holds, bound to the dialler's nonce; a
// malformed nonce is 400.
TEST_F(ClusterGuardTest, HelloProvesEverySecretHeld) {
    ClusterGuard guard({.current = "new", .previous = "old"}, PlaneAccess::proved, inner_);
    std::string nonce = auth::make_nonce();
    auto answer = hello(guard, fresh(), nonce);
    ASSERT_EQ(answer.status, 200);
    std::string server_nonce = header_of(answer, auth::kClusterNonceHeader);
    EXPECT_TRUE(auth::valid_nonce(server_nonce));
    EXPECT_EQ(header_of(answer, auth::kClusterProofHeader),
              auth::cluster_proof("new", auth::ProofRole::server, nonce, server_nonce) + "," +
                  auth::cluster_proof("old", auth::ProofRole::server, nonce, server_nonce));
    EXPECT_EQ(hello(guard, fresh(), "short").status, 400);
}

// Rule: a wrong proof is 403 and leaves the connection unproved; the previous secret is accepted
// during a rotation and not after it; a proof counts for its own connection's nonces only, once.
TEST_F(ClusterGuardTest, WrongReplayedOrReusedProofsAreRefused) {
    ClusterGuard guard({.current = "new", .previous = "old"}, PlaneAccess::proved, inner_);
    auto wrong = fresh();
    EXPECT_EQ(handshake(guard, wrong, "wrong").status, 403);
    EXPECT_EQ(call(guard, wrong, "/internal/v1/ping", {}, "GET").status, 403);

    auto rotated = fresh();
    EXPECT_EQ(handshake(guard, rotated, "old").status, 204);
    EXPECT_EQ(call(guard, rotated, "/internal/v1/ping", {}, "GET").status, 200);
    std::string recorded = last_proof_;
    // The same proof again on the same connection: its nonces are spent.
    EXPECT_EQ(prove(guard, rotated, recorded).status, 403);

    // The recorded proof on another connection, after its own hello: other nonces, refused.
    auto other = fresh();
    ASSERT_EQ(hello(guard, other, auth::make_nonce()).status, 200);
    EXPECT_EQ(prove(guard, other, recorded).status, 403);
    EXPECT_EQ(call(guard, other, "/internal/v1/ping", {}, "GET").status, 403);
    // A proof with no hello before it has nothing to be checked against.
    EXPECT_EQ(prove(guard, fresh(), recorded).status, 403);

    ClusterGuard after({.current = "new"}, PlaneAccess::proved, inner_);
    EXPECT_EQ(handshake(after, fresh(), "old").status, 403);
}

// Rule: an open plane (security off, no secret) passes every request unproved.
TEST_F(ClusterGuardTest, OpenPlaneNeedsNoProof) {
    ClusterGuard guard({}, PlaneAccess::open, inner_);
    EXPECT_EQ(call(guard, fresh(), "/internal/v1/ping", {}, "GET").status, 200);
}

// Rule: over real sockets PeerPool and ClusterGuard prove to each other and calls go through on
// one connection; a pool with another secret reaches nothing; a client that skips the handshake
// is answered 403 and its connection closed with the body unread.
TEST_F(ClusterGuardTest, PeerPoolAndGuardOverTheWire) {
    std::atomic<int> served{0};
    FunctionHandler counting{[&served](HttpRequest request, Responder respond) {
        ++served;
        respond(text_response(200, "pong " + request.body));
    }};
    ClusterGuard guard({.current = "s3cret"}, PlaneAccess::proved, counting);
    ServerOptions options;
    options.address = "127.0.0.1";
    options.port = 0;
    options.shutdown_grace = Millis(100);
    HttpServer server(options, guard);
    ASSERT_TRUE(server.start().is_ok());
    std::string address = "127.0.0.1:" + std::to_string(server.port());
    auto resolver = [address](const NodeId&) -> std::optional<std::string> { return address; };

    PeerPool good(resolver, {.secrets = {.current = "s3cret"}});
    for (int i = 0; i < 3; ++i) {
        auto reply =
            good.call(NodeId("n"), "POST", "/internal/v1/ping", "x", "text/plain", Millis(10'000));
        ASSERT_TRUE(reply.is_ok()) << reply.status().to_string();
        EXPECT_EQ(reply->body, "pong x");
    }
    EXPECT_EQ(served.load(), 3);
    EXPECT_EQ(server.stats().connections_open, 1u);

    PeerPool wrong(resolver, {.secrets = {.current = "other"}});
    auto refused =
        wrong.call(NodeId("n"), "POST", "/internal/v1/ping", "y", "text/plain", Millis(10'000));
    ASSERT_FALSE(refused.is_ok());
    EXPECT_EQ(refused.code(), Errc::peer_error);

    testing::RawSocket raw(server.port());
    ASSERT_TRUE(raw.connected());
    ASSERT_TRUE(raw.send_all(
        "POST /internal/v1/ping HTTP/1.1\r\nHost: n\r\nContent-Length: 524288\r\n\r\n"));
    std::string answer;
    EXPECT_TRUE(raw.read_until_close(answer)) << "the connection stayed open";
    EXPECT_EQ(answer.rfind("HTTP/1.1 403", 0), 0u) << answer;
    EXPECT_EQ(served.load(), 3);

    // The handshake itself takes no body: one announced is refused before it is sent.
    testing::RawSocket hello(server.port());
    ASSERT_TRUE(
        hello.send_all("POST /internal/v1/hello HTTP/1.1\r\nHost: n\r\n"
                       "x-narad-cluster-nonce: " +
                       auth::make_nonce() + "\r\nContent-Length: 1048576\r\n\r\n"));
    std::string refused_hello;
    EXPECT_TRUE(hello.read_until_close(refused_hello)) << "the node waited for the body";
    EXPECT_EQ(refused_hello.rfind("HTTP/1.1 413", 0), 0u) << refused_hello;
    server.stop();
}

}  // namespace
}  // namespace narad::net
