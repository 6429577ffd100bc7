#include "base/json_text.h"

#include <gtest/gtest.h>

namespace narad {
namespace {

// Rule: json.Valid semantics: one JSON value with optional surrounding whitespace.
TEST(JsonTextTest, ValidJsonMatchesGo) {
    for (const char* ok : {"42", "-0.5e3", "true", "null", "\"hi\"", " {\"a\":[1,2,{}]}\n", "[]",
                           "\"\\u00e9\\n\"", "\"\xff\""}) {
        EXPECT_TRUE(is_valid_json(ok)) << ok;
    }
    for (const char* bad : {"", "hello", "{", "[1,]", "01", "1.", "\"a", "{\"a\"}", "1 2", "tru",
                            "\"\x01\"", "{'a':1}", "-", "+1", "[1]x"}) {
        EXPECT_FALSE(is_valid_json(bad)) << bad;
    }
    EXPECT_FALSE(is_valid_json(std::string(20000, '[') + std::string(20000, ']')));
}

// Rule: strings are escaped as Go's encoder does, HTML characters included when asked.
TEST(JsonTextTest, StringEscapingMatchesGo) {
    EXPECT_EQ(json_string("a\"b\\c\n\t\r\b\f"), R"("a\"b\\c\n\t\r\b\f")");
    EXPECT_EQ(json_string("<&>"), R"("\u003c\u0026\u003e")");
    EXPECT_EQ(json_string("<&>", HtmlEscape::no), R"("<&>")");
    EXPECT_EQ(json_string(std::string("\x01", 1)), R"("\u0001")");
    EXPECT_EQ(json_string("\xe2\x80\xa8"), R"("\u2028")");
    EXPECT_EQ(json_string("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
    EXPECT_EQ(json_string("\xff"), R"("\ufffd")");
}

}  // namespace
}  // namespace narad
