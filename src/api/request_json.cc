#include "api/request_json.h"

#include <charconv>
#include <map>
#include <nlohmann/json.hpp>

#include "api/params.h"
#include "base/base64.h"
#include "base/json_scan.h"

namespace narad::api {
namespace {

using nlohmann::json;

Status bad(std::string message) {
    return Status(Errc::invalid_argument, "invalid json: " + message);
}

Status too_deep(std::string_view what) {
    return Status(Errc::invalid_argument, std::string(what) + " nests deeper than " +
                                              std::to_string(json_scan::kPayloadMaxDepth) +
                                              " levels");
}

// Go's decoder's message for a malformed document (the caller knows it does not scan).
Status syntax_error(std::string_view body);

// Parses one JSON value, refusing an empty body and trailing values as Go's decoder does, and a
// document nested deeper than Go's limit before any parser sees it.
Result<json> parse(std::string_view body) {
    size_t first = body.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return bad("EOF");
    json_scan::Scan scan = json_scan::scan_document(body, json_scan::kGoMaxDepth);
    if (scan.outcome == json_scan::Outcome::too_deep) return bad("exceeded max depth");
    if (scan.outcome == json_scan::Outcome::syntax_error) return syntax_error(body);
    // nlohmann's parser and destructor do not recurse; nothing here dumps a client's value.
    json value = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (!value.is_discarded()) return value;
    return syntax_error(body);
}

Status syntax_error(std::string_view body) {
    // Tell a truncated document and trailing data apart, for a useful message.
    std::string message;
    size_t byte = 0;
    try {
        json ignored = json::parse(body);
        (void)ignored;
    } catch (const json::parse_error& e) {
        message = e.what();
        byte = e.byte;
    } catch (const json::exception& e) {
        // Not a parse_error: a number past a double ("1e400") is nlohmann's out_of_range, which
        // the scanner (Go's grammar) accepts; refused with nlohmann's words, never thrown on.
        message = e.what();
        auto detail = message.find("] ");
        return bad(detail == std::string::npos ? message : message.substr(detail + 2));
    }
    if (message.find("; expected end of input") != std::string::npos) {
        char next = byte >= 1 && byte <= body.size() ? body[byte - 1] : ' ';
        if (std::string_view("{[\"-0123456789tfn").find(next) != std::string_view::npos) {
            return bad("multiple JSON values");
        }
        return bad(std::string("invalid character '") + next + "' after top-level value");
    }
    if (message.find("unexpected end of input") != std::string::npos) return bad("unexpected EOF");
    if (message.empty()) return bad("syntax error");
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

// The raw text of the body's `schema` member, as the client wrote it: never re-serialised from a
// parsed value, and refused when it nests too deeply for the schema compiler to walk.
Result<std::string> raw_schema(std::string_view body) {
    auto members = json_scan::object_members(body);
    auto raw = members ? json_scan::find_member(*members, "schema") : std::nullopt;
    if (!raw) return std::string();
    if (json_scan::nests_deeper_than(*raw, json_scan::kPayloadMaxDepth)) return too_deep("schema");
    return std::string(*raw);
}

// The JSON type of a raw value, in Go's words, and Go's number text for the type error.
std::string raw_type_name(std::string_view raw) {
    switch (raw.empty() ? 'n' : raw.front()) {
        case '"':
            return "string";
        case '{':
            return "object";
        case '[':
            return "array";
        case 't':
        case 'f':
            return "bool";
        case 'n':
            return "null";
        default:
            return "number " + std::string(raw);
    }
}

Status raw_type_error(std::string_view raw, const std::string& go_struct, const std::string& field,
                      const char* go_type) {
    return bad("json: cannot unmarshal " + raw_type_name(raw) + " into Go struct field " +
               go_struct + "." + field + " of type " + go_type);
}

// Go's base64.StdEncoding error for `text`: the offset of the first byte it cannot take.
std::string base64_error(std::string_view text) {
    static constexpr std::string_view kAlphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t pos = 0;
    while (pos < text.size() && kAlphabet.find(text[pos]) != std::string_view::npos) ++pos;
    if (pos == text.size() || text[pos] == '=') {
        // Bad padding or length: Go points at the start of the incomplete quantum.
        pos = pos - pos % 4;
    }
    return "illegal base64 data at input byte " + std::to_string(pos);
}

Result<std::string> base64_field(std::string_view text, const char* what) {
    auto decoded = base64_decode(text);
    if (!decoded) return Status(Errc::invalid_argument, std::string(what) + base64_error(text));
    return std::move(*decoded);
}

// Whether a batch body nests so little that no payload in it can pass kPayloadMaxDepth.
enum class PayloadDepth { to_check, within_limit };

// One message of a batch (an element of a body that scan_document passed): its fields as raw
// text, validated and decoded. Errors carry no index; the caller adds it.
Result<wal::ProduceMessage> decode_batch_message(std::string_view item, PayloadDepth depth) {
    const std::string go = "produceBatchRequest";
    if (item.front() != '{') {
        return raw_type_error(item, go, "messages", "handlers.produceBatchMessage");
    }
    auto members =
        json_scan::object_members(item, json_scan::kGoMaxDepth, json_scan::Validity::scanned);
    if (!members) return raw_type_error(item, go, "messages", "handlers.produceBatchMessage");
    // Go's decoder lets the last of duplicate keys win.
    std::map<std::string, std::string_view> fields;
    for (const auto& [name, raw] : *members) {
        if (name != "key" && name != "key_encoding" && name != "partition" && name != "payload" &&
            name != "payload_encoding") {
            return unknown_field(name);
        }
        fields[name] = raw;
    }
    // A string field; null leaves it empty, as Go does.
    auto text = [&](const char* name) -> Result<std::string> {
        auto it = fields.find(name);
        if (it == fields.end() || it->second == "null") return std::string();
        auto value = json_scan::decode_string(it->second);
        if (!value)
            return raw_type_error(it->second, go, std::string("messages.") + name, "string");
        return std::move(*value);
    };
    NARAD_ASSIGN_OR_RETURN(std::string key, text("key"));
    NARAD_ASSIGN_OR_RETURN(std::string key_encoding, text("key_encoding"));
    NARAD_ASSIGN_OR_RETURN(std::string payload_encoding, text("payload_encoding"));
    std::optional<int64_t> partition;
    if (auto it = fields.find("partition"); it != fields.end() && it->second != "null") {
        std::string_view raw = it->second;
        int64_t value = 0;
        auto [end, error] = std::from_chars(raw.data(), raw.data() + raw.size(), value);
        if (error != std::errc() || end != raw.data() + raw.size()) {
            return raw_type_error(raw, go, "messages.partition", "int");
        }
        partition = value;
    }

    wal::ProduceMessage message;
    if (key_encoding == "base64") {
        NARAD_ASSIGN_OR_RETURN(key, base64_field(key, "invalid key: "));
    } else if (!key_encoding.empty()) {
        return Status(Errc::invalid_argument, R"(invalid key_encoding: want "base64" or none)");
    }
    if (!key.empty()) message.key = std::move(key);  // an empty key is no key

    std::string_view raw_payload;
    if (auto it = fields.find("payload"); it != fields.end()) raw_payload = it->second;
    if (payload_encoding == "base64") {
        auto encoded = json_scan::decode_string(raw_payload);
        if (!encoded) {
            return Status(Errc::invalid_argument,
                          "invalid payload: a base64 payload must be a JSON string");
        }
        NARAD_ASSIGN_OR_RETURN(message.value, base64_field(*encoded, "invalid payload: "));
    } else if (!payload_encoding.empty()) {
        return Status(Errc::invalid_argument, R"(invalid payload_encoding: want "base64" or none)");
    } else if (depth == PayloadDepth::to_check &&
               json_scan::nests_deeper_than(raw_payload, json_scan::kPayloadMaxDepth)) {
        return too_deep("payload");
    } else {
        // Stored exactly as written: the consume path hands a JSON value back verbatim, so
        // "42" stays a string and 42 a number.
        message.value = std::string(raw_payload);
    }
    if (message.value.empty()) return Status(Errc::invalid_argument, "message required");
    if (message.value.size() > kMaxMessageBytes) {
        return Status(Errc::payload_too_large, "message too large");
    }
    if (partition) {
        if (*partition < 0)
            return Status(Errc::invalid_argument, "invalid partition: must be >= 0");
        if (*partition > UINT32_MAX) {
            return Status(Errc::invalid_argument, "invalid argument: partition out of range");
        }
        message.partition = static_cast<uint32_t>(*partition);
    }
    return message;
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
            NARAD_RETURN_IF_ERROR(read_optional_int(value, go, key, request.retention_ms));
        } else if (key == "visibility_timeout_ms") {
            NARAD_RETURN_IF_ERROR(read_int(value, go, key, request.visibility_timeout_ms));
        } else if (key == "max_in_flight_per_partition") {
            NARAD_RETURN_IF_ERROR(read_int(value, go, key, request.max_in_flight_per_partition));
        } else if (key == "max_acked_ahead_per_partition") {
            NARAD_RETURN_IF_ERROR(read_int(value, go, key, request.max_acked_ahead_per_partition));
        } else if (key == "schema") {
            if (!value.is_null()) {
                NARAD_ASSIGN_OR_RETURN(request.schema, raw_schema(body));
            }
        } else if (key == "parent") {
            NARAD_RETURN_IF_ERROR(read_string(value, go, key, request.parent));
        } else if (key == "fanout_delay_ms") {
            NARAD_RETURN_IF_ERROR(read_int(value, go, key, request.fanout_delay_ms));
        } else if (key == "max_deliveries") {
            NARAD_RETURN_IF_ERROR(read_int(value, go, key, request.max_deliveries));
        } else if (key == "dead_letter_topic") {
            NARAD_RETURN_IF_ERROR(read_string(value, go, key, request.dead_letter_topic));
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
            NARAD_ASSIGN_OR_RETURN(request.schema, raw_schema(body));
        } else if (key == "schema_base_version") {
            NARAD_RETURN_IF_ERROR(read_optional_int(value, go, key, request.schema_base_version));
        } else if (key == "max_deliveries") {
            NARAD_RETURN_IF_ERROR(read_optional_int(value, go, key, request.max_deliveries));
        } else if (key == "dead_letter_topic") {
            std::string topic;
            NARAD_RETURN_IF_ERROR(read_string(value, go, key, topic));
            request.dead_letter_topic = std::move(topic);
        } else {
            return unknown_field(key);
        }
    }
    return request;
}

// Decoded from raw slices of the body, never from a parsed DOM: a JSON payload is stored exactly
// as the client wrote it, and the body's depth is checked before anything could walk it.
Result<std::vector<wal::ProduceMessage>> decode_produce_batch(std::string_view body) {
    if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return bad("EOF");
    json_scan::Scan scan = json_scan::scan_document(body, json_scan::kGoMaxDepth);
    if (scan.outcome == json_scan::Outcome::too_deep) return too_deep("payload");
    if (scan.outcome == json_scan::Outcome::syntax_error) return syntax_error(body);
    // The body is valid from here on: its slices are not checked again.
    const auto scanned = json_scan::Validity::scanned;
    auto top = json_scan::object_members(body, json_scan::kGoMaxDepth, scanned);
    if (!top) {
        std::string type = raw_type_name(body.substr(json_scan::skip_space(body, 0), 1));
        if (type.starts_with("number")) type = "number";
        return bad("json: cannot unmarshal " + type +
                   " into Go value of type handlers.produceBatchRequest");
    }
    std::optional<std::string_view> list;
    for (const auto& [key, raw] : *top) {
        if (key != "messages") return unknown_field(key);
        list = raw;
    }
    std::vector<std::string_view> items;
    if (list && *list != "null") {
        // At most one element past the bound is looked at, however many the body holds.
        auto elements =
            json_scan::array_elements(*list, json_scan::kGoMaxDepth, kMaxProduceBatch, scanned);
        if (!elements) return raw_type_error(*list, "produceBatchRequest", "messages", "[]message");
        items = std::move(*elements);
    }
    if (items.empty()) return Status(Errc::invalid_argument, "messages required");
    if (items.size() > kMaxProduceBatch) {
        return Status(Errc::invalid_argument, "too many messages: more than " +
                                                  std::to_string(kMaxProduceBatch) + " (max " +
                                                  std::to_string(kMaxProduceBatch) + ")");
    }
    std::vector<wal::ProduceMessage> messages;
    messages.reserve(items.size());
    // A payload sits three levels down (body, messages, item): a body no deeper than the payload
    // limit plus those three holds no payload past it.
    const PayloadDepth depth = scan.depth <= json_scan::kPayloadMaxDepth + 3
                                   ? PayloadDepth::within_limit
                                   : PayloadDepth::to_check;
    for (size_t i = 0; i < items.size(); ++i) {
        auto message = decode_batch_message(items[i], depth);
        if (!message.is_ok()) {
            const Status& error = message.status();
            // A body-level decode failure (a wrong type, an unknown field) is Go's whole-body
            // error; a message's own check is reported with its index.
            if (error.message().starts_with("invalid json: ")) return error;
            return Status(error.code(), "message " + std::to_string(i) + ": " + error.message());
        }
        messages.push_back(std::move(*message));
    }
    return messages;
}

namespace {

Result<std::vector<meta::Grant>> read_grants(const json& value, const std::string& go_struct) {
    std::vector<meta::Grant> grants;
    if (value.is_null()) return grants;
    if (!value.is_array()) return type_error(value, go_struct, "grants", "[]user.Grant");
    for (const json& item : value) {
        if (!item.is_object()) return type_error(item, "Grant", "grants", "user.Grant");
        meta::Grant grant;
        std::string action;
        for (const auto& [key, field] : item.items()) {
            if (key == "action") {
                NARAD_RETURN_IF_ERROR(read_string(field, "Grant", "action", action));
            } else if (key == "patterns") {
                if (field.is_null()) continue;
                if (!field.is_array()) return type_error(field, "Grant", "patterns", "[]string");
                for (const json& pattern : field) {
                    if (!pattern.is_string()) {
                        return type_error(pattern, "Grant", "patterns", "string");
                    }
                    grant.patterns.push_back(pattern.get<std::string>());
                }
            } else {
                return unknown_field(key);
            }
        }
        auto parsed = meta::parse_action(action);
        if (!parsed) {
            return Status(Errc::invalid_argument, "unknown grant action \"" + action + "\"");
        }
        grant.action = *parsed;
        grants.push_back(std::move(grant));
    }
    return grants;
}

}  // namespace

Result<AttachChildRequest> decode_attach_child(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(json document, parse(body));
    NARAD_RETURN_IF_ERROR(require_object(document, "topics.attachChildRequest"));
    AttachChildRequest request;
    const std::string go = "attachChildRequest";
    for (const auto& [key, value] : document.items()) {
        if (key == "child") {
            NARAD_RETURN_IF_ERROR(read_string(value, go, key, request.child));
        } else if (key == "delay_ms") {
            NARAD_RETURN_IF_ERROR(read_int(value, go, key, request.delay_ms));
        } else {
            return unknown_field(key);
        }
    }
    if (request.child.empty()) return Status(Errc::invalid_argument, "child is required");
    if (request.delay_ms < 0) return Status(Errc::invalid_argument, "delay_ms must be >= 0");
    return request;
}

Result<CreateUserRequest> decode_create_user(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(json document, parse(body));
    NARAD_RETURN_IF_ERROR(require_object(document, "handlers.createUserRequest"));
    CreateUserRequest request;
    const std::string go = "createUserRequest";
    for (const auto& [key, value] : document.items()) {
        if (key == "username") {
            NARAD_RETURN_IF_ERROR(read_string(value, go, key, request.username));
        } else if (key == "password") {
            NARAD_RETURN_IF_ERROR(read_string(value, go, key, request.password));
        } else if (key == "grants") {
            NARAD_ASSIGN_OR_RETURN(request.grants, read_grants(value, go));
        } else {
            return unknown_field(key);
        }
    }
    return request;
}

Result<std::vector<meta::Grant>> decode_grants_update(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(json document, parse(body));
    NARAD_RETURN_IF_ERROR(require_object(document, "handlers.grantsRequest"));
    std::optional<std::vector<meta::Grant>> grants;
    for (const auto& [key, value] : document.items()) {
        if (key != "grants") return unknown_field(key);
        NARAD_ASSIGN_OR_RETURN(grants, read_grants(value, "grantsRequest"));
        if (value.is_null()) grants.reset();
    }
    if (!grants) return Status(Errc::invalid_argument, "grants required");
    return *grants;
}

Result<PasswordChangeRequest> decode_password_change(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(json document, parse(body));
    NARAD_RETURN_IF_ERROR(require_object(document, "handlers.passwordRequest"));
    PasswordChangeRequest request;
    const std::string go = "passwordRequest";
    for (const auto& [key, value] : document.items()) {
        if (key == "new_password") {
            NARAD_RETURN_IF_ERROR(read_string(value, go, key, request.new_password));
        } else if (key == "current_password") {
            std::string current;
            NARAD_RETURN_IF_ERROR(read_string(value, go, key, current));
            if (!value.is_null()) request.current_password = std::move(current);
        } else {
            return unknown_field(key);
        }
    }
    return request;
}

Result<AckBatchRequest> decode_ack_batch(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(json document, parse(body));
    NARAD_RETURN_IF_ERROR(require_object(document, "handlers.ackBatchRequest"));
    AckBatchRequest request;
    for (const auto& [key, value] : document.items()) {
        if (key == "receipt_handles") {
            if (!value.is_array()) return type_error(value, "ackBatchRequest", key, "[]string");
            if (value.size() > kMaxAckBatch) {
                return Status(Errc::invalid_argument, "too many receipt_handles: more than " +
                                                          std::to_string(kMaxAckBatch) + " (max " +
                                                          std::to_string(kMaxAckBatch) + ")");
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
