#include "base/duration.h"

#include <gtest/gtest.h>

namespace narad {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

int64_t parse(std::string_view text) {
    auto result = parse_duration_ns(text, DayUnit::accepted);
    EXPECT_TRUE(result.is_ok()) << text << ": " << result.status().message();
    return result.is_ok() ? *result : -1;
}

std::string error_of(std::string_view text) {
    auto result = parse_duration_ns(text, DayUnit::accepted);
    EXPECT_FALSE(result.is_ok()) << text;
    return result.is_ok() ? "" : result.status().message();
}

// Rule: every form Go's time.ParseDuration accepts parses to the same nanoseconds.
TEST(DurationParse, AcceptsGoForms) {
    EXPECT_EQ(parse("0"), 0);
    EXPECT_EQ(parse("-0"), 0);
    EXPECT_EQ(parse("300ms"), 300'000'000);
    EXPECT_EQ(parse("1.5s"), 1'500'000'000);
    EXPECT_EQ(parse("1h30m"), 5'400 * kSecond);
    EXPECT_EQ(parse("2h45m30.5s"), (2 * 3600 + 45 * 60) * kSecond + 30'500'000'000);
    EXPECT_EQ(parse("1us"), 1'000);
    EXPECT_EQ(parse("1\xc2\xb5s"), 1'000);  // µs, micro sign
    EXPECT_EQ(parse("1\xce\xbcs"), 1'000);  // μs, Greek mu
    EXPECT_EQ(parse("7ns"), 7);
    EXPECT_EQ(parse("-1.5h"), -5'400 * kSecond);
    EXPECT_EQ(parse("+5m"), 300 * kSecond);
    EXPECT_EQ(parse(".5s"), 500'000'000);
    EXPECT_EQ(parse("1.s"), kSecond);
    EXPECT_EQ(parse("12h"), 43'200 * kSecond);
}

// Rule: our one extension, the `d` unit, is 24 hours and combines with the other units.
TEST(DurationParse, DayUnitIsTwentyFourHours) {
    EXPECT_EQ(parse("7d"), 7 * 86'400 * kSecond);
    EXPECT_EQ(parse("1d12h"), 36 * 3'600 * kSecond);
    EXPECT_EQ(parse("0.5d"), 12 * 3'600 * kSecond);
}

// Rule: the server's parsers (config, consume `wait`) refuse `d`, as Go does.
TEST(DurationParse, DayUnitIsRefusedUnlessAccepted) {
    EXPECT_EQ(parse_duration_ns("7d").status().message(),
              "time: unknown unit \"d\" in duration \"7d\"");
    EXPECT_EQ(parse_duration("1m30s")->count(), 90 * kSecond);
}

// Rule: malformed durations fail with Go's exact texts.
TEST(DurationParse, RejectsMalformedWithGoTexts) {
    EXPECT_EQ(error_of(""), "time: invalid duration \"\"");
    EXPECT_EQ(error_of("abc"), "time: invalid duration \"abc\"");
    EXPECT_EQ(error_of("5"), "time: missing unit in duration \"5\"");
    EXPECT_EQ(error_of("1w"), "time: unknown unit \"w\" in duration \"1w\"");
    EXPECT_EQ(error_of("-"), "time: invalid duration \"-\"");
    EXPECT_EQ(error_of(".s"), "time: invalid duration \".s\"");
    EXPECT_EQ(error_of("1s5"), "time: missing unit in duration \"1s5\"");
    EXPECT_EQ(error_of("3000000h"), "time: invalid duration \"3000000h\"");
    EXPECT_EQ(error_of("9223372036854775808ns"),
              "time: invalid duration \"9223372036854775808ns\"");
    EXPECT_EQ(error_of("1\xffs"), "time: unknown unit \"\\xffs\" in duration \"1\\xffs\"");
}

// Rule: the extreme representable values parse exactly.
TEST(DurationParse, HandlesInt64Extremes) {
    EXPECT_EQ(parse("9223372036854775807ns"), INT64_MAX);
    EXPECT_EQ(parse("-9223372036854775808ns"), INT64_MIN);
}

// Rule: formatting reproduces Go's Duration.String.
TEST(DurationFormat, MatchesGoDurationString) {
    EXPECT_EQ(format_duration(0), "0s");
    EXPECT_EQ(format_duration(1), "1ns");
    EXPECT_EQ(format_duration(1'500), "1.5\xc2\xb5s");
    EXPECT_EQ(format_duration(100'000), "100\xc2\xb5s");
    EXPECT_EQ(format_duration(1'000'000), "1ms");
    EXPECT_EQ(format_duration(1'234'500), "1.2345ms");
    EXPECT_EQ(format_duration(1'500'000'000), "1.5s");
    EXPECT_EQ(format_duration(60 * kSecond), "1m0s");
    EXPECT_EQ(format_duration(168 * 3'600 * kSecond), "168h0m0s");
    EXPECT_EQ(format_duration(3'723 * kSecond + 4'000'000), "1h2m3.004s");
    EXPECT_EQ(format_duration(-90 * kSecond), "-1m30s");
    EXPECT_EQ(format_duration(INT64_MIN), "-2562047h47m16.854775808s");
}

// Rule: rounding follows Go's Duration.Round (halves away from zero).
TEST(DurationFormat, RoundsLikeGo) {
    EXPECT_EQ(round_duration(1'499'999, 1'000'000), 1'000'000);
    EXPECT_EQ(round_duration(1'500'000, 1'000'000), 2'000'000);
    EXPECT_EQ(round_duration(-1'500'000, 1'000'000), -2'000'000);
    EXPECT_EQ(round_duration(-1'400'000, 1'000'000), -1'000'000);
    EXPECT_EQ(round_duration(12'345, 0), 12'345);
    EXPECT_EQ(round_duration(INT64_MAX, 1'000'000), INT64_MAX);
    EXPECT_EQ(format_duration(round_duration(1'234'567'890, 1'000'000)), "1.235s");
}

}  // namespace
}  // namespace narad
