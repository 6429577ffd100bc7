#include "base/duration.h"

#include <gtest/gtest.h>

namespace narad {
namespace {

using std::chrono::nanoseconds;

long long ns(std::string_view text, DayUnit days = DayUnit::rejected) {
    auto parsed = parse_duration(text, days);
    EXPECT_TRUE(parsed.is_ok()) << text << ": " << parsed.status().to_string();
    return parsed.is_ok() ? parsed->count() : -1;
}

// Rule: Go duration strings parse as Go's time.ParseDuration does.
TEST(DurationTest, ParsesGoDurations) {
    EXPECT_EQ(ns("0"), 0);
    EXPECT_EQ(ns("10s"), 10'000'000'000);
    EXPECT_EQ(ns("500ms"), 500'000'000);
    EXPECT_EQ(ns("1m30s"), 90'000'000'000);
    EXPECT_EQ(ns("1.5h"), 5'400'000'000'000);
    EXPECT_EQ(ns("2us"), 2'000);
    EXPECT_EQ(ns("2µs"), 2'000);
    EXPECT_EQ(ns("-3s"), -3'000'000'000);
    EXPECT_EQ(ns(".5s"), 500'000'000);
    EXPECT_EQ(ns("7d", DayUnit::accepted), 7 * 86'400'000'000'000);
}

// Rule: malformed durations are refused with Go's error texts.
TEST(DurationTest, RefusesMalformedDurationsWithGoTexts) {
    EXPECT_EQ(parse_duration("5").status().message(), "time: missing unit in duration \"5\"");
    EXPECT_EQ(parse_duration("abc").status().message(), "time: invalid duration \"abc\"");
    EXPECT_EQ(parse_duration("").status().message(), "time: invalid duration \"\"");
    EXPECT_EQ(parse_duration("7d").status().message(),
              "time: unknown unit \"d\" in duration \"7d\"");
    EXPECT_FALSE(parse_duration("1.s.").is_ok());
    EXPECT_FALSE(parse_duration("99999999999999999999h").is_ok());
}

// Rule: formatting matches Go's Duration.String.
TEST(DurationTest, FormatsAsGo) {
    EXPECT_EQ(format_duration(nanoseconds(0)), "0s");
    EXPECT_EQ(format_duration(std::chrono::milliseconds(500)), "500ms");
    EXPECT_EQ(format_duration(std::chrono::seconds(90)), "1m30s");
    EXPECT_EQ(format_duration(std::chrono::hours(168)), "168h0m0s");
    EXPECT_EQ(format_duration(std::chrono::milliseconds(1500)), "1.5s");
    EXPECT_EQ(format_duration(std::chrono::microseconds(2)), "2µs");
    EXPECT_EQ(format_duration(std::chrono::seconds(10)), "10s");
    EXPECT_EQ(format_duration(-std::chrono::seconds(1)), "-1s");
}

}  // namespace
}  // namespace narad
