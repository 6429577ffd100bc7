#include "api/request_json.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"

namespace narad::api {
namespace {

using nlohmann::json;

Status bad(std::string message) {
    return Status(Errc::invalid_argument, "invalid json: " + message);
}

// Parses one JSON value, refusing an empty body and trailing values as Go's decoder does.
Result<json> parse(std::string_view body) {
    size_t first = body.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return bad("EOF");
    json value = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (!value.is_discarded()) return value;
    // Tell a truncated document and trailing data apart, for a useful message.
    std::string message;
    size_t byte = 0;
    try {
        json ignored = json::parse(body);
        (void)ignored;
    } catch (const json::parse_error& e) {
        message = e.what();
        byte = e.byte;
    }
    if (message.find("; expected end of input") != std::string::npos) {
        char next = byte >= 1 && byte <= body.size() ? body[byte - 1] : ' ';
        if (std::string_view("{[\"-0123456789tfn").find(next) != std::string_view::npos) {
            return bad("multiple JSON values");
        }
        return bad(std::string("invalid character '") + next + "' after top-level value");
    }
    if (message.find("unexpected end of input") != std::string::npos) return bad("unexpected EOF");
    auto detail = message.find("syntax error");
    return bad(detail == std::string::npos ? message : message.substr(detail));
}

std::string type_name(const json& v) {
    if (v.is_string()) return "string";
    if (v.is_boolean()) return "bool";
    if (v.is_number()) return "number";
    if (v.is_array()) return "array";
    if (v.is_object()) return "object";
    return "null";
}

Status type_error(const json& v, const std::string& go_struct, const std::string& field,
                  const char* go_type) {
    std::string what = type_name(v);
    if (v.is_number()) what = "number " + v.dump();
    return bad("json: cannot unmarshal " + what + " into Go struct field " + go_struct + "." +
               field + " of type " + go_type);
}

Status unknown_field(const std::string& key) { return bad("json: unknown field \"" + key + "\""); }

// Reads an integer field; null leaves it unset.
Status read_int(const json& v, const std::string& go_struct, const std::string& field,
                int64_t& out) {
    if (v.is_null()) return Status::ok();
    if (!v.is_number_integer()) return type_error(v, go_struct, field, "int64");
    out = v.get<int64_t>();
    return Status::ok();
}

Status read_optional_int(const json& v, const std::string& go_struct, const std::string& field,
                         std::optional<int64_t>& out) {
    if (v.is_null()) return Status::ok();
    int64_t value = 0;
    NARAD_RETURN_IF_ERROR(read_int(v, go_struct, field, value));
    out = value;
    return Status::ok();
}

Status read_string(const json& v, const std::string& go_struct, const std::string& field,
                   std::string& out) {
    if (v.is_null()) return Status::ok();
    if (!v.is_string()) return type_error(v, go_struct, field, "string");
    out = v.get<std::string>();
    return Status::ok();
}

Status require_object(const json& v, const char* go_type) {
    if (v.is_object()) return Status::ok();
    return bad("json: cannot unmarshal " + type_name(v) + " into Go value of type " + go_type);
}

}  // namespace

Result<meta::CreateTopicRequest> decode_create_topic(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(json document, parse(body));
    NARAD_RETURN_IF_ERROR(require_object(document, "handlers.createRequest"));
    meta::CreateTopicRequest request;
    const std::string go = "createRequest";
    for (const auto& [key, value] : document.items()) {
        if (key == "name") {
            NARAD_RETURN_IF_ERROR(read_string(value, go, key, request.name));
        } else if (key == "partitions") {
            NARAD_RETURN_IF_ERROR(read_int(value, go, key, request.partitions));
        } else if (key == "retention_ms") {
            NARAD_RETURN_IF_ERROR(read_int(value, go, key, request.retention_ms));
        } else if (key == "visibility_timeout_ms") {
            NARAD_RETURN_IF_ERROR(read_int(value, go, key, request.visibility_timeout_ms));
        } else if (key == "max_in_flight_per_partition") {
            NARAD_RETURN_IF_ERROR(read_int(value, go, key, request.max_in_flight_per_partition));
        } else if (key == "max_acked_ahead_per_partition") {
            NARAD_RETURN_IF_ERROR(read_int(value, go, key, request.max_acked_ahead_per_partition));
        } else if (key == "schema") {
            if (!value.is_null()) request.schema = value.dump();
        } else if (key == "parent") {
            NARAD_RETURN_IF_ERROR(read_string(value, go, key, request.parent));
        } else if (key == "fanout_delay_ms") {
            NARAD_RETURN_IF_ERROR(read_int(value, go, key, request.fanout_delay_ms));
        } else if (key == "owner") {
            // Accepted and discarded: the owner is always the authenticated caller.
        } else {
            return unknown_field(key);
        }
    }
    return request;
}

Result<meta::UpdateTopicRequest> decode_update_topic(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(json document, parse(body));
    NARAD_RETURN_IF_ERROR(require_object(document, "handlers.alterRequest"));
    meta::UpdateTopicRequest request;
    const std::string go = "alterRequest";
    for (const auto& [key, value] : document.items()) {
        if (key == "partitions") {
            NARAD_RETURN_IF_ERROR(read_int(value, go, key, request.partitions));
        } else if (key == "retention_ms") {
            NARAD_RETURN_IF_ERROR(read_optional_int(value, go, key, request.retention_ms));
        } else if (key == "max_in_flight_per_partition") {
            NARAD_RETURN_IF_ERROR(
                read_optional_int(value, go, key, request.max_in_flight_per_partition));
        } else if (key == "max_acked_ahead_per_partition") {
            NARAD_RETURN_IF_ERROR(
                read_optional_int(value, go, key, request.max_acked_ahead_per_partition));
        } else if (key == "schema") {
            request.schema = value.dump();
        } else {
            return unknown_field(key);
        }
    }
    return request;
}

Result<std::vector<wal::ProduceMessage>> decode_produce_batch(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(json document, parse(body));
    NARAD_RETURN_IF_ERROR(require_object(document, "handlers.produceBatchRequest"));
    std::vector<wal::ProduceMessage> messages;
    for (const auto& [key, value] : document.items()) {
        if (key != "messages") return unknown_field(key);
        if (!value.is_array()) return type_error(value, "produceBatchRequest", key, "[]message");
        if (value.size() > kMaxBatchMessages) {
            return Status(
                Errc::invalid_argument,
                "a batch holds at most " + std::to_string(kMaxBatchMessages) + " messages");
        }
        for (size_t i = 0; i < value.size(); ++i) {
            const json& item = value[i];
            std::string where = "message " + std::to_string(i) + ": ";
            if (!item.is_object()) return Status(Errc::invalid_argument, where + "not an object");
            wal::ProduceMessage message;
            bool has_payload = false;
            for (const auto& [field, v] : item.items()) {
                if (field == "key") {
                    if (!v.is_string())
                        return Status(Errc::invalid_argument, where + "key must be a string");
                    message.key = v.get<std::string>();
                } else if (field == "partition") {
                    if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
                        v.get<int64_t>() > UINT32_MAX) {
                        return Status(Errc::invalid_argument,
                                      where + "invalid partition: must be an integer >= 0");
                    }
                    message.partition = static_cast<uint32_t>(v.get<int64_t>());
                } else if (field == "payload") {
                    if (has_payload) {
                        return Status(Errc::invalid_argument,
                                      where + "give either payload or payload_base64, not both");
                    }
                    has_payload = true;
                    // A JSON string carries text; any other value is stored as its JSON text.
                    message.value = v.is_string() ? v.get<std::string>() : v.dump();
                } else if (field == "payload_base64") {
                    if (has_payload) {
                        return Status(Errc::invalid_argument,
                                      where + "give either payload or payload_base64, not both");
                    }
                    has_payload = true;
                    std::optional<std::string> decoded;
                    if (v.is_string()) decoded = base64_decode(v.get<std::string>());
                    if (!decoded) {
                        return Status(Errc::invalid_argument,
                                      where + "payload_base64 is not valid base64");
                    }
                    message.value = std::move(*decoded);
                } else {
                    return unknown_field(field);
                }
            }
            if (!has_payload || message.value.empty()) {
                return Status(Errc::invalid_argument, where + "message required");
            }
            messages.push_back(std::move(message));
        }
    }
    if (messages.empty()) return Status(Errc::invalid_argument, "messages required");
    return messages;
}

