#include "cli/topic_format.h"

#include <gtest/gtest.h>

namespace narad::cli {
namespace {

std::vector<TopicItem> sample_topics() {
    return {
        {"orders", 3, 604'800'000, "parent", "", 0},
        {"orders-audit", 3, 0, "child", "orders", 30'000},
        {"orders-copy", 6, 3'600'000, "child", "orders", 0},
        {"plain", 12, 86'400'000, "standalone", "", 0},
    };
}

// Rule: `topic ls` prints Go's "%-32s %10d %12s  %s" rows with retention as a Go duration
// ("forever" for 0) and the role spelled out.
TEST(TopicTable, MatchesGoLayout) {
    EXPECT_EQ(format_topic_table({}, Style(Color::off)), "no topics\n");
    EXPECT_EQ(
        format_topic_table(sample_topics(), Style(Color::off)),
        "NAME                             PARTITIONS    RETENTION  ROLE\n"
        "orders                                    3     168h0m0s  parent\n"
        "orders-audit                              3      forever  child of orders (delay 30s)\n"
        "orders-copy                               6       1h0m0s  child of orders\n"
        "plain                                    12      24h0m0s  -\n");
}

// Rule: on a terminal the NAME header is bold and, as in Go, the padding counts the ANSI codes.
TEST(TopicTable, BoldHeaderPadsIncludingEscapes) {
    const std::string table = format_topic_table(sample_topics(), Style(Color::on));
    EXPECT_TRUE(table.starts_with("\x1b[1mNAME\x1b[0m" + std::string(20, ' ') +
                                  " PARTITIONS    RETENTION  ROLE\n"))
        << table;
}

// Rule: `topic ls --json` is one compact line of fixed keys, `null` when empty.
TEST(TopicJson, MatchesGoEncoder) {
    EXPECT_EQ(format_topics_json({}), "null\n");
    EXPECT_EQ(format_topics_json({sample_topics()[1]}),
              "[{\"name\":\"orders-audit\",\"partitions\":3,\"retention_ms\":0,\"role\":\"child\","
              "\"parent\":\"orders\",\"fanout_delay_ms\":30000}]\n");
    EXPECT_EQ(format_topics_json({{"a", 3, 1, "", "", 0}}),
              "[{\"name\":\"a\",\"partitions\":3,\"retention_ms\":1,\"role\":\"\",\"parent\":\"\","
              "\"fanout_delay_ms\":0}]\n");
}

// Rule: list pages parse; missing fields are zero.
TEST(TopicPage, ParsesListResponse) {
    auto page = parse_topic_page(
        R"({"next_page_token":"b","topics":[{"name":"a","partitions":3,"retention_ms":5,"created_at":1},{"name":"b"}]})");
    ASSERT_TRUE(page.is_ok());
    EXPECT_EQ(page->next_page_token, "b");
    ASSERT_EQ(page->topics.size(), 2u);
    EXPECT_EQ(page->topics[0].retention_ms, 5);
    EXPECT_EQ(page->topics[1].partitions, 0);
    EXPECT_FALSE(parse_topic_page("nope").is_ok());
}

// Rule: a report row sums high watermarks and sizes and counts distinct non-empty owners.
TEST(ServerReport, SumsStatsPerTopic) {
    auto stats = parse_partition_stats(
        R"({"name":"t","partition_stats":[)"
        R"({"index":0,"high_watermark":10,"size_bytes":1000,"owner_node":"n1"},)"
        R"({"index":1,"high_watermark":5,"size_bytes":24,"owner_node":"n2"},)"
        R"({"index":2,"high_watermark":0,"size_bytes":0,"owner_node":"n1"},)"
        R"({"index":3,"high_watermark":1,"size_bytes":0}]})");
    ASSERT_TRUE(stats.is_ok());
    const ReportRow row = make_report_row({"t", 4, 0, "", "", 0}, *stats);
    EXPECT_EQ(row.messages, 16);
    EXPECT_EQ(row.size_bytes, 1024);
    EXPECT_EQ(row.owners, 2);
}

// Rule: an unavailable partition's placeholder (status owner_unavailable) is left out of the
// messages, size and owners; the row is marked `[k of n partitions unavailable]` after its role,
// and the report ends with a line counting the partial topics. A whole topic has no marker.
TEST(ServerReport, MarksPartialTopicsAndLeavesPlaceholdersOut) {
    auto stats = parse_partition_stats(
        R"({"name":"orders","partitions":3,"partial":true,"partition_stats":[)"
        R"({"index":0,"high_watermark":10,"size_bytes":1000,"owner_node":"a","status":"ok"},)"
        R"({"index":1,"high_watermark":0,"size_bytes":0,"owner_node":"b",)"
        R"("status":"owner_unavailable","owner_liveness":"dead"},)"
        R"({"index":2,"high_watermark":5,"size_bytes":536,"owner_node":"c","status":"ok"}]})");
    ASSERT_TRUE(stats.is_ok());
    ASSERT_TRUE((*stats)[1].unavailable());
    EXPECT_EQ((*stats)[1].owner_liveness, "dead");
    const ReportRow orders = make_report_row({"orders", 3, 0, "", "", 0}, *stats);
    EXPECT_EQ(orders.messages, 15);
    EXPECT_EQ(orders.size_bytes, 1536);
    EXPECT_EQ(orders.owners, 2);
    EXPECT_EQ(orders.unavailable, 1);
    const ReportRow logs = make_report_row({"logs", 1, 0, "", "", 0}, {PartitionStats{}});
    EXPECT_EQ(format_server_report({orders, logs}, Style(Color::off)),
              "TOPIC                         PARTS     MESSAGES       SIZE  OWNERS  ROLE\n"
              "orders                            3           15     1.5KiB       2  -  [1 of 3 "
              "partitions unavailable]\n"
              "logs                              1            0         0B       0  -\n"
              "total                                         15     1.5KiB\n"
              "1 topic(s) partial: partitions whose owner is down are left out of the totals\n");
}

// Rule: the refusal for a placeholder names the partition, the topic, the owner and why.
TEST(UnavailablePartition, NamesPartitionOwnerAndLiveness) {
    PartitionStats s;
    s.index = 1;
    s.owner_node = "node-b";
    s.status = "owner_unavailable";
    s.owner_liveness = "unreachable";
    EXPECT_EQ(unavailable_partition("orders", s).message(),
              "partition 1 of \"orders\" is unavailable: its owner node-b is unreachable");
    s.owner_liveness = "unknown";
    EXPECT_EQ(unavailable_partition("orders", s).message(),
              "partition 1 of \"orders\" is unavailable: its owner node-b is not a known member");
    s.owner_node = "";
    s.owner_liveness = "unassigned";
    EXPECT_EQ(unavailable_partition("orders", s).message(),
              "partition 1 of \"orders\" is unavailable: it has no owner");
}

// Rule: `server report` prints Go's "%-28s %6d %12d %10s %7d  %s" rows, an error row for a topic
// whose stats failed, and a total row of messages and humanBytes.
TEST(ServerReport, MatchesGoLayout) {
    std::vector<ReportRow> rows;
    ReportRow a;
    a.topic = {"orders", 3, 0, "parent", "", 0};
    a.messages = 1200;
    a.size_bytes = 2048;
    a.owners = 3;
    rows.push_back(a);
    ReportRow b;
    b.topic = {"audit", 3, 0, "child", "orders", 30'000};
    b.messages = 5;
    b.size_bytes = 100;
    b.owners = 1;
    rows.push_back(b);
    ReportRow c;
    c.topic = {"broken", 3, 0, "", "", 0};
    c.error = "http 421: this node does not own the requested partition";
    rows.push_back(c);
    EXPECT_EQ(
        format_server_report(rows, Style(Color::off)),
        "TOPIC                         PARTS     MESSAGES       SIZE  OWNERS  ROLE\n"
        "orders                            3         1200     2.0KiB       3  parent\n"
        "audit                             3            5       100B       1  child of orders\n"
        "broken                        (stats unavailable: http 421: this node does not own "
        "the requested partition)\n"
        "total                                       1205     2.1KiB\n");
}

// Rule: on a terminal TOPIC is bold and "total" dim, padded including their escape codes.
TEST(ServerReport, StylesHeaderAndTotal) {
    ReportRow a;
    a.topic = {"t", 3, 0, "", "", 0};
    const std::string report = format_server_report({a}, Style(Color::on));
    EXPECT_TRUE(report.starts_with("\x1b[1mTOPIC\x1b[0m" + std::string(15, ' ') + " "));
    EXPECT_NE(report.find("\x1b[2mtotal\x1b[0m" + std::string(15, ' ') + " "), std::string::npos);
}

}  // namespace
}  // namespace narad::cli
