#include "cli/api.h"

#include <gtest/gtest.h>

#include "cli/test_support.h"

namespace narad::cli {
namespace {

using testing::FakeApi;

// Rule: an error body shows its "error" field, else the trimmed body, else "<empty body>".
TEST(FormatErrorBody, PrefersErrorFieldThenTrimmedBody) {
    EXPECT_EQ(format_error_body("{\"error\":\"topic not found\"}\n"), "topic not found");
    EXPECT_EQ(format_error_body("  partition owner is down; retry later\n"),
              "partition owner is down; retry later");
    EXPECT_EQ(format_error_body(" \n"), "<empty body>");
    EXPECT_EQ(format_error_body("{\"error\":\"\"}"), "{\"error\":\"\"}");
    EXPECT_EQ(format_error_body("{\"message\":\"x\"}"), "{\"message\":\"x\"}");
}

// Rule: send turns 4xx/5xx into "http <code>: <msg>" and passes transport errors through.
TEST(Send, MapsHttpFailuresToGoTexts) {
    FakeApi api;
    api.answer(404, "{\"error\":\"topic not found\"}\n");
    api.answer(503, "");
    api.fail("transport: connection refused");
    api.answer(204);
    auto not_found = send(api, "GET", "/v1/topics/x");
    EXPECT_EQ(not_found.status().message(), "http 404: topic not found");
    EXPECT_TRUE(is_http_error(not_found.status(), 404));
    EXPECT_FALSE(is_http_error(not_found.status(), 410));
    EXPECT_EQ(send(api, "GET", "/").status().message(), "http 503: <empty body>");
    EXPECT_EQ(send(api, "GET", "/").status().message(), "transport: connection refused");
    EXPECT_TRUE(send(api, "GET", "/").is_ok());
}

// Rule: --server URLs resolve to scheme, host, port and prefix (443 by default for https);
// garbage is refused.
TEST(ParseServerUrl, AcceptsHttpUrlsAndBareHostPort) {
    auto a = parse_server_url("http://127.0.0.1:7942/");
    ASSERT_TRUE(a.is_ok());
    EXPECT_EQ(a->host, "127.0.0.1");
    EXPECT_EQ(a->port, 7942);
    EXPECT_EQ(a->base_path, "");
    auto b = parse_server_url("http://broker.local/narad//");
    ASSERT_TRUE(b.is_ok());
    EXPECT_EQ(b->host, "broker.local");
    EXPECT_EQ(b->port, 80);
    EXPECT_EQ(b->base_path, "/narad");
    auto c = parse_server_url("localhost:9000");
    ASSERT_TRUE(c.is_ok());
    EXPECT_EQ(c->port, 9000);
    auto d = parse_server_url("http://[::1]:7942");
    ASSERT_TRUE(d.is_ok());
    EXPECT_EQ(d->host, "::1");
    auto e = parse_server_url("HTTPS://broker.example/narad");
    ASSERT_TRUE(e.is_ok());
    EXPECT_TRUE(e->https);
    EXPECT_EQ(e->port, 443);
    EXPECT_EQ(e->base_path, "/narad");
    EXPECT_FALSE(a->https);
    EXPECT_EQ(parse_server_url("https://x:1")->port, 1);
    EXPECT_FALSE(parse_server_url("ftp://x").is_ok());
    EXPECT_FALSE(parse_server_url("http://x:99999").is_ok());
    EXPECT_FALSE(parse_server_url("http://:80").is_ok());
    EXPECT_FALSE(parse_server_url("http://u:p@x:80").is_ok());
}

// Rule: credentials over plain http:// to a host other than this machine draw a warning; https,
// loopback names and addresses, and a connection without credentials do not.
TEST(PlaintextCredentialsWarning, OnlyForRemotePlainHttpWithCredentials) {
    EXPECT_EQ(plaintext_credentials_warning({"http://broker.example:7942", "alice", "pw"}),
              "warning: sending credentials for \"alice\" over plain http to broker.example; use "
              "an https:// server URL\n");
    EXPECT_NE(plaintext_credentials_warning({"HTTP://10.0.0.5:7942/x", "", "pw"}), "");
    EXPECT_NE(plaintext_credentials_warning({"http://[2001:db8::1]:7942", "a", "b"}), "");
    EXPECT_NE(plaintext_credentials_warning({"http://127.example:1", "a", "b"}), "");
    for (const char* server : {"https://broker.example", "http://127.0.0.1:7942",
                               "http://127.8.9.10", "http://localhost:1", "http://[::1]:7942"}) {
        EXPECT_EQ(plaintext_credentials_warning({server, "a", "b"}), "") << server;
    }
    EXPECT_EQ(plaintext_credentials_warning({"http://broker.example", "", ""}), "");
}

}  // namespace
}  // namespace narad::cli
