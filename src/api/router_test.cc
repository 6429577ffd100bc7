#include "api/router.h"

#include <gtest/gtest.h>

namespace narad::api {
namespace {

net::HttpResponse call(Router& router, std::string method, std::string path,
                       net::Headers headers = {}) {
    net::HttpRequest request;
    request.method = std::move(method);
    request.path = path;
    request.target = path;
    request.headers = std::move(headers);
    net::HttpResponse out;
    router.handle(std::move(request), [&](net::HttpResponse r) { out = std::move(r); });
    return out;
}

std::string header(const net::HttpResponse& response, std::string_view name) {
    for (const auto& [key, value] : response.headers) {
        if (key == name) return value;
    }
    return "";
}

class RouterTest : public ::testing::Test {
  protected:
    void SetUp() override {
        auto echo = [](net::HttpRequest, const PathParams& params, net::Responder respond) {
            net::HttpResponse response;
            response.body = params.get("topic") + "|" + params.get("child");
            respond(std::move(response));
        };
        router_.add("GET", "/v1/topics/{topic}", echo);
        router_.add("DELETE", "/v1/topics/{topic}", echo);
        router_.add("DELETE", "/v1/topics/{topic}/children/{child}", echo);
    }
    FakeClock clock_;
    Router router_{clock_};
};

// Rule: wildcards match one non-empty segment and are handed to the handler.
TEST_F(RouterTest, WildcardsMatchOneSegment) {
    EXPECT_EQ(call(router_, "GET", "/v1/topics/orders").body, "orders|");
    EXPECT_EQ(call(router_, "DELETE", "/v1/topics/a/children/b").body, "a|b");
    EXPECT_EQ(call(router_, "GET", "/v1/topics/").status, 404);
    EXPECT_EQ(call(router_, "GET", "/v1/topics/a/b").status, 404);
}

// Rule: unknown paths are 404 text; known paths with another method are 405 with Allow.
TEST_F(RouterTest, NotFoundAndMethodNotAllowed) {
    auto missing = call(router_, "GET", "/nope");
    EXPECT_EQ(missing.status, 404);
    EXPECT_EQ(missing.body, "404 page not found\n");
    auto wrong = call(router_, "POST", "/v1/topics/x");
    EXPECT_EQ(wrong.status, 405);
    EXPECT_EQ(wrong.body, "Method Not Allowed\n");
    EXPECT_EQ(header(wrong, "allow"), "DELETE, GET, HEAD");
}

// Rule: HEAD runs the GET handler and sends no body; unclean paths redirect to the clean form.
TEST_F(RouterTest, HeadAndCleanPaths) {
    auto head = call(router_, "HEAD", "/v1/topics/orders");
    EXPECT_EQ(head.status, 200);
    EXPECT_TRUE(head.body.empty());
    auto redirect = call(router_, "GET", "/v1//topics/./orders");
    EXPECT_EQ(redirect.status, 301);
    EXPECT_EQ(header(redirect, "location"), "/v1/topics/orders");
}

net::HttpResponse call_with(Router& router, std::string method, std::string target,
                            net::Headers headers) {
    net::HttpRequest request;
    request.method = std::move(method);
    request.target = target;
    request.path = target.substr(0, target.find('?'));
    EXPECT_TRUE(net::parse_target(request.target, request.path, request.query));
    request.headers = std::move(headers);
    net::HttpResponse out;
    router.handle(std::move(request), [&](net::HttpResponse r) { out = std::move(r); });
    return out;
}

// Rule (Narad's cross-site guard): a POST, PUT or PATCH needs application/json or
// application/octet-stream (parameters allowed) or a non-empty X-Narad-Client header, else 415,
// body or not, and before routing (so before a 405); a batch consume needs the header, else 400;
// other methods and a single consume pass. Without the guard (the cluster port) all pass.
TEST(RouterGuardTest, CrossSiteRequestsAreRefused) {
    FakeClock clock;
    Router guarded(clock, ContentTypeGuard::on);
    Router open(clock);
    auto ok = [](net::HttpRequest, const PathParams&, net::Responder respond) {
        respond(net::HttpResponse{});
    };
    for (Router* router : {&guarded, &open}) {
        router->add("POST", "/v1/topics", ok);
        router->add("GET", "/v1/topics/{topic}/consume", ok);
        router->add("DELETE", "/v1/topics/{topic}", ok);
    }
    auto status = [&](Router& router, const char* method, const char* target,
                      net::Headers headers) {
        return call_with(router, method, target, std::move(headers)).status;
    };
    EXPECT_EQ(status(guarded, "POST", "/v1/topics", {}), 415);
    EXPECT_EQ(status(guarded, "POST", "/v1/topics", {{"content-type", "text/plain"}}), 415);
    EXPECT_EQ(status(guarded, "POST", "/v1/topics",
                     {{"content-type", "application/x-www-form-urlencoded"}}),
              415);
    EXPECT_EQ(status(guarded, "POST", "/v1/topics", {{"content-type", "application/x-ndjson"}}),
              415);
    EXPECT_EQ(status(guarded, "POST", "/v1/topics", {{"x-narad-client", ""}}), 415);
    EXPECT_EQ(status(guarded, "PATCH", "/v1/topics", {}), 415);  // 415 before 405
    EXPECT_EQ(status(guarded, "POST", "/v1/topics",
                     {{"content-type", "Application/JSON; charset=utf-8"}}),
              200);
    EXPECT_EQ(status(guarded, "POST", "/v1/topics", {{"content-type", "application/octet-stream"}}),
              200);
    EXPECT_EQ(status(guarded, "POST", "/v1/topics",
                     {{"content-type", "text/plain"}, {"x-narad-client", "sdk"}}),
              200);
    EXPECT_EQ(status(guarded, "DELETE", "/v1/topics/t", {}), 200);
    auto batch = call_with(guarded, "GET", "/v1/topics/t/consume?max=5", {});
    EXPECT_EQ(batch.status, 400);
    EXPECT_NE(batch.body.find("must send an X-Narad-Client header"), std::string::npos);
    EXPECT_EQ(status(guarded, "GET", "/v1/topics/t/consume?%6Dax=5", {}), 400);
    EXPECT_EQ(status(guarded, "GET", "/v1/topics/t/consume?max=5", {{"x-narad-client", "c"}}), 200);
    EXPECT_EQ(status(guarded, "GET", "/v1/topics/t/consume?max=", {}), 200);
    EXPECT_EQ(status(guarded, "GET", "/v1/topics/t/consume", {}), 200);
    EXPECT_EQ(status(open, "POST", "/v1/topics", {}), 200);
    EXPECT_EQ(status(open, "GET", "/v1/topics/t/consume?max=5", {}), 200);
}

// Rule: a route's own body limit is found from the raw head, by method and literal segments.
TEST(RouterGuardTest, RouteBodyLimitFromTheHead) {
    FakeClock clock;
    Router router(clock);
    auto ok = [](net::HttpRequest, const PathParams&, net::Responder) {};
    router.add("POST", "/v1/topics/{topic}/produce", ok);
    router.add("POST", "/v1/topics/{topic}/produce/batch", ok, 16u << 20);
    net::HttpRequest head;
    head.method = "POST";
    head.target = "/v1/topics/a%2Fb/produce/batch?x=1";
    EXPECT_EQ(router.body_limit(head), std::optional<uint64_t>(16u << 20));
    head.target = "/v1/topics/a/produce";
    EXPECT_EQ(router.body_limit(head), std::nullopt);
    head.method = "GET";
    head.target = "/v1/topics/a/produce/batch";
    EXPECT_EQ(router.body_limit(head), std::nullopt);
}

// Rule: with a gate set, a request reaches its route only through the gate, carrying what the gate
// set (its user); a refusal is answered as is, with the route never run, and counted unmatched.
TEST_F(RouterTest, TheGateDecidesBeforeAnyRouteRuns) {
    std::vector<std::string> seen;
    router_.add("GET", "/v1/who", [&](net::HttpRequest r, const PathParams&, net::Responder d) {
        seen.push_back(r.user);
        d(net::HttpResponse{});
    });
    router_.set_gate([](net::HttpRequest r, Router::Route route, net::Responder refuse) {
        if (r.header("authorization").has_value() || r.path == "/open") {
            r.user = "alice";
            return route(std::move(r));
        }
        net::HttpResponse no;
        no.status = 401;
        refuse(std::move(no));
    });
    EXPECT_EQ(call(router_, "GET", "/v1/who").status, 401);
    EXPECT_EQ(call(router_, "GET", "/no/such").status, 401) << "the gate runs before routing";
    EXPECT_TRUE(seen.empty());
    EXPECT_EQ(call(router_, "GET", "/v1/who", {{"authorization", "x"}}).status, 200);
    EXPECT_EQ(seen, std::vector<std::string>{"alice"});
    EXPECT_EQ(call(router_, "GET", "/open").status, 404) << "admitted, then routed";
}

// Rule: the gate answers before the cross-site guard: a POST with neither credentials nor a
// content type is the gate's refusal (401), not 415.
TEST(RouterGateTest, CredentialsComeBeforeTheContentTypeGuard) {
    FakeClock clock;
    Router router(clock, ContentTypeGuard::on);
    router.add("POST", "/v1/x", [](net::HttpRequest, const PathParams&, net::Responder d) {
        d(net::HttpResponse{});
    });
    router.set_gate([](net::HttpRequest r, Router::Route route, net::Responder refuse) {
        if (r.header("authorization")) return route(std::move(r));
        net::HttpResponse no;
        no.status = 401;
        refuse(std::move(no));
    });
    EXPECT_EQ(call(router, "POST", "/v1/x").status, 401);
    EXPECT_EQ(call(router, "POST", "/v1/x", {{"authorization", "x"}}).status, 415)
        << "signed in, the guard still applies";
}

}  // namespace
}  // namespace narad::api
