#include "cli/text.h"

#include <gtest/gtest.h>

#include <vector>

namespace narad::cli {
namespace {

// Rule: humanBytes prints "<n>B" below 1024 and one decimal with a binary unit above.
TEST(HumanBytes, MatchesGoHumanBytes) {
    EXPECT_EQ(human_bytes(0), "0B");
    EXPECT_EQ(human_bytes(1023), "1023B");
    EXPECT_EQ(human_bytes(1024), "1.0KiB");
    EXPECT_EQ(human_bytes(1536), "1.5KiB");
    EXPECT_EQ(human_bytes(1024 * 1024 - 1), "1024.0KiB");
    EXPECT_EQ(human_bytes(1024 * 1024), "1.0MiB");
    EXPECT_EQ(human_bytes(int64_t{5} << 30), "5.0GiB");
    EXPECT_EQ(human_bytes(int64_t{3} << 40), "3.0TiB");
    EXPECT_EQ(human_bytes(-5), "-5B");
}

// Rule: int flags parse like pflag (strconv.ParseInt base 0) with Go's error texts.
TEST(ParseGoInt, AcceptsBasePrefixesAndUnderscores) {
    EXPECT_EQ(*parse_go_int("10"), 10);
    EXPECT_EQ(*parse_go_int("-5"), -5);
    EXPECT_EQ(*parse_go_int("+7"), 7);
    EXPECT_EQ(*parse_go_int("0x1f"), 31);
    EXPECT_EQ(*parse_go_int("0o17"), 15);
    EXPECT_EQ(*parse_go_int("017"), 15);
    EXPECT_EQ(*parse_go_int("0b101"), 5);
    EXPECT_EQ(*parse_go_int("0"), 0);
    EXPECT_EQ(*parse_go_int("1_000"), 1000);
    EXPECT_EQ(*parse_go_int("9223372036854775807"), INT64_MAX);
    EXPECT_EQ(*parse_go_int("-9223372036854775808"), INT64_MIN);
}

// Rule: bad integers fail with strconv's syntax or range text.
TEST(ParseGoInt, RejectsWithStrconvTexts) {
    EXPECT_EQ(parse_go_int("x").status().message(),
              "strconv.ParseInt: parsing \"x\": invalid syntax");
    EXPECT_EQ(parse_go_int("").status().message(),
              "strconv.ParseInt: parsing \"\": invalid syntax");
    EXPECT_EQ(parse_go_int("12a").status().message(),
              "strconv.ParseInt: parsing \"12a\": invalid syntax");
    EXPECT_EQ(parse_go_int("1__0").status().message(),
              "strconv.ParseInt: parsing \"1__0\": invalid syntax");
    EXPECT_EQ(parse_go_int("0x").status().message(),
              "strconv.ParseInt: parsing \"0x\": invalid syntax");
    EXPECT_EQ(parse_go_int("9223372036854775808").status().message(),
              "strconv.ParseInt: parsing \"9223372036854775808\": value out of range");
    EXPECT_EQ(flag_error("x", "--count", "boom"),
              "invalid argument \"x\" for \"--count\" flag: boom");
}

// Rule: %q escapes like strconv.Quote: printable text verbatim, control and invalid bytes escaped.
TEST(GoQuote, EscapesLikeStrconvQuote) {
    EXPECT_EQ(go_quote("demo"), "\"demo\"");
    EXPECT_EQ(go_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
    EXPECT_EQ(go_quote("tab\there\n"), "\"tab\\there\\n\"");
    EXPECT_EQ(go_quote("\x01"), "\"\\x01\"");
    EXPECT_EQ(go_quote("\xff"), "\"\\xff\"");
    EXPECT_EQ(go_quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
}

// Rule: padding counts runes, so ANSI codes and multi-byte characters pad as Go's %-Ns does.
TEST(Padding, CountsRunes) {
    EXPECT_EQ(pad_right("ab", 4), "ab  ");
    EXPECT_EQ(pad_left("ab", 4), "  ab");
    EXPECT_EQ(pad_right("toolong", 3), "toolong");
    EXPECT_EQ(pad_right("\xc3\xa9", 3), "\xc3\xa9  ");
    EXPECT_EQ(pad_right("\x1b[1mNAME\x1b[0m", 32).size(), 32u);  // 12 bytes of text + 20 spaces
}

// Rule: Go's %.0f, including its spelling of infinities.
TEST(FormatFloat, MatchesGo) {
    EXPECT_EQ(format_float0(1234.4), "1234");
    EXPECT_EQ(format_float0(2.5), "2");  // round half to even, as Go does
    EXPECT_EQ(format_float0(1.0 / 0.0), "+Inf");
    EXPECT_EQ(format_float1(1.25), "1.2");
}

// Rule: url.QueryEscape and url.PathEscape escape exactly what Go's do.
TEST(UrlEscape, MatchesGo) {
    EXPECT_EQ(query_escape("0:12:3"), "0%3A12%3A3");
    EXPECT_EQ(query_escape("a b&c=d/é"), "a+b%26c%3Dd%2F%C3%A9");
    EXPECT_EQ(query_escape("A-z_0.9~"), "A-z_0.9~");
    EXPECT_EQ(path_escape("a b/c:d"), "a%20b%2Fc:d");
}

}  // namespace
}  // namespace narad::cli
