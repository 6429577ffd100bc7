#include "cli/admin.h"

#include <gtest/gtest.h>

namespace narad::cli {
namespace {

// Rule: a grant splits at the first ':'; action and patterns are trimmed; no patterns, no key.
TEST(ParseGrants, SplitsActionAndPatterns) {
    auto grants = parse_grants({" produce : orders-*, audit ", "admin", "consume:", "create:a:b"});
    ASSERT_TRUE(grants.is_ok()) << grants.status().message();
    EXPECT_EQ(grants->dump(),
              "[{\"action\":\"produce\",\"patterns\":[\"orders-*\",\"audit\"]},"
              "{\"action\":\"admin\"},{\"action\":\"consume\"},"
              "{\"action\":\"create\",\"patterns\":[\"a:b\"]}]");
    EXPECT_EQ(parse_grants({})->dump(), "[]");
}

// Rule: unknown actions fail with Go's text, quoting the untrimmed action and the whole spec.
TEST(ParseGrants, RejectsUnknownAction) {
    EXPECT_EQ(parse_grants({"read :x"}).status().message(),
              "unknown action \"read \" in grant \"read :x\" (want produce|consume|create|admin)");
    EXPECT_EQ(parse_grants({""}).status().message(),
              "unknown action \"\" in grant \"\" (want produce|consume|create|admin)");
}

}  // namespace
}  // namespace narad::cli
