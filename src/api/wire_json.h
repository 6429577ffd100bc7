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

// Appends the topic's fields (without the closing brace) so callers can add more.
void append_topic_fields(std::string& out, const meta::Topic& topic, RoleField role);
std::string topic_json(const meta::Topic& topic, RoleField role);

struct PartitionStatsView {
    uint32_t index = 0;
    storage::LogStats stats;
    std::string owner_node;
};
std::string topic_details_json(const meta::Topic& topic,
                               const std::vector<PartitionStatsView>& partitions);

// One consumed message; `receipt_handle` empty for a replay.
void append_message_json(std::string& out, std::string_view topic, const queue::Delivery& message,
                         const std::string& receipt_handle);

}  // namespace narad::api
