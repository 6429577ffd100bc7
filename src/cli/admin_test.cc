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

// Rule: a revoke takes the named patterns (or a whole action) and keeps everything else in order;
// a grant left without patterns goes; naming nothing held is an error.
TEST(RevokeGrants, TakesOnlyWhatIsNamed) {
    nlohmann::json held =
        nlohmann::json::parse(R"([{"action":"produce","patterns":["a","b"]},{"action":"admin"},)"
                              R"({"action":"consume","patterns":["c"]}])");
    auto kept = revoke_grants(held, *parse_grants({"produce:b", "consume:c"}));
    ASSERT_TRUE(kept.is_ok());
    EXPECT_EQ(kept->dump(), R"([{"action":"produce","patterns":["a"]},{"action":"admin"}])");
    EXPECT_EQ(revoke_grants(held, *parse_grants({"admin"}))->size(), 2u);
    EXPECT_EQ(revoke_grants(held, *parse_grants({"produce:zzz"})).status().message(),
              "the user holds none of the grants named");
    EXPECT_FALSE(revoke_grants(nlohmann::json::array(), *parse_grants({"admin"})).is_ok());
}

}  // namespace
}  // namespace narad::cli
