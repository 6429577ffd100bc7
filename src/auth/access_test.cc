#include "auth/access.h"

#include <gtest/gtest.h>

namespace narad::auth {
namespace {

using meta::Action;
using meta::Grant;

meta::User user_with(std::string name, std::vector<Grant> grants, bool root = false) {
    meta::User user;
    user.name = std::move(name);
    user.grants = std::move(grants);
    user.root = root;
    return user;
}

TEST(AccessTest, UsernamesFollowNaradsRule) {
    EXPECT_TRUE(validate_username("alice.b_c-1").is_ok());
    EXPECT_TRUE(validate_username(std::string(64, 'a')).is_ok());
    EXPECT_EQ(validate_username(std::string(65, 'a')).message(),
              "username must match ^[A-Za-z0-9._-]{1,64}$");
    EXPECT_EQ(validate_username("").code(), Errc::invalid_argument);
    EXPECT_EQ(validate_username("a/b").code(), Errc::invalid_argument);
    EXPECT_EQ(validate_username("a:b").code(), Errc::invalid_argument);
    EXPECT_EQ(validate_username(".").message(), "username must not be \".\"");
    EXPECT_EQ(validate_username("..").message(), "username must not be \"..\"");
}

TEST(AccessTest, PasswordsAreOneTo72Bytes) {
    EXPECT_EQ(validate_password("").message(), "password required");
    EXPECT_TRUE(validate_password("x").is_ok());
    EXPECT_TRUE(validate_password(std::string(72, 'x')).is_ok());
    EXPECT_EQ(validate_password(std::string(73, 'x')).message(),
              "password must be at most 72 bytes");
}

TEST(AccessTest, GrantsAreCheckedAsNaradChecksThem) {
    EXPECT_TRUE(validate_grants({{Action::produce, {"orders", "logs-*", "*"}}}).is_ok());
    EXPECT_TRUE(validate_grants({{Action::admin, {}}}).is_ok());
    EXPECT_EQ(validate_grants({{Action::admin, {"x"}}}).message(),
              "admin grants are global and must not carry patterns");
    EXPECT_EQ(validate_grants({{Action::consume, {}}}).message(),
              "grant \"consume\" requires at least one topic pattern");
    EXPECT_EQ(validate_grants({{Action::create, {""}}}).message(),
              "grant \"create\" has an empty pattern");
    EXPECT_EQ(validate_grants({{Action::produce, {"a*b"}}}).message(),
              "grant \"produce\" pattern \"a*b\" must be a topic name with an optional trailing "
              "'*'");
    EXPECT_EQ(validate_grants({{Action::produce, {"**"}}}).code(), Errc::invalid_argument);
    EXPECT_EQ(validate_grants({{Action::produce, {std::string(256, 'a')}}}).code(),
              Errc::invalid_argument);
    EXPECT_TRUE(validate_grants({{Action::produce, {std::string(255, 'a') + "*"}}}).is_ok());
}

TEST(AccessTest, APatternIsAnExactNameOrAPrefix) {
    EXPECT_TRUE(pattern_matches("orders", "orders"));
    EXPECT_FALSE(pattern_matches("orders", "orders-eu"));
    EXPECT_TRUE(pattern_matches("orders-*", "orders-eu"));
    EXPECT_TRUE(pattern_matches("orders-*", "orders-"));
    EXPECT_FALSE(pattern_matches("orders-*", "orders"));
    EXPECT_TRUE(pattern_matches("orders*", "orders"));
    EXPECT_TRUE(pattern_matches("*", "anything"));
}

TEST(AccessTest, GrantsAllowTheirActionOnTheirTopicsOnly) {
    auto p = Principal::of(
        user_with("u", {{Action::produce, {"orders-*"}}, {Action::consume, {"audit"}}}));
    EXPECT_TRUE(p.allowed(Action::produce, "orders-eu"));
    EXPECT_FALSE(p.allowed(Action::consume, "orders-eu"));
    EXPECT_TRUE(p.allowed(Action::consume, "audit"));
    EXPECT_FALSE(p.allowed(Action::produce, "audit"));
    EXPECT_FALSE(p.allowed(Action::create, "orders-eu"));
    EXPECT_FALSE(p.admin());
    EXPECT_TRUE(p.can_read("audit", ""));
    EXPECT_TRUE(p.can_read("orders-x", "someone"));
    EXPECT_FALSE(p.can_read("billing", "someone"));
}

TEST(AccessTest, AnOwnerManagesAndReadsItsTopicButNeedsGrantsToUseIt) {
    auto p = Principal::of(user_with("carol", {}));
    EXPECT_TRUE(p.can_manage("carol"));
    EXPECT_TRUE(p.can_read("t", "carol"));
    EXPECT_FALSE(p.allowed(Action::produce, "t"));
    EXPECT_FALSE(p.allowed(Action::consume, "t"));
    EXPECT_FALSE(p.can_manage("dave"));
    EXPECT_FALSE(p.can_manage(""));  // a topic made with security off is an admin's
}

TEST(AccessTest, AdminsMayDoEverythingButOnlyRootConfersAdmin) {
    auto admin = Principal::of(user_with("ops", {{Action::admin, {}}}));
    auto root = Principal::of(user_with("admin", {}, /*root=*/true));
    auto plain = Principal::of(user_with("u", {{Action::create, {"*"}}}));
    for (const Principal* p : {&admin, &root}) {
        EXPECT_TRUE(p->admin());
        EXPECT_TRUE(p->allowed(Action::consume, "x"));
        EXPECT_TRUE(p->can_manage(""));
        EXPECT_TRUE(p->can_delegate({{Action::produce, {"*"}}}));
    }
    EXPECT_FALSE(admin.can_delegate({{Action::admin, {}}}));
    EXPECT_TRUE(root.can_delegate({{Action::admin, {}}}));
    EXPECT_FALSE(plain.can_delegate({{Action::create, {"*"}}}));
}

TEST(AccessTest, WithSecurityOffEveryCheckPasses) {
    Principal p = Principal::anyone();
    EXPECT_TRUE(p.security_off());
    EXPECT_TRUE(p.root());
    EXPECT_TRUE(p.allowed(Action::produce, "x"));
    EXPECT_TRUE(p.can_manage(""));
    EXPECT_TRUE(p.can_delegate({{Action::admin, {}}}));
}

}  // namespace
}  // namespace narad::auth
