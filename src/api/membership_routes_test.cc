#include "api/membership_routes.h"

#include <gtest/gtest.h>

#include "net/test_support.h"

namespace narad::api {
namespace {

net::HttpResponse post(Router& router, std::string target, std::string body = "") {
    net::HttpRequest request;
    request.method = "POST";
    request.target = std::move(target);
    request.body = std::move(body);
    return net::testing::screen_and_handle(router, std::move(request));
}

// Rule: a join is answered 200 with the runtime's JSON answer to the request body, a refused one
// with its error's status and text; a request to host etcd is 204, or its error.
TEST(MembershipRoutes, AnswerWithTheRuntimesOutcome) {
    FakeClock clock;
    Router router(clock);
    ThreadPool pool("test-members", 1);
    std::string joined;
    Status host = Status::ok();
    register_membership_routes(
        router, MembershipRouteContext{
                    .join = [&joined](std::string_view request) -> Result<std::string> {
                        if (request == "refuse") return Status(Errc::conflict, "name taken");
                        joined = request;
                        return std::string("{\"endpoints\":[]}");
                    },
                    .host_etcd = [&host] { return host; },
                    .pool = pool,
                });

    net::HttpResponse accepted = post(router, "/internal/v1/join", "{\"node_id\":\"b\"}");
    EXPECT_EQ(accepted.status, 200);
    EXPECT_EQ(accepted.body, "{\"endpoints\":[]}");
    EXPECT_EQ(joined, "{\"node_id\":\"b\"}");
    net::HttpResponse refused = post(router, "/internal/v1/join", "refuse");
    EXPECT_EQ(refused.status, 409);
    EXPECT_EQ(refused.body, "{\"error\":\"name taken\"}\n");

    EXPECT_EQ(post(router, "/internal/v1/etcd/host").status, 204);
    host = Status(Errc::unavailable, "etcd did not start");
    net::HttpResponse failed = post(router, "/internal/v1/etcd/host");
    EXPECT_EQ(failed.status, 503);
    EXPECT_EQ(failed.body, "{\"error\":\"etcd did not start\"}\n");
}

// Answers every call with a scripted reply, recording the target.
class ScriptedPeers final : public PeerClient {
  public:
    Result<PeerReply> call(const NodeId&, std::string_view method, std::string_view target,
                           std::string_view, std::string_view, Millis) override {
        called = std::string(method) + " " + std::string(target);
        return reply;
    }
    Result<PeerReply> reply = PeerReply{204, "", ""};
    std::string called;
};

// Rule: the controller's request to host etcd succeeds only on a 204; any other answer is a
// peer_error naming it, and a call that failed keeps its own error.
TEST(AskToHostEtcd, OnlyA204IsSuccess) {
    ScriptedPeers peers;
    EXPECT_TRUE(ask_to_host_etcd(peers, NodeId("b"), Millis(1'000)).is_ok());
    EXPECT_EQ(peers.called, "POST /internal/v1/etcd/host");
    peers.reply = PeerReply{500, "{\"error\":\"boom\"}", "application/json"};
    Status refused = ask_to_host_etcd(peers, NodeId("b"), Millis(1'000));
    EXPECT_EQ(refused.code(), Errc::peer_error);
    EXPECT_EQ(refused.message(), "answered 500: {\"error\":\"boom\"}");
    peers.reply = Status(Errc::unknown_outcome, "no reply");
    EXPECT_EQ(ask_to_host_etcd(peers, NodeId("b"), Millis(1'000)).code(), Errc::unknown_outcome);
}

}  // namespace
}  // namespace narad::api
