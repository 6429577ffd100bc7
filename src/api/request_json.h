// Strict decoding of JSON request bodies into domain requests, with Narad's error texts
// ("invalid json: json: unknown field \"x\"", "invalid json: EOF", ...): unknown fields, wrong
// types and trailing values are refused. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "meta/topic_frontend.h"
#include "meta/user.h"
#include "wal/produce_service.h"

namespace narad::api {

Result<meta::CreateTopicRequest> decode_create_topic(std::string_view body);
Result<meta::UpdateTopicRequest> decode_update_topic(std::string_view body);

// The attach body {"child","delay_ms"?}, with Narad's checks of its shape ("child is required",
// "delay_ms must be >= 0").
struct AttachChildRequest {
    std::string child;
    int64_t delay_ms = 0;
};
Result<AttachChildRequest> decode_attach_child(std::string_view body);

// The user routes' bodies: {"username","password","grants"?}, {"grants"} (required; [] clears)
// and {"new_password","current_password"?}. A grant is {"action","patterns"?}; its checks beyond
// the shape are auth::validate_grants'.
struct CreateUserRequest {
    std::string username;
    std::string password;
    std::vector<meta::Grant> grants;
};
Result<CreateUserRequest> decode_create_user(std::string_view body);
Result<std::vector<meta::Grant>> decode_grants_update(std::string_view body);
struct PasswordChangeRequest {
    std::string new_password;
    std::optional<std::string> current_password;
};
Result<PasswordChangeRequest> decode_password_change(std::string_view body);

// Narad 3.2's batch produce bounds: messages per batch, bytes per message (a single produce's
// body cap) and bytes per (decoded) body.
inline constexpr size_t kMaxProduceBatch = 1000;
inline constexpr size_t kMaxMessageBytes = 1 << 20;
inline constexpr uint64_t kMaxBatchBodyBytes = 16ull << 20;
// The most receipt handles one batch ack settles, and its body cap.
inline constexpr size_t kMaxAckBatch = 100;
inline constexpr uint64_t kMaxAckBodyBytes = 64 * 1024;

// {"messages":[{"key"?,"key_encoding"?,"payload","payload_encoding"?,"partition"?}]}, checked as
// Narad does: the body's shape, then every message's format (encodings, empty payload, negative
// partition, size) with "message <i>: " before its error; the schema and partition range are the
// produce service's, after. A payload is kept byte for byte as written (a JSON string with its
// quotes), or decoded from base64 with "payload_encoding":"base64"; likewise a key.
Result<std::vector<wal::ProduceMessage>> decode_produce_batch(std::string_view body);

struct AckBatchRequest {
    std::vector<std::string> receipt_handles;
    std::string extend;  // as the `extend` query parameter of a single ack
};
// {"receipt_handles":[...], "extend"?}: 1 to kMaxAckBatch handles. Narad's batch ack takes
// `extend` as a query parameter; the body's `extend` serves the node-to-node route.
Result<AckBatchRequest> decode_ack_batch(std::string_view body);

}  // namespace narad::api
