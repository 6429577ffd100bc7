#include "net/http_wire.h"

#include <gtest/gtest.h>

namespace narad::net::wire {
namespace {

bool contains(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

// Rule: a response head carries the status line, Content-Type, Content-Length and Date, ends with
// a blank line, and says "Connection: close" only when the connection will close.
TEST(HttpWireTest, ResponseHeadFramesTheBody) {
    HttpResponse response;
    response.status = 404;
    response.body = "{\"error\":\"x\"}";
    std::string head;
    append_response_head(head, response, {11, true, false});
    EXPECT_EQ(head.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u);
    EXPECT_TRUE(contains(head, "Content-Type: application/json\r\n"));
    EXPECT_TRUE(contains(head, "Content-Length: 13\r\n"));
    EXPECT_TRUE(contains(head, "Date: "));
    EXPECT_FALSE(contains(head, "Connection"));
    EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n");

    head.clear();
    append_response_head(head, response, {11, false, false});
    EXPECT_TRUE(contains(head, "Connection: close\r\n"));
    head.clear();
    append_response_head(head, response, {10, true, false});
    EXPECT_EQ(head.rfind("HTTP/1.0 404", 0), 0u);
    EXPECT_TRUE(contains(head, "Connection: keep-alive\r\n"));
}

// Rule: 204 and 304 responses carry neither Content-Type nor Content-Length (RFC 9110 §8.6).
TEST(HttpWireTest, NoContentHasNoFramingHeaders) {
    HttpResponse response;
    response.status = 204;
    response.body = "ignored";
    std::string head;
    append_response_head(head, response, {11, true, false});
    EXPECT_EQ(head.rfind("HTTP/1.1 204 No Content\r\n", 0), 0u);
    EXPECT_FALSE(contains(head, "Content-Length"));
    EXPECT_FALSE(contains(head, "Content-Type"));
    EXPECT_FALSE(status_has_body(304));
    EXPECT_FALSE(status_has_body(101));
    EXPECT_TRUE(status_has_body(200));
}

// Rule: a handler's extra header cannot inject lines or override the framing the server owns.
TEST(HttpWireTest, ExtraHeadersAreFilteredAndCannotInject) {
    HttpResponse response;
    response.headers = {{"WWW-Authenticate", "Basic realm=\"narad\""},
                        {"X-Evil", "a\r\nSet-Cookie: x"},
                        {"Bad Name", "v"},
                        {"Content-Length", "999"},
                        {"connection", "keep-alive"}};
    std::string head;
    append_response_head(head, response, {11, false, false});
    EXPECT_TRUE(contains(head, "WWW-Authenticate: Basic realm=\"narad\"\r\n"));
    EXPECT_FALSE(contains(head, "X-Evil"));
    EXPECT_FALSE(contains(head, "Set-Cookie"));
    EXPECT_FALSE(contains(head, "Bad Name"));
    EXPECT_FALSE(contains(head, "999"));
    EXPECT_FALSE(contains(head, "keep-alive"));
    EXPECT_TRUE(contains(head, "Content-Length: 0\r\n"));
}

// Rule: a request head names the host, and announces a body's length (and type) when there is one
// or the method carries one.
TEST(HttpWireTest, RequestHeadAnnouncesTheBody) {
    Headers extra = {{"x-trace", "1"}, {"Host", "evil"}};
    std::string head;
    append_request_head(
        head, {"POST", "/v1/x?y=1", "127.0.0.1:7942", "Basic dTpw", "text/plain", 5, &extra});
    EXPECT_EQ(head.rfind("POST /v1/x?y=1 HTTP/1.1\r\n", 0), 0u);
    EXPECT_TRUE(contains(head, "Host: 127.0.0.1:7942\r\n"));
    EXPECT_TRUE(contains(head, "Authorization: Basic dTpw\r\n"));
    EXPECT_TRUE(contains(head, "Content-Type: text/plain\r\n"));
    EXPECT_TRUE(contains(head, "Content-Length: 5\r\n"));
    EXPECT_TRUE(contains(head, "x-trace: 1\r\n"));
    EXPECT_FALSE(contains(head, "evil"));

    head.clear();
    append_request_head(head, {"GET", "/healthz", "h:1", "", "application/json", 0, nullptr});
    EXPECT_FALSE(contains(head, "Content-Length"));
    EXPECT_FALSE(contains(head, "Authorization"));
    head.clear();
    append_request_head(head, {"POST", "/x", "h:1", "", "application/json", 0, nullptr});
    EXPECT_TRUE(contains(head, "Content-Length: 0\r\n"));
}

}  // namespace
}  // namespace narad::net::wire