Result<AckBatchRequest> decode_ack_batch(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(json document, parse(body));
    NARAD_RETURN_IF_ERROR(require_object(document, "handlers.ackBatchRequest"));
    AckBatchRequest request;
    for (const auto& [key, value] : document.items()) {
        if (key == "receipt_handles") {
            if (!value.is_array()) return type_error(value, "ackBatchRequest", key, "[]string");
            if (value.size() > kMaxBatchMessages) {
                return Status(Errc::invalid_argument, "a batch holds at most " +
                                                          std::to_string(kMaxBatchMessages) +
                                                          " receipt handles");
            }
            for (const auto& handle : value) {
                if (!handle.is_string()) {
                    return Status(Errc::invalid_argument, "receipt handles must be strings");
                }
                request.receipt_handles.push_back(handle.get<std::string>());
            }
        } else if (key == "extend") {
            if (value.is_boolean()) {
                request.extend = value.get<bool>() ? "true" : "false";
            } else if (value.is_string()) {
                request.extend = value.get<std::string>();
            } else if (value.is_number_integer()) {
                request.extend = std::to_string(value.get<int64_t>());
            } else if (!value.is_null()) {
                return type_error(value, "ackBatchRequest", key, "string");
            }
        } else {
            return unknown_field(key);
        }
    }
    if (request.receipt_handles.empty()) {
        return Status(Errc::invalid_argument, "receipt_handles required");
    }
    return request;
}

}  // namespace narad::api
