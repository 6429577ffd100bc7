#include "base/json_text.h"

#include <gtest/gtest.h>

#include "cli/json_text.h"

namespace narad::cli {
namespace {

// Rule: indentation is Go's json.Indent: two spaces, ": " after keys, {} and [] compact, tokens
// verbatim (key order, number spelling, escapes).
TEST(IndentJson, MatchesGoIndent) {
    EXPECT_EQ(*indent_json(R"({"b":1,"a":[1,2.50e3,{}],"c":{"d":[]},"e":"x\u003c{"})"),
              "{\n"
              "  \"b\": 1,\n"
              "  \"a\": [\n"
              "    1,\n"
              "    2.50e3,\n"
              "    {}\n"
              "  ],\n"
              "  \"c\": {\n"
              "    \"d\": []\n"
              "  },\n"
              "  \"e\": \"x\\u003c{\"\n"
              "}");
}

// Rule: leading whitespace is dropped, trailing whitespace copied through (a body ending in a
// newline keeps it).
TEST(IndentJson, DropsLeadingKeepsTrailingWhitespace) {
    EXPECT_EQ(*indent_json("  {\"a\" : true}\n"), "{\n  \"a\": true\n}\n");
    EXPECT_EQ(*indent_json("42"), "42");
}

// Rule: anything that is not exactly one JSON value is refused.
TEST(IndentJson, RejectsInvalidJson) {
    for (const char* text : {"", "{", "{\"a\":}", "[1,]", "{} {}", "nul", "01", "1.", "\"\x01\"",
                             "\"\\x\"", "{\"a\" 1}", "[1 2]", "-", "\"\\u12\""}) {
        EXPECT_FALSE(indent_json(text).has_value()) << text;
        EXPECT_FALSE(is_valid_json(text)) << text;
    }
    EXPECT_TRUE(is_valid_json("\"\xff\""));  // Go does not check UTF-8 inside strings
    EXPECT_TRUE(is_valid_json(" [1, -0.5E+2, true, false, null] "));
}

// Rule: object members come back in order with their raw value text, the last duplicate winning.
TEST(ObjectMembers, ReturnsRawValuesInOrder) {
    auto members = object_members(R"( {"topic":"t","payload": {"x" : [1, 2]} ,"n":5,"n":6} )");
    ASSERT_TRUE(members.has_value());
    ASSERT_EQ(members->size(), 4u);
    EXPECT_EQ((*members)[0].first, "topic");
    EXPECT_EQ((*members)[0].second, "\"t\"");
    EXPECT_EQ((*members)[1].second, R"({"x" : [1, 2]})");
    EXPECT_EQ(*find_member(*members, "n"), "6");
    EXPECT_FALSE(find_member(*members, "missing").has_value());
    EXPECT_FALSE(object_members("[1]").has_value());
    EXPECT_FALSE(object_members("{\"a\":1").has_value());
    EXPECT_TRUE(object_members("{}")->empty());
}

// Rule: array elements come back as raw text.
TEST(ArrayElements, ReturnsRawElements) {
    auto elements = array_elements(R"([ {"a":1}, "s" ,3 ])");
    ASSERT_TRUE(elements.has_value());
    ASSERT_EQ(elements->size(), 3u);
    EXPECT_EQ((*elements)[0], R"({"a":1})");
    EXPECT_EQ((*elements)[1], "\"s\"");
    EXPECT_EQ((*elements)[2], "3");
    EXPECT_TRUE(array_elements("[]")->empty());
    EXPECT_FALSE(array_elements("{}").has_value());
}

// Rule: string literals decode as Go's Unmarshal does, bad UTF-8 and lone surrogates as U+FFFD.
TEST(DecodeJsonString, DecodesEscapesAndSurrogates) {
    EXPECT_EQ(*decode_json_string(R"("a\"b\\c\/d\n\t")"), "a\"b\\c/d\n\t");
    EXPECT_EQ(*decode_json_string(R"("\u00e9\u20ac")"), "\xc3\xa9\xe2\x82\xac");
    EXPECT_EQ(*decode_json_string(R"("\ud83d\ude00")"), "\xf0\x9f\x98\x80");
    EXPECT_EQ(*decode_json_string(R"("\ud83dx")"), "\xef\xbf\xbdx");
    EXPECT_EQ(*decode_json_string("\"\xff\""), "\xef\xbf\xbd");
    EXPECT_FALSE(decode_json_string("5").has_value());
    EXPECT_FALSE(decode_json_string("\"open").has_value());
}

}  // namespace
}  // namespace narad::cli
