// Replies from other nodes, read as untrusted input: a reply is parsed only when it nests no deeper
// than kPeerReplyMaxDepth (nlohmann copies and dumps recurse once per level), and a field is read
// only when it has its type (get<uint64_t>() would wrap -1, truncate 1.9 and cast 2^64 with
// undefined behaviour). For api/*.cc only; it includes nlohmann/json.hpp.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace narad::api {

// Deeper than any reply a node sends (a move report nests 5 levels).
inline constexpr uint32_t kPeerReplyMaxDepth = 64;

// The reply, or a discarded value when it is not one JSON document or nests too deep.
nlohmann::json parse_peer_reply(std::string_view body);

// A field of a reply with the wrong type or range.
class WrongShape : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// object[field]: an unsigned integer (at most `max`), a signed 64-bit integer, or an array; the
// `_or` forms give `fallback` when the field is absent. Throw WrongShape (or nlohmann's
// out_of_range for a missing field) otherwise.
uint64_t unsigned_field(const nlohmann::json& object, const char* field, uint64_t max = UINT64_MAX);
uint64_t unsigned_field_or(const nlohmann::json& object, const char* field, uint64_t fallback,
                           uint64_t max = UINT64_MAX);
int64_t signed_field_or(const nlohmann::json& object, const char* field, int64_t fallback);
const nlohmann::json& array_field(const nlohmann::json& object, const char* field);

}  // namespace narad::api
