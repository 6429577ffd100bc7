#include "net/peer_pool.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "base/metrics.h"
#include "base/mutex.h"
#include "net/cluster_guard.h"
#include "net/http_server.h"
#include "net/test_support.h"

namespace narad::net {
namespace {

using testing::FunctionHandler;
using testing::text_response;

// A port with no listener: bound (so nothing else takes it during the test) but never listening,
// so a connect is refused.
class ClosedPort {
  public:
    ClosedPort() {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        address.sin_port = 0;
        ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
        socklen_t length = sizeof(address);
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
        port_ = ntohs(address.sin_port);
    }
    ~ClosedPort() { ::close(fd_); }
    uint16_t port() const { return port_; }

  private:
    int fd_ = -1;
    uint16_t port_ = 0;
};

class PeerPoolTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ServerOptions options;
        options.address = "127.0.0.1";
        options.port = 0;
        options.shutdown_grace = Millis(100);
        server_ = std::make_unique<HttpServer>(options, handler_);
        ASSERT_TRUE(server_->start().is_ok());
        address_ = "127.0.0.1:" + std::to_string(server_->port());
    }
    void TearDown() override {
        server_->stop();
        MutexLock lock(mutex_);
        parked_.clear();
    }

    PeerPool pool(auth::ClusterSecrets secrets = {}) {
        PeerPoolOptions options;
        options.secrets = std::move(secrets);
        options.idle_clients_per_peer = 2;
        return PeerPool(
            [this](const NodeId& node) -> std::optional<std::string> {
                if (node.value() == "b") return address_;
                if (node.value() == "dead") return "127.0.0.1:" + std::to_string(closed_.port());
                return std::nullopt;
            },
            options);
    }

    Mutex mutex_;
    std::vector<HttpRequest> seen_ GUARDED_BY(mutex_);  // every request, in order
    bool impostor_ GUARDED_BY(mutex_) = false;          // answer hellos without the secret
    std::vector<Responder> parked_ GUARDED_BY(mutex_);  // requests never answered
    bool park_ GUARDED_BY(mutex_) = false;
    FunctionHandler handler_{[this](HttpRequest request, Responder respond) {
        MutexLock lock(mutex_);
        seen_.push_back(request);
        if (impostor_ && request.path == auth::kClusterHelloPath) {
            // Plays along without the secret: a fresh nonce and a proof of something else.
            HttpResponse hello = text_response(200, "");
            hello.headers = {{std::string(auth::kClusterNonceHeader), auth::make_nonce()},
                             {std::string(auth::kClusterProofHeader), std::string(64, 'a')}};
            return respond(std::move(hello));
        }
        if (park_) {
            parked_.push_back(std::move(respond));
            return;
        }
        respond(text_response(201, request.method + " " + request.target + " " + request.body));
    }};
    // Serves from now on behind a ClusterGuard holding `secrets`, on a new port.
    void serve_with(auth::ClusterSecrets secrets) {
        server_->stop();
        guard_ = std::make_unique<ClusterGuard>(std::move(secrets), PlaneAccess::proved, handler_);
        ServerOptions options;
        options.address = "127.0.0.1";
        options.port = 0;
        options.shutdown_grace = Millis(100);
        server_ = std::make_unique<HttpServer>(options, *guard_);
        ASSERT_TRUE(server_->start().is_ok());
        address_ = "127.0.0.1:" + std::to_string(server_->port());
    }
    std::vector<std::string> seen_targets() {
        MutexLock lock(mutex_);
        std::vector<std::string> targets;
        for (const auto& request : seen_) targets.push_back(request.target);
        return targets;
    }

    ClosedPort closed_;
    std::unique_ptr<ClusterGuard> guard_;
    std::unique_ptr<HttpServer> server_;
    std::string address_;
};

