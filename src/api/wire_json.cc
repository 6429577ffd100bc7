#include "api/wire_json.h"

#include <algorithm>

#include "base/base64.h"
#include "base/json_text.h"
#include "base/utf8.h"

namespace narad::api {
namespace {

void field(std::string& out, const char* name) {
    if (out.back() != '{') out += ',';
    out += '"';
    out += name;
    out += "\":";
}

void number_field(std::string& out, const char* name, int64_t value) {
    field(out, name);
    out += std::to_string(value);
}

void string_field(std::string& out, const char* name, std::string_view value) {
    field(out, name);
    append_json_string(out, value);
}

}  // namespace

void append_topic_fields(std::string& out, const meta::Topic& topic, RoleField role,
                         SchemaFields schema) {
    out += '{';
    string_field(out, "name", topic.name);
    // The incarnation: 16 hex digits, new on every create of the name (Narad 3.2's `id`).
    if (!topic.incarnation.value().empty()) string_field(out, "id", topic.incarnation.value());
    number_field(out, "partitions", topic.partitions);
    number_field(out, "retention_ms", topic.retention_ms);
    number_field(out, "visibility_timeout_ms", topic.visibility_timeout_ms);
    number_field(out, "max_in_flight_per_partition", topic.max_in_flight_per_partition);
    number_field(out, "max_acked_ahead_per_partition", topic.max_acked_ahead_per_partition);
    number_field(out, "created_at", topic.created_at);
    if (!topic.owner.empty()) string_field(out, "owner", topic.owner);
    // Narad's create answer for a standalone topic carries no role; every read does.
    if (role == RoleField::always || topic.role != meta::TopicRole::standalone) {
        string_field(out, "role", meta::role_name(topic.role));
    }
    if (!topic.children.empty()) {
        field(out, "children");
        out += '[';
        for (size_t i = 0; i < topic.children.size(); ++i) {
            if (i > 0) out += ',';
            append_json_string(out, topic.children[i]);
        }
        out += ']';
    }
    if (!topic.parent.empty()) string_field(out, "parent", topic.parent);
    if (!topic.attach_epoch.empty()) string_field(out, "attach_epoch", topic.attach_epoch);
    if (topic.fanout_delay_ms != 0) number_field(out, "fanout_delay_ms", topic.fanout_delay_ms);
    if (topic.max_deliveries != 0) {
        number_field(out, "max_deliveries", topic.max_deliveries);
        string_field(out, "dead_letter_topic", topic.dead_letter_topic);
    }
    if (schema == SchemaFields::include) {
        number_field(out, "schema_version", topic.schema_version());
        if (!topic.schema().empty()) {
            field(out, "schema");
            out += topic.schema();  // stored as compact JSON text
        }
    }
}

std::string topic_json(const meta::Topic& topic, RoleField role, SchemaFields schema) {
    std::string out;
    append_topic_fields(out, topic, role, schema);
    out += "}\n";
    return out;
}

std::string schema_history_json(const meta::Topic& topic) {
    std::string out = "{";
    string_field(out, "topic", topic.name);
    number_field(out, "version", topic.schema_version());
    field(out, "versions");
    out += '[';
    for (size_t i = 0; i < topic.schema_versions.size(); ++i) {
        if (i > 0) out += ',';
        out += "{\"version\":" + std::to_string(i + 1) + ",\"schema\":";
        out += topic.schema_versions[i];
        out += '}';
    }
    out += "]}\n";
    return out;
}

std::string topic_details_json(const meta::Topic& topic,
                               const std::vector<PartitionStatsView>& partitions) {
    std::string out;
    append_topic_fields(out, topic, RoleField::always, SchemaFields::include);
    field(out, "partition_stats");
    out += '[';
    bool partial = false;
    for (size_t i = 0; i < partitions.size(); ++i) {
        const PartitionStatsView& p = partitions[i];
        if (i > 0) out += ',';
        out += '{';
        number_field(out, "index", p.index);
        bool read = p.owner_liveness.empty();
        partial = partial || !read;
        // A partition always has its active segment, even before anything was written to it.
        number_field(out, "segments", read ? std::max<int64_t>(1, p.stats.segments) : 0);
        number_field(out, "oldest_offset", static_cast<int64_t>(p.stats.oldest_offset.value()));
        number_field(out, "next_offset", static_cast<int64_t>(p.stats.high_watermark.value()));
        number_field(out, "high_watermark", static_cast<int64_t>(p.stats.high_watermark.value()));
        number_field(out, "size_bytes", static_cast<int64_t>(p.stats.size_bytes));
        int64_t oldest_at = std::chrono::duration_cast<std::chrono::seconds>(
                                p.stats.oldest_segment_at.time_since_epoch())
                                .count();
        if (p.stats.segments > 0 && oldest_at > 0)
            number_field(out, "oldest_segment_at", oldest_at);
        if (!p.owner_node.empty()) string_field(out, "owner_node", p.owner_node);
        string_field(out, "status", read ? "ok" : "owner_unavailable");
        if (!read) string_field(out, "owner_liveness", p.owner_liveness);
        out += '}';
    }
    out += ']';
    if (partial) out += ",\"partial\":true";
    out += "}\n";
    return out;
}

void append_message_json(std::string& out, std::string_view topic, const queue::Delivery& message,
                         const std::string& receipt_handle) {
    out += "{\"topic\":";
    append_json_string(out, topic, HtmlEscape::no);
    out += ",\"partition\":";
    out += std::to_string(message.partition.value());
    out += ",\"offset\":";
    out += std::to_string(message.offset.value());
    if (!message.key.empty()) {
        // A key that is not UTF-8 goes as base64, marked as a payload is.
        out += ",\"key\":";
        if (is_valid_utf8(message.key)) {
            append_json_string(out, message.key, HtmlEscape::no);
        } else {
            out += '"';
            out += base64_encode(message.key);
            out += "\",\"key_encoding\":\"base64\"";
        }
    }
    out += ",\"payload\":";
    // Payloads come back as produced: JSON verbatim, other UTF-8 text as a string, and anything
    // else as base64.
    if (message.value.empty()) {
        out += "null";
    } else if (is_valid_json(message.value)) {
        out += message.value;
    } else if (is_valid_utf8(message.value)) {
        append_json_string(out, message.value, HtmlEscape::yes);
    } else {
        out += '"';
        out += base64_encode(message.value);
        out += "\",\"payload_encoding\":\"base64\"";
    }
    out += ",\"timestamp\":";
    out += std::to_string(message.timestamp_ms / 1000);
    if (!receipt_handle.empty()) {
        out += ",\"receipt_handle\":";
        append_json_string(out, receipt_handle, HtmlEscape::no);
    }
    out += '}';
}

}  // namespace narad::api
