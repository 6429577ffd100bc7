#include "api/router.h"

#include <gtest/gtest.h>

namespace narad::api {
namespace {

net::HttpResponse call(Router& router, std::string method, std::string path) {
    net::HttpRequest request;
    request.method = std::move(method);
    request.path = path;
    request.target = path;
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

}  // namespace
}  // namespace narad::api