// Rule: a call reaches the resolved node, any HTTP status is a successful reply, and the
// keep-alive client goes back to the pool for the next call.
TEST_F(PeerPoolTest, CallReachesNodeAndReusesPooledClient) {
    PeerPool peers = pool();
    for (int i = 0; i < 3; ++i) {
        auto reply = peers.call(NodeId("b"), "POST", "/internal/v1/x?a=1", "body", "text/plain",
                                Millis(10'000));
        ASSERT_TRUE(reply.is_ok()) << reply.status().to_string();
        EXPECT_EQ(reply->status, 201);
        EXPECT_EQ(reply->body, "POST /internal/v1/x?a=1 body");
        EXPECT_EQ(peers.idle_clients(address_), 1u);
    }
    EXPECT_EQ(seen_targets().size(), 3u);
    EXPECT_EQ(server_->stats().connections_open, 1u);
}

// Rule: with a secret, a new connection proves it both ways before the first call, once per
// connection, and no call carries the secret (the handshake sends only HMACs of nonces).
TEST_F(PeerPoolTest, NewConnectionProvesTheSecretOnceAndNeverSendsIt) {
    serve_with({.current = "s3cret"});
    PeerPool peers = pool({.current = "s3cret"});
    for (int i = 0; i < 3; ++i) {
        auto reply =
            peers.call(NodeId("b"), "POST", "/internal/v1/x", "body", "text/plain", Millis(10'000));
        ASSERT_TRUE(reply.is_ok()) << reply.status().to_string();
        EXPECT_EQ(reply->status, 201);
    }
    // Only the calls reach the peer's routes: the guard answered the handshake.
    std::vector<std::string> expected(3, "/internal/v1/x");
    EXPECT_EQ(seen_targets(), expected);
    EXPECT_EQ(server_->stats().connections_open, 1u);
    MutexLock lock(mutex_);
    for (const auto& request : seen_) {
        EXPECT_EQ(request.body.find("s3cret"), std::string::npos);
        for (const auto& [name, value] : request.headers) {
            EXPECT_EQ(value.find("s3cret"), std::string::npos) << name;
        }
    }
}

// Rule: a peer that cannot prove the secret gets nothing but the opening nonce: the call fails as
// never sent (peer_error), and neither a proof nor the call reaches it.
TEST_F(PeerPoolTest, PeerThatCannotProveTheSecretGetsNothing) {
    {
        MutexLock lock(mutex_);
        impostor_ = true;  // the plain server, recording every request it gets
    }
    PeerPool peers = pool({.current = "s3cret"});
    auto reply =
        peers.call(NodeId("b"), "POST", "/internal/v1/x", "payload", "text/plain", Millis(10'000));
    ASSERT_FALSE(reply.is_ok());
    EXPECT_EQ(reply.code(), Errc::peer_error);
    EXPECT_NE(reply.status().message().find("did not prove"), std::string::npos)
        << reply.status().to_string();
    EXPECT_EQ(seen_targets(), std::vector<std::string>{std::string(auth::kClusterHelloPath)});
    EXPECT_EQ(peers.idle_clients(address_), 0u);
}

// Rule: during a rotation a node holding the new and the old secret and a node holding only one
// of them still prove to each other, in both directions; a node holding neither does not.
TEST_F(PeerPoolTest, RotationKeepsOldAndNewNodesTalking) {
    struct Case {
        auth::ClusterSecrets client, server;
        bool works;
    };
    std::vector<Case> cases{
        {{.current = "new", .previous = "old"}, {.current = "old"}, true},
        {{.current = "old"}, {.current = "new", .previous = "old"}, true},
        {{.current = "new", .previous = "old"}, {.current = "new"}, true},
        {{.current = "old"}, {.current = "new"}, false},
    };
    for (const Case& c : cases) {
        serve_with(c.server);
        PeerPool peers = pool(c.client);
        auto reply = peers.call(NodeId("b"), "GET", "/internal/v1/y", "", "", Millis(10'000));
        EXPECT_EQ(reply.is_ok(), c.works)
            << c.client.current << "/" << c.client.previous << " -> " << c.server.current << "/"
            << c.server.previous << ": " << reply.status().to_string();
    }
}

// Rule: node-to-node calls are counted by operation (never by topic or partition) and outcome, as
// Narad's narad_cluster_rpc_requests_total{op,outcome}.
TEST_F(PeerPoolTest, CallsAreCountedByOperationAndOutcome) {
    EXPECT_EQ(rpc_operation("/internal/v1/commit"), "commit");
    EXPECT_EQ(rpc_operation("/internal/v1/topics/orders/consume?wait=1s"), "consume");
    EXPECT_EQ(rpc_operation("/internal/v1/topics/orders/ack/batch"), "ack_batch");
    EXPECT_EQ(rpc_operation("/internal/v1/moves/orders/3/chunk"), "move_chunk");
    EXPECT_EQ(rpc_operation("/internal/v1/moves"), "moves");
    EXPECT_EQ(rpc_operation("/elsewhere"), "other");
    auto& requests = metrics::Registry::global().counter("narad_cluster_rpc_requests_total", "",
                                                         {"op", "outcome"});
    double ok = requests.with({"x", "ok"}).value();
    double unreachable = requests.with({"commit", "unreachable"}).value();
    PeerPool peers = pool();
    ASSERT_TRUE(peers.call(NodeId("b"), "POST", "/internal/v1/x", "", "", Millis(10'000)).is_ok());
    ASSERT_FALSE(
        peers.call(NodeId("dead"), "POST", "/internal/v1/commit", "x", "", Millis(2000)).is_ok());
    EXPECT_EQ(requests.with({"x", "ok"}).value() - ok, 1.0);
    EXPECT_EQ(requests.with({"commit", "unreachable"}).value() - unreachable, 1.0);
}

// Rule: a node the resolver does not know is not_found, and nothing is sent.
TEST_F(PeerPoolTest, UnknownNodeIsNotFound) {
    PeerPool peers = pool();
    auto reply = peers.call(NodeId("nobody"), "GET", "/x", "", "", Millis(1000));
    ASSERT_FALSE(reply.is_ok());
    EXPECT_EQ(reply.code(), Errc::not_found);
    EXPECT_TRUE(seen_targets().empty());
}

// Rule: a refused connection means nothing was delivered: peer_error, never unknown_outcome.
TEST_F(PeerPoolTest, RefusedConnectionIsPeerError) {
    PeerPool peers = pool();
    auto reply = peers.call(NodeId("dead"), "POST", "/internal/v1/commit", "x", "", Millis(2000));
    ASSERT_FALSE(reply.is_ok());
    EXPECT_EQ(reply.code(), Errc::peer_error) << reply.status().to_string();
    EXPECT_NE(reply.status().message().find("dead"), std::string::npos);
}

// Rule: a request that was sent but never answered within the timeout has an unknown outcome
// (the peer may have applied it), and its client is not pooled.
TEST_F(PeerPoolTest, UnansweredRequestIsUnknownOutcome) {
    PeerPool peers = pool();
    {
        MutexLock lock(mutex_);
        park_ = true;
    }
    auto reply = peers.call(NodeId("b"), "POST", "/internal/v1/commit", "x", "", Millis(200));
    ASSERT_FALSE(reply.is_ok());
    EXPECT_EQ(reply.code(), Errc::unknown_outcome) << reply.status().to_string();
    EXPECT_EQ(peers.idle_clients(address_), 0u);
    MutexLock lock(mutex_);
    EXPECT_EQ(parked_.size(), 1u);  // it did arrive
}

// Rule: concurrent calls from many threads each get their own client and all succeed; the free
// list never holds more than its cap.
TEST_F(PeerPoolTest, ConcurrentCallsAllSucceedAndPoolIsCapped) {
    PeerPool peers = pool();
    std::atomic<int> ok{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 25; ++i) {
                auto reply = peers.call(NodeId("b"), "GET", "/y", "", "", Millis(10'000));
                if (reply.is_ok() && reply->status == 201) ++ok;
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(ok.load(), 100);
    EXPECT_LE(peers.idle_clients(address_), 2u);
    EXPECT_GE(peers.idle_clients(address_), 1u);
}

}  // namespace
}  // namespace narad::net
