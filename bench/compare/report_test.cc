#include "compare/report.h"

#include <gtest/gtest.h>

#include <sstream>

namespace narad::compare {
namespace {

RunRow make_row(const std::string& workload, const std::string& system, double consume_rate,
                int64_t p99_ms) {
    RunRow row;
    row.workload = workload;
    row.system = system;
    row.durability = system + " durability";
    row.produced = 1000;
    row.acked = 1000;
    row.produce_msgs_per_s = consume_rate * 1.1;
    row.produce_mb_per_s = row.produce_msgs_per_s * 1024 / 1e6;
    row.consume_msgs_per_s = consume_rate;
    row.e2e_count = 1000;
    row.e2e_p50_ns = 1'500'000;
    row.e2e_p99_ns = p99_ms * 1'000'000;
    row.e2e_p999_ns = p99_ms * 2'000'000;
    row.e2e_max_ns = p99_ms * 3'000'000;
    row.server_peak_rss_bytes = uint64_t(50) << 20;
    row.client_cpu_s = 2;
    row.elapsed_s = 4;
    return row;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
    return lines;
}

TEST(RatioTest, ComparesConsumeRateAndP99) {
    // Rule: the ratio is Narad's consume+ack msgs/s and p99 over the peer's.
    const RunRow narad = make_row("w", "narad-batch", 80'000, 6);
    const RunRow peer = make_row("w", "nats", 100'000, 3);
    const Ratio ratio = compute_ratio(narad, peer);
    ASSERT_TRUE(ratio.throughput.has_value());
    ASSERT_TRUE(ratio.p99.has_value());
    EXPECT_DOUBLE_EQ(*ratio.throughput, 0.8);
    EXPECT_DOUBLE_EQ(*ratio.p99, 2.0);
}

TEST(RatioTest, NoRatioAgainstAFailedRowOrAZeroFigure) {
    // Rule: a failed row or a zero divisor gives no ratio rather than a misleading one.
    const RunRow narad = make_row("w", "narad-batch", 80'000, 6);
    RunRow failed = make_row("w", "nats", 100'000, 3);
    failed.outcome = RunRow::Outcome::failed;
    EXPECT_FALSE(compute_ratio(narad, failed).throughput.has_value());
    EXPECT_FALSE(compute_ratio(failed, narad).throughput.has_value());
    RunRow zero = make_row("w", "nats", 0, 0);
    const Ratio ratio = compute_ratio(narad, zero);
    EXPECT_FALSE(ratio.throughput.has_value());
    EXPECT_FALSE(ratio.p99.has_value());
}

TEST(FormatTest, NumbersAreReadable) {
    // Rule: counts get thousands separators, milliseconds sensible precision, ratios a ×.
    EXPECT_EQ(format_count(90764.4), "90,764");
    EXPECT_EQ(format_count(999), "999");
    EXPECT_EQ(format_count(1'000'000), "1,000,000");
    EXPECT_EQ(format_ms(1'234'567), "1.23");
    EXPECT_EQ(format_ms(45'670'000), "45.7");
    EXPECT_EQ(format_ms(1'234'000'000), "1,234");
    EXPECT_EQ(format_ratio(0.8), "0.80×");
    EXPECT_EQ(format_ratio(12.34), "12.3×");
    EXPECT_EQ(format_ratio(std::nullopt), "–");
}

TEST(ResultsTableTest, RendersRowsWithBothNaradRatios) {
    // Rule: each peer row shows narad-batch ÷ it and narad-single ÷ it; Narad's own row shows
    // the other Narad variant's ratio and a dash for itself.
    const std::vector<RunRow> rows = {make_row("w", "narad-single", 12'000, 12),
                                      make_row("w", "narad-batch", 80'000, 6),
                                      make_row("w", "nats", 100'000, 3)};
    const auto lines = lines_of(render_results_table(rows));
    ASSERT_EQ(lines.size(), 5u);
    EXPECT_EQ(lines[4],
              "| w | nats | no fsync (every 2 min) | 110,000 | 112.6 | 1.50 / 3.00 / 6.00 | "
              "100,000 | 0 | 50 | 0.50 | 0.80× · 2.00× | 0.12× · 4.00× |");
    EXPECT_EQ(lines[3],
              "| w | narad-batch | fsync per produce | 88,000 | 90.1 | 1.50 / 6.00 / 12.0 | "
              "80,000 | 0 | 50 | 0.50 | – | 0.15× · 2.00× |");
}

TEST(ResultsTableTest, FailedRowSaysSoAndHasNoFigures) {
    // Rule: a failed system is a row marked failed, not a missing row.
    RunRow failed;
    failed.workload = "w";
    failed.system = "redis-always";
    failed.outcome = RunRow::Outcome::failed;
    failed.error = "start: redis-server not found";
    const auto lines = lines_of(render_results_table({failed}));
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[2],
              "| w | redis-always | fsync per write cycle | **failed** | – | – | – | – | – | – | – "
              "| – |");
}

TEST(ResultsTableTest, LostMessagesAreShown) {
    // Rule: a shortfall between produced and consumed+acked appears in the lost column.
    RunRow row = make_row("w", "nats", 100, 1);
    row.lost = 1234;
    const auto lines = lines_of(render_results_table({row}));
    EXPECT_NE(lines[2].find("| 1,234 |"), std::string::npos);
}

TEST(CsvTest, OneHeaderAndOneLinePerRowWithQuoting) {
    // Rule: the CSV has every row, raw numbers, and quotes fields holding commas or quotes.
    RunRow row = make_row("w, \"quoted\"", "nats", 100'000, 3);
    row.notes = {"a note"};
    const auto lines =
        lines_of(render_csv({make_row("w, \"quoted\"", "narad-batch", 50'000, 6), row}));
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_TRUE(lines[0].starts_with("workload,system,outcome,error,durability,"));
    EXPECT_TRUE(
        lines[2].starts_with("\"w, \"\"quoted\"\"\",nats,ok,,nats durability,0,1000,0,"
                             "1000,0,0,110000.0,112.64,100000.0,1000,1.500,3.000,6.000,"
                             "9.000,50.0,0.00,2.00,4.000,0.5000,2.0000,,,a note"))
        << lines[2];
    EXPECT_EQ(csv_field("plain"), "plain");
    EXPECT_EQ(csv_field("a\"b"), "\"a\"\"b\"");
}

TEST(LimitsTableTest, ShowsSyncRatesAndLoopback) {
    // Rule: the limits table gives syncs/s and MB/s per size, and loopback Gbit/s and MB/s.
    LimitsResult limits;
    SyncProbe probe;
    probe.write_bytes = 64 * 1024;
    probe.syncs = 6000;
    probe.seconds = 3;
    limits.syncs.push_back(probe);
    SyncProbe failed;
    failed.write_bytes = 256 * 1024;
    failed.error = "fdatasync: Input/output error";
    limits.syncs.push_back(failed);
    limits.loopback.bytes = 4'000'000'000;
    limits.loopback.seconds = 2;
    const auto lines = lines_of(render_limits_table(limits));
    ASSERT_EQ(lines.size(), 5u);
    EXPECT_EQ(lines[2], "| write + fdatasync, 64 KiB each | 2,000 syncs/s | 131 |");
    EXPECT_EQ(lines[3], "| write + fdatasync, 256 KiB each | fdatasync: Input/output error | – |");
    EXPECT_EQ(lines[4], "| loopback TCP, one connection, 1 MiB writes | 16.0 Gbit/s | 2,000 |");
}

TEST(MarkdownTest, SectionNamesDateCommandMachineDurabilityAndNotes) {
    // Rule: the generated section carries what makes it reproducible and every row's caveats.
    ReportInput input;
    input.date = "2026-12-01 10:00 UTC";
    input.command = "make bench";
    input.invocation = "build/bench/narad-compare --workloads bench/workloads";
    input.machine = "2 × Test CPU, 8.0 GiB RAM";
    Workload w;
    w.name = "w";
    w.count = 100;
    input.workloads = {w};
    RunRow row = make_row("w", "nats", 100, 1);
    row.notes = {"consumer still had 3 unacked"};
    row.produce_failed = 2;
    input.rows = {row};
    const std::string text = render_markdown(input);
    EXPECT_NE(text.find("2026-12-01 10:00 UTC"), std::string::npos);
    EXPECT_NE(text.find("`make bench`, which runs `build/bench/narad-compare --workloads "
                        "bench/workloads`"),
              std::string::npos);
    EXPECT_NE(text.find("2 × Test CPU"), std::string::npos);
    EXPECT_NE(text.find("- **nats**: nats durability"), std::string::npos);
    EXPECT_NE(text.find("- w / nats: 2 produce errors; consumer still had 3 unacked"),
              std::string::npos);
    EXPECT_NE(text.find("| w | 1 KiB | 1 | 1 | 1 | 1 | max | count 100 | 5,000 |"),
              std::string::npos);
}

}  // namespace
}  // namespace narad::compare
