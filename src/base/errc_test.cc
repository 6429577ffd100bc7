#include "base/errc.h"

#include <gtest/gtest.h>

#include <set>

#include "base/status.h"

namespace narad {
namespace {

// Rule: every error code has a distinct name, a text, and an HTTP status in the 2xx-5xx range.
TEST(ErrcTest, EveryCodeHasNameTextAndHttpStatus) {
    std::set<std::string_view> names;
    for (Errc code : all_errcs()) {
        EXPECT_FALSE(errc_name(code).empty());
        EXPECT_FALSE(errc_text(code).empty());
        EXPECT_GE(errc_http_status(code), 200);
        EXPECT_LT(errc_http_status(code), 600);
        EXPECT_TRUE(names.insert(errc_name(code)).second) << errc_name(code);
    }
}

// Rule: the public API's status codes match Narad's error map (notes/narad-go.md).
TEST(ErrcTest, HttpStatusesMatchNaradsErrorMap) {
    EXPECT_EQ(errc_http_status(Errc::invalid_argument), 400);
    EXPECT_EQ(errc_http_status(Errc::unauthorized), 401);
    EXPECT_EQ(errc_http_status(Errc::not_found), 404);
    EXPECT_EQ(errc_http_status(Errc::already_exists), 409);
    EXPECT_EQ(errc_http_status(Errc::gone), 410);
    EXPECT_EQ(errc_http_status(Errc::payload_too_large), 413);
    EXPECT_EQ(errc_http_status(Errc::not_owner), 421);
    EXPECT_EQ(errc_http_status(Errc::too_many_requests), 429);
    EXPECT_EQ(errc_http_status(Errc::peer_error), 502);
    EXPECT_EQ(errc_http_status(Errc::shutting_down), 503);
    EXPECT_EQ(errc_http_status(Errc::unavailable), 503);
}

// Rule: a Status without a message reports the table's text; context is prepended.
TEST(StatusTest, MessageFallsBackToTableTextAndTakesContext) {
    Status status(Errc::not_found, "");
    EXPECT_EQ(status.message(), "not found");
    Status wrapped = Status(Errc::io_error, "disk gone").with_context("opening segment");
    EXPECT_EQ(wrapped.code(), Errc::io_error);
    EXPECT_EQ(wrapped.message(), "opening segment: disk gone");
    EXPECT_TRUE(Status::ok().is_ok());
}

Result<int> half(int v) {
    if (v % 2 != 0) return Status(Errc::invalid_argument, "odd");
    return v / 2;
}

Result<int> quarter(int v) {
    NARAD_ASSIGN_OR_RETURN(int h, half(v));
    return half(h);
}

// Rule: NARAD_ASSIGN_OR_RETURN passes values through and returns the first error.
TEST(StatusTest, AssignOrReturnPropagatesTheFirstError) {
    EXPECT_EQ(quarter(8).value(), 2);
    auto failed = quarter(6);
    ASSERT_FALSE(failed.is_ok());
    EXPECT_EQ(failed.code(), Errc::invalid_argument);
}

}  // namespace
}  // namespace narad
