#include "auth/password.h"

#include <gtest/gtest.h>

#include <set>

namespace narad::auth {
namespace {

TEST(PasswordTest, AHashVerifiesItsPasswordAndNoOther) {
    auto hash = hash_password("correct horse", HashCost::minimal);
    ASSERT_TRUE(hash.is_ok());
    EXPECT_TRUE(hash->starts_with("$argon2id$")) << *hash;
    EXPECT_EQ(hash->find("correct horse"), std::string::npos);
    EXPECT_TRUE(verify_password(*hash, "correct horse"));
    EXPECT_FALSE(verify_password(*hash, "correct horsE"));
    EXPECT_FALSE(verify_password(*hash, ""));
}

TEST(PasswordTest, TwoHashesOfOnePasswordDifferBySalt) {
    auto a = hash_password("same", HashCost::minimal);
    auto b = hash_password("same", HashCost::minimal);
    ASSERT_TRUE(a.is_ok() && b.is_ok());
    EXPECT_NE(*a, *b);
}

TEST(PasswordTest, AHashMadeAtTheInteractiveCostVerifiesToo) {
    auto hash = hash_password("p", HashCost::interactive);
    ASSERT_TRUE(hash.is_ok());
    EXPECT_TRUE(verify_password(*hash, "p"));
}

TEST(PasswordTest, SomethingThatIsNotAHashVerifiesNothing) {
    EXPECT_FALSE(verify_password("", "x"));
    EXPECT_FALSE(verify_password("$2a$10$notargon", "x"));
    EXPECT_FALSE(verify_password(std::string(500, 'a'), "x"));
}

TEST(PasswordTest, GeneratedPasswordsAreUrlSafeAndDistinct) {
    std::set<std::string> seen;
    for (int i = 0; i < 50; ++i) {
        std::string password = generate_password();
        EXPECT_EQ(password.size(), 24u);
        for (char c : password) {
            EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') << c;
        }
        seen.insert(password);
    }
    EXPECT_EQ(seen.size(), 50u);
}

}  // namespace
}  // namespace narad::auth
