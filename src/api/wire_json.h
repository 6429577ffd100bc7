// The JSON bodies of the API's answers, built by hand in Narad's field order: topics, partition
// stats and consumed messages. Pure functions.
#pragma once

#include <string>
#include <vector>

#include "meta/topic.h"
#include "queue/consume_service.h"
#include "storage/partition_log.h"

namespace narad::api {

enum class RoleField { omit_standalone, always };
// Whether a topic answer carries `schema_version` and the current `schema` (a GET and a PATCH
// do; a create and the list, as Narad's, do not).
enum class SchemaFields { omit, include };

// Appends the topic's fields (without the closing brace) so callers can add more.
void append_topic_fields(std::string& out, const meta::Topic& topic, RoleField role,
                         SchemaFields schema = SchemaFields::omit);
std::string topic_json(const meta::Topic& topic, RoleField role,
                       SchemaFields schema = SchemaFields::omit);
// GET /v1/topics/{t}/schema: {"topic", "version", "versions": [{"version", "schema"}]}, oldest
// first; version 0 and no versions without a schema.
std::string schema_history_json(const meta::Topic& topic);

struct PartitionStatsView {
    uint32_t index = 0;
    storage::LogStats stats;
    std::string owner_node;
    // Empty when the stats were read; else why the entry is a zero placeholder (Narad's
    // `owner_liveness`: dead, unreachable, unknown, unassigned). Any placeholder makes the answer
    // `partial`.
    std::string owner_liveness;
};
std::string topic_details_json(const meta::Topic& topic,
                               const std::vector<PartitionStatsView>& partitions);

// One consumed message; `receipt_handle` empty for a replay.
void append_message_json(std::string& out, std::string_view topic, const queue::Delivery& message,
                         const std::string& receipt_handle);

}  // namespace narad::api
