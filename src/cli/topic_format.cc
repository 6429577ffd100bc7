#include "cli/topic_format.h"

#include <nlohmann/json.hpp>
#include <set>

#include "base/duration.h"
#include "base/json_text.h"
#include "cli/text.h"

namespace narad::cli {
namespace {

int64_t int_field(const nlohmann::json& object, const char* name) {
    auto it = object.find(name);
    if (it == object.end() || it->is_null()) return 0;
    return it->get<int64_t>();
}

std::string string_field(const nlohmann::json& object, const char* name) {
    auto it = object.find(name);
    if (it == object.end() || it->is_null()) return "";
    return it->get<std::string>();
}

std::string ls_role(const TopicItem& topic) {
    if (!topic.parent.empty() && topic.fanout_delay_ms > 0) {
        return "child of " + topic.parent + " (delay " +
               format_duration(topic.fanout_delay_ms * kNanosPerMilli) + ")";
    }
    if (!topic.parent.empty()) return "child of " + topic.parent;
    if (topic.role == "parent") return "parent";
    return "-";
}

std::string report_role(const TopicItem& topic) {
    if (!topic.parent.empty()) return "child of " + topic.parent;
    if (topic.role == "parent") return "parent";
    return "-";
}

}  // namespace

Result<TopicPage> parse_topic_page(std::string_view body) {
    TopicPage page;
    try {
        const nlohmann::json doc = nlohmann::json::parse(body);
        if (!doc.is_object()) return Status(Errc::invalid_argument, "json: not an object");
        page.next_page_token = string_field(doc, "next_page_token");
        if (auto it = doc.find("topics"); it != doc.end() && !it->is_null()) {
            for (const nlohmann::json& entry : *it) {
                TopicItem item;
                item.name = string_field(entry, "name");
                item.partitions = int_field(entry, "partitions");
                item.retention_ms = int_field(entry, "retention_ms");
                item.role = string_field(entry, "role");
                item.parent = string_field(entry, "parent");
                item.fanout_delay_ms = int_field(entry, "fanout_delay_ms");
                page.topics.push_back(std::move(item));
            }
        }
    } catch (const nlohmann::json::exception& e) {
        return Status(Errc::invalid_argument, e.what());
    }
    return page;
}

std::string format_topics_json(const std::vector<TopicItem>& topics) {
    if (topics.empty()) return "null\n";
    std::string out = "[";
    for (size_t i = 0; i < topics.size(); ++i) {
        const TopicItem& t = topics[i];
        if (i > 0) out += ',';
        out += "{\"name\":" + json_string(t.name) +
               ",\"partitions\":" + std::to_string(t.partitions) +
               ",\"retention_ms\":" + std::to_string(t.retention_ms) +
               ",\"role\":" + json_string(t.role) + ",\"parent\":" + json_string(t.parent) +
               ",\"fanout_delay_ms\":" + std::to_string(t.fanout_delay_ms) + "}";
    }
    out += "]\n";
    return out;
}

std::string format_topic_table(const std::vector<TopicItem>& topics, const Style& style) {
    if (topics.empty()) return "no topics\n";
    std::string out = pad_right(style.bold("NAME"), 32) + " " + pad_left("PARTITIONS", 10) + " " +
                      pad_left("RETENTION", 12) + "  ROLE\n";
    for (const TopicItem& t : topics) {
        const std::string retention =
            t.retention_ms > 0 ? format_duration(t.retention_ms * kNanosPerMilli) : "forever";
        out += pad_right(t.name, 32) + " " + pad_left(std::to_string(t.partitions), 10) + " " +
               pad_left(retention, 12) + "  " + ls_role(t) + "\n";
    }
    return out;
}

Result<std::vector<PartitionStats>> parse_partition_stats(std::string_view body) {
    std::vector<PartitionStats> stats;
    try {
        const nlohmann::json doc = nlohmann::json::parse(body);
        if (!doc.is_object()) return Status(Errc::invalid_argument, "json: not an object");
        auto it = doc.find("partition_stats");
        if (it == doc.end() || it->is_null()) return stats;
        for (const nlohmann::json& entry : *it) {
            PartitionStats s;
            s.index = int_field(entry, "index");
            s.oldest_offset = int_field(entry, "oldest_offset");
            s.next_offset = int_field(entry, "next_offset");
            s.high_watermark = int_field(entry, "high_watermark");
            s.size_bytes = int_field(entry, "size_bytes");
            s.owner_node = string_field(entry, "owner_node");
            s.status = string_field(entry, "status");
            s.owner_liveness = string_field(entry, "owner_liveness");
            stats.push_back(std::move(s));
        }
    } catch (const nlohmann::json::exception& e) {
        return Status(Errc::invalid_argument, e.what());
    }
    return stats;
}

Status unavailable_partition(const std::string& topic, const PartitionStats& stats) {
    std::string why;
    if (stats.owner_node.empty() || stats.owner_liveness == "unassigned") {
        why = "it has no owner";
    } else if (stats.owner_liveness == "unknown") {
        why = "its owner " + stats.owner_node + " is not a known member";
    } else {
        why = "its owner " + stats.owner_node + " is " +
              (stats.owner_liveness.empty() ? "unavailable" : stats.owner_liveness);
    }
    return Status(Errc::unavailable, "partition " + std::to_string(stats.index) + " of " +
                                         go_quote(topic) + " is unavailable: " + why);
}

ReportRow make_report_row(const TopicItem& topic, const std::vector<PartitionStats>& stats) {
    ReportRow row;
    row.topic = topic;
    std::set<std::string> owners;
    for (const PartitionStats& s : stats) {
        if (s.unavailable()) {
            ++row.unavailable;
            continue;
        }
        row.messages += s.high_watermark;
        row.size_bytes += s.size_bytes;
        if (!s.owner_node.empty()) owners.insert(s.owner_node);
    }
    row.owners = int64_t(owners.size());
    return row;
}

std::string format_server_report(const std::vector<ReportRow>& rows, const Style& style) {
    std::string out = pad_right(style.bold("TOPIC"), 28) + " " + pad_left("PARTS", 6) + " " +
                      pad_left("MESSAGES", 12) + " " + pad_left("SIZE", 10) + " " +
                      pad_left("OWNERS", 7) + "  ROLE\n";
    int64_t total_messages = 0;
    int64_t total_bytes = 0;
    int64_t partial_topics = 0;
    for (const ReportRow& row : rows) {
        if (row.error) {
            out += pad_right(row.topic.name, 28) + "  (stats unavailable: " + *row.error + ")\n";
            continue;
        }
        total_messages += row.messages;
        total_bytes += row.size_bytes;
        out += pad_right(row.topic.name, 28) + " " +
               pad_left(std::to_string(row.topic.partitions), 6) + " " +
               pad_left(std::to_string(row.messages), 12) + " " +
               pad_left(human_bytes(row.size_bytes), 10) + " " +
               pad_left(std::to_string(row.owners), 7) + "  " + report_role(row.topic);
        if (row.unavailable > 0) {
            ++partial_topics;
            out += "  [" + std::to_string(row.unavailable) + " of " +
                   std::to_string(row.topic.partitions) + " partitions unavailable]";
        }
        out += "\n";
    }
    out += pad_right(style.dim("total"), 28) + " " + pad_left("", 6) + " " +
           pad_left(std::to_string(total_messages), 12) + " " +
           pad_left(human_bytes(total_bytes), 10) + "\n";
    if (partial_topics > 0) {
        out += std::to_string(partial_topics) +
               " topic(s) partial: partitions whose owner is down are left out of the totals\n";
    }
    return out;
}

}  // namespace narad::cli
