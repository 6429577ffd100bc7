// The tables and listings of `narad topic ls` and `narad server report`, as pure functions of
// already-fetched data so their exact layout (Go's "%-32s %10d %12s  %s" and friends, bold and
// dim headers on a terminal) is tested without a server. Also the parsers of the list and stats
// responses those commands read. Pure; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cli/output.h"

namespace narad::cli {

// One entry of GET /v1/topics as the CLI reads it (missing fields are zero).
struct TopicItem {
    std::string name;
    int64_t partitions = 0;
    int64_t retention_ms = 0;
    std::string role;
    std::string parent;
    int64_t fanout_delay_ms = 0;
};

struct TopicPage {
    std::string next_page_token;
    std::vector<TopicItem> topics;
};

// Parses a list response; errors read like Go's json.Unmarshal failures.
Result<TopicPage> parse_topic_page(std::string_view body);

// `topic ls --json`: one compact line, `null` when there are none.
std::string format_topics_json(const std::vector<TopicItem>& topics);
// `topic ls`: "no topics\n" or the NAME/PARTITIONS/RETENTION/ROLE table.
std::string format_topic_table(const std::vector<TopicItem>& topics, const Style& style);

// One partition_stats entry of GET /v1/topics/{t}.
struct PartitionStats {
    int64_t index = 0;
    int64_t oldest_offset = 0;
    int64_t next_offset = 0;
    int64_t high_watermark = 0;
    int64_t size_bytes = 0;
    std::string owner_node;
    // `owner_unavailable` when the owner could not report (a zero placeholder; the answer is then
    // `partial`), with `owner_liveness` saying why (dead, unreachable, unknown, unassigned).
    std::string status;
    std::string owner_liveness;

    bool unavailable() const { return status == "owner_unavailable"; }
};

Result<std::vector<PartitionStats>> parse_partition_stats(std::string_view body);

// Why a placeholder's partition cannot be read: `partition <p> of "<t>" is unavailable: its
// owner <node> is <liveness>` (or "has no owner" when unassigned).
Status unavailable_partition(const std::string& topic, const PartitionStats& stats);

// One row of `server report`: the summed stats, or why they could not be read.
struct ReportRow {
    TopicItem topic;
    std::optional<std::string> error;  // "(stats unavailable: <error>)" instead of numbers
    int64_t messages = 0;
    int64_t size_bytes = 0;
    int64_t owners = 0;
    int64_t unavailable = 0;  // partitions whose owner could not report (left out of the sums)
};

// Sums one topic's stats into a row: messages = Σ high_watermark, size = Σ size_bytes, owners =
// distinct non-empty owner_node values, each over the partitions that reported; the placeholders
// of unavailable partitions are counted apart. A topic with some is marked `[k of n partitions
// unavailable]` and the report ends with a line counting such topics.
ReportRow make_report_row(const TopicItem& topic, const std::vector<PartitionStats>& stats);

// `server report` for a non-empty list (the caller prints "no topics" itself).
std::string format_server_report(const std::vector<ReportRow>& rows, const Style& style);

}  // namespace narad::cli
