#include "api/peer_json.h"

#include <string>

#include "base/json_scan.h"

namespace narad::api {

using nlohmann::json;

json parse_peer_reply(std::string_view body) {
    if (json_scan::nests_deeper_than(body, kPeerReplyMaxDepth))
        return json(json::value_t::discarded);
    return json::parse(body, nullptr, /*allow_exceptions=*/false);
}

uint64_t unsigned_field(const json& object, const char* field, uint64_t max) {
    const json& value = object.at(field);
    if (!value.is_number_unsigned() || value.get<uint64_t>() > max) {
        throw WrongShape(std::string(field) + " is not an unsigned integer in range");
    }
    return value.get<uint64_t>();
}

uint64_t unsigned_field_or(const json& object, const char* field, uint64_t fallback, uint64_t max) {
    return object.contains(field) ? unsigned_field(object, field, max) : fallback;
}

int64_t signed_field_or(const json& object, const char* field, int64_t fallback) {
    if (!object.contains(field)) return fallback;
    const json& value = object.at(field);
    const bool fits = value.is_number_unsigned()
                          ? value.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)
                          : value.is_number_integer();
    if (!fits) throw WrongShape(std::string(field) + " is not a 64-bit integer");
    return value.get<int64_t>();
}

const json& array_field(const json& object, const char* field) {
    const json& value = object.at(field);
    if (!value.is_array()) throw WrongShape(std::string(field) + " is not an array");
    return value;
}

}  // namespace narad::api
