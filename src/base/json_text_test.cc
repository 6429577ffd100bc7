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

// Rule: UTF-8 validation rejects overlongs, surrogates and truncated sequences.
TEST(JsonTextTest, Utf8Validation) {
    EXPECT_TRUE(is_valid_utf8("plain ascii"));
    EXPECT_TRUE(is_valid_utf8("\xf0\x9f\x98\x80"));
    EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));
    EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));
    EXPECT_FALSE(is_valid_utf8("\xe2\x82"));
    EXPECT_FALSE(is_valid_utf8("\xf5\x80\x80\x80"));
}

// Rule: base64 round-trips every byte and refuses malformed input.
TEST(JsonTextTest, Base64RoundTrip) {
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    for (size_t n = 0; n < 5; ++n) {
        std::string sample = all.substr(0, all.size() - n);
        EXPECT_EQ(base64_decode(base64_encode(sample)), sample);
    }
    EXPECT_EQ(base64_encode("hi"), "aGk=");
    // RFC 4648's test vectors.
    EXPECT_EQ(base64_encode(""), "");
    EXPECT_EQ(base64_encode("f"), "Zg==");
    EXPECT_EQ(base64_encode("fo"), "Zm8=");
    EXPECT_EQ(base64_encode("foo"), "Zm9v");
    EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
    // Non-zero bits under the padding are refused, as Go's strict decoder does.
    EXPECT_FALSE(base64_decode("aGl=").has_value());
    EXPECT_FALSE(base64_decode("aH==").has_value());
    EXPECT_FALSE(base64_decode("aGk").has_value());
    EXPECT_FALSE(base64_decode("a=Gk").has_value());
    EXPECT_FALSE(base64_decode("aG!=").has_value());
}

}  // namespace
}  // namespace narad
