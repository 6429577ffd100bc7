#include "net/http.h"

#include <gtest/gtest.h>

#include <random>

namespace narad::net {
namespace {

using Query = std::vector<std::pair<std::string, std::string>>;

// Rule: the path is percent-decoded, the query split on '&' and '=' and decoded with '+' as a
// space, in order, duplicates kept.
TEST(ParseTargetTest, DecodesPathAndQueryKeepingDuplicates) {
    std::string path;
    Query query;
    ASSERT_TRUE(parse_target("/v1/topics/a%20b%2Fc?x=1&y=a+b&y=%2B&z=%C3%A9", path, query));
    EXPECT_EQ(path, "/v1/topics/a b/c");
    EXPECT_EQ(query, (Query{{"x", "1"}, {"y", "a b"}, {"y", "+"}, {"z", "\xC3\xA9"}}));
}

// Rule: '+' is a literal plus in the path; only the query treats it as a space.
TEST(ParseTargetTest, PlusIsLiteralInPathAndSpaceInQuery) {
    std::string path;
    Query query;
    ASSERT_TRUE(parse_target("/a+b?k+1=v+1", path, query));
    EXPECT_EQ(path, "/a+b");
    EXPECT_EQ(query, (Query{{"k 1", "v 1"}}));
}

// Rule: a '%' not followed by two hex digits anywhere in the target is rejected.
TEST(ParseTargetTest, MalformedEscapesAreRejected) {
    for (std::string_view target :
         {"/a%", "/a%4", "/a%zz", "/a%4g", "/ok?x=%", "/ok?x=%G1", "/ok?%2=1", "/ok?a=1&b=%%"}) {
        std::string path;
        Query query;
        EXPECT_FALSE(parse_target(target, path, query)) << target;
    }
}

// Rule: empty pieces are skipped, a name without '=' has an empty value, and an escaped '&' or '='
// is data, not a separator.
TEST(ParseTargetTest, EmptyPiecesAndEscapedSeparators) {
    std::string path;
    Query query;
    ASSERT_TRUE(parse_target("/p?a&&b=&=c&d=1%262%3D3&", path, query));
    EXPECT_EQ(path, "/p");
    EXPECT_EQ(query, (Query{{"a", ""}, {"b", ""}, {"", "c"}, {"d", "1&2=3"}}));
    ASSERT_TRUE(parse_target("/only", path, query));
    EXPECT_TRUE(query.empty());
    ASSERT_TRUE(parse_target("/p?", path, query));
    EXPECT_EQ(path, "/p");
    EXPECT_TRUE(query.empty());
}

// Rule: url_encode leaves only unreserved characters, and decoding its output gives back any byte
// string, in a path and in a query value.
TEST(UrlEncodeTest, RoundTripsArbitraryBytes) {
    EXPECT_EQ(url_encode("a-b_c.d~e"), "a-b_c.d~e");
    EXPECT_EQ(url_encode("a b+c/d&e=f%"), "a%20b%2Bc%2Fd%26e%3Df%25");
    std::mt19937 random(42);
    for (int i = 0; i < 500; ++i) {
        std::string value(random() % 40, '\0');
        for (char& c : value) c = static_cast<char>(random() % 256);
        std::string encoded = url_encode(value);
        for (char c : encoded) {
            bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~' ||
                         c == '%';
            ASSERT_TRUE(plain) << encoded;
        }
        std::string path;
        Query query;
        ASSERT_TRUE(parse_target("/" + encoded + "?v=" + encoded, path, query));
        EXPECT_EQ(path, "/" + value);
        ASSERT_EQ(query.size(), 1u);
        EXPECT_EQ(query[0].second, value);
    }
}

// Rule: header() finds the first value whatever the case of the asked name; query_param() the first
// value of a parameter and query_count() how many there are.
TEST(HttpRequestTest, LooksUpHeadersAndQueryParameters) {
    HttpRequest request;
    request.headers = {{"content-type", "text/plain"}, {"x-a", "1"}, {"x-a", "2"}};
    request.query = {{"p", "1"}, {"q", ""}, {"p", "2"}};
    EXPECT_EQ(request.header("content-type"), "text/plain");
    EXPECT_EQ(request.header("Content-Type"), "text/plain");
    EXPECT_EQ(request.header("x-a"), "1");
    EXPECT_FALSE(request.header("x-b").has_value());
    EXPECT_EQ(request.query_param("p"), "1");
    EXPECT_EQ(request.query_param("q"), "");
    EXPECT_FALSE(request.query_param("r").has_value());
    EXPECT_EQ(request.query_count("p"), 2u);
    EXPECT_EQ(request.query_count("r"), 0u);
}

}  // namespace
}  // namespace narad::net
