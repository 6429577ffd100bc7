#include "cli/bench_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace narad::cli::bench {
namespace {

OpResult produce_result() {
    OpResult r;
    r.ok = 10'000;
    r.failed = 2;
    r.requests = 10'002;
    r.elapsed_ns = 1'234'567'890;
    r.latency.count = 10'000;
    r.latency.p50_ns = 1'040'000;
    r.latency.p95_ns = 2'160'000;
    r.latency.p99_ns = 3'249'000;
    r.latency.p999_ns = 9'950'000;
    r.latency.max_ns = 12'000'000;
    r.errors = {{"503", 2}};
    return r;
}

// Rule: a plain run prints Go's lines word for word (counts, "×", elapsed rounded to ms,
// percentiles rounded to 100 µs).
TEST(BenchReport, PlainRunKeepsGoLines) {
    BenchConfig config;
    EXPECT_EQ(format_start(config, 256), "producing 10000 \xc3\x97 256B with 8 workers...\n");
    BenchReport report;
    report.config = config;
    report.payload_bytes = 256;
    report.produce = produce_result();
    const std::string text = format_result(report);
    EXPECT_TRUE(
        text.starts_with("produce: 10000 ok, 2 failed in 1.235s \xe2\x80\x94 8100 msg/s; "
                         "latency p50=1ms p95=2.2ms p99=3.2ms\n"))
        << text;
    EXPECT_NE(text.find("produce: 2.07 MB/s; latency p999=10ms max=12ms; errors: 503=2\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("consume:"), std::string::npos);
}

// Rule: --consume adds Go's consume line plus ack outcomes and end-to-end latency.
TEST(BenchReport, ConsumeRunAddsConsumeLines) {
    BenchConfig config;
    config.consume = true;
    config.consumers = 4;
    config.batch = 50;
    config.rate = 5000;
    EXPECT_EQ(format_start(config, 256),
              "producing 10000 \xc3\x97 256B with 8 workers...\n"
              "  batch=50 rate=5000/s keys=0\n"
              "consuming+acking 10000 with 4 workers...\n");
    BenchReport report;
    report.config = config;
    report.payload_bytes = 256;
    report.timed_payload = true;
    report.produce = produce_result();
    report.consumed = true;
    report.consume.ok = 10'000;
    report.consume.elapsed_ns = 2'000'000'000;
    report.ack.ok = 9'998;
    report.ack.errors = {{"410", 2}};
    report.lapsed = 2;
    report.end_to_end.count = 10'000;
    report.end_to_end.p50_ns = 5'000'000;
    report.end_to_end.max_ns = 50'000'000;
    const std::string text = format_result(report);
    EXPECT_NE(text.find("consume: 10000 msgs in 2s (5000 msg/s)\n"), std::string::npos) << text;
    EXPECT_NE(text.find("consume: 9998 acked, 2 lapsed (410), 0 ack failures;"), std::string::npos)
        << text;
    EXPECT_NE(text.find("errors: ack 410=2\n"), std::string::npos) << text;
    EXPECT_NE(text.find("end-to-end: p50=5ms "), std::string::npos) << text;

    report.timed_payload = false;
    EXPECT_NE(format_result(report).find("end-to-end: n/a"), std::string::npos);
}

// Rule: a timed run says "for <duration>" instead of a count.
TEST(BenchReport, DurationRunStartLine) {
    BenchConfig config;
    config.duration_ns = 30'000'000'000;
    config.connections = 64;
    EXPECT_EQ(format_start(config, 1024), "producing for 30s \xc3\x97 1024B with 64 workers...\n");
}

// Rule: --json is one parseable object holding config, produce, consume and end-to-end numbers.
TEST(BenchReport, JsonCarriesResults) {
    BenchReport report;
    report.config.topic = "bench";
    report.config.consume = true;
    report.payload_bytes = 256;
    report.timed_payload = true;
    report.produce = produce_result();
    report.consumed = true;
    report.consume.ok = 7;
    report.end_to_end.count = 7;
    report.end_to_end.p99_ns = 2'500'000;
    const std::string text = format_json(report);
    ASSERT_TRUE(text.ends_with("}\n"));
    const nlohmann::json doc = nlohmann::json::parse(text);
    EXPECT_EQ(doc["topic"], "bench");
    EXPECT_EQ(doc["produce"]["messages_ok"], 10'000);
    EXPECT_EQ(doc["produce"]["errors"]["503"], 2);
    EXPECT_DOUBLE_EQ(doc["produce"]["latency"]["p50_us"].get<double>(), 1040.0);
    EXPECT_EQ(doc["consume"]["messages_ok"], 7);
    EXPECT_DOUBLE_EQ(doc["end_to_end"]["p99_us"].get<double>(), 2500.0);
}

}  // namespace
}  // namespace narad::cli::bench
