#include "api/respond.h"

#include <gtest/gtest.h>

namespace narad::api {
namespace {

// Rule: a condition the client can act on keeps its own status and message; a metastore or peer
// that did not answer is 503 (retry), never 500; anything else is 500 "<operation> failed".
TEST(DomainErrorResponse, RetryableFailuresAre503AndOthers500) {
    EXPECT_EQ(domain_error_response(Status(Errc::not_found, "topic not found"), "x").status, 404);
    EXPECT_EQ(domain_error_response(Status(Errc::conflict, "changed"), "x").status, 409);
    for (Errc code : {Errc::peer_error, Errc::timeout, Errc::unknown_outcome, Errc::unavailable}) {
        net::HttpResponse response = domain_error_response(Status(code, "etcd is slow"), "x");
        EXPECT_EQ(response.status, 503) << errc_name(code);
        EXPECT_NE(response.body.find("etcd is slow"), std::string::npos) << response.body;
    }
    net::HttpResponse internal =
        domain_error_response(Status(Errc::io_error, "disk"), "create topic");
    EXPECT_EQ(internal.status, 500);
    EXPECT_EQ(internal.body, "{\"error\":\"create topic failed\"}\n");
}

}  // namespace
}  // namespace narad::api
