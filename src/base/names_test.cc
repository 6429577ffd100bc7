#include "base/names.h"

#include <gtest/gtest.h>

namespace narad {
namespace {

// Rule: topic names match ^[A-Za-z0-9._-]{1,200}$ and are never "." or "..", so no name can climb
// out of the data directory or carry a separator.
TEST(NamesTest, TopicNamesThatCouldEscapeTheDataDirectoryAreRejected) {
    EXPECT_TRUE(validate_topic_name("orders").is_ok());
    EXPECT_TRUE(validate_topic_name("a.b_c-D9").is_ok());
    EXPECT_TRUE(validate_topic_name(std::string(200, 'x')).is_ok());
    for (std::string bad : {"", ".", "..", "a/b", "../etc", "a b", "a\\b", "tópico"}) {
        EXPECT_EQ(validate_topic_name(bad).code(), Errc::invalid_argument) << bad;
    }
    EXPECT_FALSE(validate_topic_name(std::string(201, 'x')).is_ok());
    EXPECT_FALSE(validate_topic_name(std::string_view("a\0b", 3)).is_ok());
}

// Rule: user names match ^[A-Za-z0-9._-]{1,64}$.
TEST(NamesTest, UserNamesAreLimitedTo64Characters) {
    EXPECT_TRUE(validate_user_name("alice").is_ok());
    EXPECT_TRUE(validate_user_name(std::string(64, 'u')).is_ok());
    EXPECT_FALSE(validate_user_name(std::string(65, 'u')).is_ok());
    EXPECT_FALSE(validate_user_name("al ice").is_ok());
}

// Rule: node ids, which become etcd keys and member names, carry no separator and are never . or ..
TEST(NamesTest, NodeIdsCarryNoSeparator) {
    EXPECT_TRUE(validate_node_id("node-1.example.com").is_ok());
    for (std::string bad : {std::string(), std::string("."), std::string(".."), std::string("a/b"),
                            std::string("n 1"), std::string(256, 'n')}) {
        EXPECT_EQ(validate_node_id(bad).code(), Errc::invalid_argument) << bad;
    }
}

}  // namespace
}  // namespace narad
