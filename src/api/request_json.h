// Strict decoding of JSON request bodies into domain requests, with Narad's error texts
// ("invalid json: json: unknown field \"x\"", "invalid json: EOF", ...): unknown fields, wrong
// types and trailing values are refused. Pure functions.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "meta/topic_frontend.h"
#include "wal/produce_service.h"

namespace narad::api {

Result<meta::CreateTopicRequest> decode_create_topic(std::string_view body);
Result<meta::UpdateTopicRequest> decode_update_topic(std::string_view body);

inline constexpr size_t kMaxBatchMessages = 10'000;
// {"messages":[{"key"?,"partition"?,"payload" | "payload_base64"}]}
Result<std::vector<wal::ProduceMessage>> decode_produce_batch(std::string_view body);

struct AckBatchRequest {
    std::vector<std::string> receipt_handles;
    std::string extend;  // as the `extend` query parameter of a single ack
};
Result<AckBatchRequest> decode_ack_batch(std::string_view body);

}  // namespace narad::api
