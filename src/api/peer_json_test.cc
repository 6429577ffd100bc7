#include "api/peer_json.h"

#include <gtest/gtest.h>

#include <string>

namespace narad::api {
namespace {

using nlohmann::json;

std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// Rule: a reply is parsed only when it is one JSON document nesting at most kPeerReplyMaxDepth
// levels; anything else is discarded before nlohmann builds (and later copies) it.
TEST(PeerJsonTest, DeepOrBrokenRepliesAreDiscarded) {
    EXPECT_FALSE(parse_peer_reply(nested(kPeerReplyMaxDepth)).is_discarded());
    EXPECT_TRUE(parse_peer_reply(nested(kPeerReplyMaxDepth + 1)).is_discarded());
    EXPECT_TRUE(parse_peer_reply(std::string(100'000, '[')).is_discarded());
    EXPECT_TRUE(parse_peer_reply("{\"a\":1} {").is_discarded());
    EXPECT_TRUE(parse_peer_reply("").is_discarded());
    EXPECT_EQ(parse_peer_reply(R"({"a":[1,2]})")["a"][1], 2);
}

// Rule: a field is read only when it has its type and fits; absent fields give the fallback.
TEST(PeerJsonTest, FieldsMustHaveTheirTypeAndRange) {
    json item = json::parse(
        R"({"ok":5,"neg":-1,"frac":1.9,"huge":1e300,"text":"1","big":4294967296,
            "top":18446744073709551615,"list":[1],"obj":{}})");
    EXPECT_EQ(unsigned_field(item, "ok"), 5u);
    for (const char* bad : {"neg", "frac", "huge", "text", "list"}) {
        EXPECT_THROW(unsigned_field(item, bad), WrongShape) << bad;
    }
    EXPECT_THROW(unsigned_field(item, "big", UINT32_MAX), WrongShape);
    EXPECT_EQ(unsigned_field_or(item, "absent", 7), 7u);
    EXPECT_THROW(unsigned_field(item, "absent"), json::exception);
    EXPECT_EQ(signed_field_or(item, "neg", 0), -1);
    EXPECT_EQ(signed_field_or(item, "absent", 9), 9);
    for (const char* bad : {"frac", "huge", "top", "text"}) {
        EXPECT_THROW(signed_field_or(item, bad, 0), WrongShape) << bad;
    }
    EXPECT_EQ(array_field(item, "list").size(), 1u);
    EXPECT_THROW(array_field(item, "obj"), WrongShape);
}

}  // namespace
}  // namespace narad::api
