#include "meta/etcd_client_json.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/base64.h"

namespace narad::meta::gateway {
namespace {

using nlohmann::json;

// gRPC status codes (google.golang.org/grpc/codes), as the gateway reports them in "code".
enum GrpcCode : int {
    kCanceled = 1,
    kUnknown = 2,
    kInvalidArgument = 3,
    kDeadlineExceeded = 4,
    kNotFound = 5,
    kAlreadyExists = 6,
    kPermissionDenied = 7,
    kResourceExhausted = 8,
    kFailedPrecondition = 9,
    kAborted = 10,
    kOutOfRange = 11,
    kUnimplemented = 12,
    kInternal = 13,
    kUnavailable = 14,
    kDataLoss = 15,
    kUnauthenticated = 16,
};

bool contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

Result<json> parse(std::string_view body) {
    json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
        return Status(Errc::corrupt,
                      "etcd answered with malformed JSON: " + std::string(body.substr(0, 200)));
    }
    return j;
}

// 64-bit numbers come as strings ("12"), small ones sometimes as numbers; absent means 0.
int64_t number(const json& j, const char* field) {
    auto it = j.find(field);
    if (it == j.end() || it->is_null()) return 0;
    if (it->is_number_integer()) return it->get<int64_t>();
    if (it->is_number_unsigned()) return static_cast<int64_t>(it->get<uint64_t>());
    if (it->is_string())
        return std::strtoll(it->get_ref<const std::string&>().c_str(), nullptr, 10);
    return 0;
}

uint64_t unsigned_number(const json& j, const char* field) {
    auto it = j.find(field);
    if (it == j.end() || it->is_null()) return 0;
    if (it->is_number_unsigned() || it->is_number_integer()) return it->get<uint64_t>();
    if (it->is_string()) {
        return std::strtoull(it->get_ref<const std::string&>().c_str(), nullptr, 10);
    }
    return 0;
}

std::string text(const json& j, const char* field) {
    auto it = j.find(field);
    if (it == j.end() || !it->is_string()) return {};
    return it->get<std::string>();
}

bool flag(const json& j, const char* field) {
    auto it = j.find(field);
    return it != j.end() && it->is_boolean() && it->get<bool>();
}

Result<std::string> bytes(const json& j, const char* field) {
    auto encoded = text(j, field);
    auto decoded = base64_decode(encoded);
    if (!decoded) return Status(Errc::corrupt, std::string("etcd sent bad base64 in ") + field);
    return std::move(*decoded);
}

const json& child(const json& j, const char* field) {
    static const json kEmpty = json::object();
    auto it = j.find(field);
    return it != j.end() && it->is_object() ? *it : kEmpty;
}

Result<KeyValue> parse_kv(const json& j) {
    KeyValue kv;
    NARAD_ASSIGN_OR_RETURN(kv.key, bytes(j, "key"));
    NARAD_ASSIGN_OR_RETURN(kv.value, bytes(j, "value"));
    kv.create_revision = number(j, "create_revision");
    kv.mod_revision = number(j, "mod_revision");
    kv.version = number(j, "version");
    kv.lease = number(j, "lease");
    return kv;
}

Result<RangeResult> range_from(const json& j) {
    RangeResult out;
    out.revision = number(child(j, "header"), "revision");
    out.more = flag(j, "more");
    auto kvs = j.find("kvs");
    if (kvs != j.end() && kvs->is_array()) {
        for (const auto& entry : *kvs) {
            NARAD_ASSIGN_OR_RETURN(auto kv, parse_kv(entry));
            out.kvs.push_back(std::move(kv));
        }
    }
    return out;
}

std::vector<std::string> strings(const json& j, const char* field) {
    std::vector<std::string> out;
    auto it = j.find(field);
    if (it == j.end() || !it->is_array()) return out;
    for (const auto& entry : *it) {
        if (entry.is_string()) out.push_back(entry.get<std::string>());
    }
    return out;
}

Member member_from(const json& j) {
    Member m;
    m.id = unsigned_number(j, "ID");
    m.name = text(j, "name");
    m.peer_urls = strings(j, "peerURLs");
    m.client_urls = strings(j, "clientURLs");
    m.is_learner = flag(j, "isLearner");
    return m;
}

Errc errc_of(int code, std::string_view message, Mutation mutation) {
    switch (code) {
        case kNotFound:
            return Errc::not_found;
        case kAlreadyExists:
            return Errc::already_exists;
        case kInvalidArgument:
            return Errc::invalid_argument;
        case kPermissionDenied:
            return Errc::forbidden;
        case kUnauthenticated:
            return Errc::unauthorized;
        case kResourceExhausted:
            return Errc::too_many_requests;
        case kUnimplemented:
            return Errc::not_implemented;
        case kOutOfRange:
            // "required revision has been compacted"; "future revision" is a caller's mistake.
            return contains(message, "compacted") ? Errc::gone : Errc::invalid_argument;
        case kFailedPrecondition:
            if (contains(message, "compacted")) return Errc::gone;
            if (contains(message, "already exists")) return Errc::already_exists;
            return Errc::conflict;
        case kDeadlineExceeded:
            return mutation == Mutation::yes ? Errc::unknown_outcome : Errc::timeout;
        case kCanceled:
        case kAborted:
            return mutation == Mutation::yes ? Errc::unknown_outcome : Errc::unavailable;
        case kUnavailable:
            // A proposal that timed out or lost its leader may still commit; "no leader", "not
            // capable" and an unhealthy cluster mean it was never proposed.
            if (mutation == Mutation::yes &&
                (contains(message, "timed out") || contains(message, "leader changed") ||
                 contains(message, "connection lost"))) {
                return Errc::unknown_outcome;
            }
            return Errc::unavailable;
        case kUnknown:
            // The election service's "election: no leader" (leader of an empty election).
            if (contains(message, "no leader")) return Errc::not_found;
            if (contains(message, "not leader")) return Errc::conflict;
            return Errc::internal;
        case kDataLoss:
            return Errc::corrupt;
        default:
            return Errc::internal;
    }
}

Errc errc_of_http(int http_status, Mutation mutation) {
    switch (http_status) {
        case 400:
            return Errc::invalid_argument;
        case 401:
            return Errc::unauthorized;
        case 403:
            return Errc::forbidden;
        case 404:
            return Errc::not_found;
        case 429:
            return Errc::too_many_requests;
        default:
            if (http_status >= 500) {
                return mutation == Mutation::yes ? Errc::unknown_outcome : Errc::unavailable;
            }
            return Errc::internal;
    }
}

}  // namespace

Status decode_error(int http_status, std::string_view body, Mutation mutation) {
    json document = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (document.is_object()) {
        // A streaming call's error is {"error":{...}}: read in place, never copied (nlohmann's copy
        // recurses once per level, and a body nested deeply enough would overflow the stack).
        const json* fields = &document;
        auto error = document.find("error");
        if (error != document.end() && error->is_object()) fields = &*error;
        const json& j = *fields;
        std::string message = text(j, "message");
        if (message.empty()) message = text(j, "error");
        bool has_code = j.contains("code") || j.contains("grpc_code");
        if (has_code) {
            int code = static_cast<int>(j.contains("grpc_code") ? number(j, "grpc_code")
                                                                : number(j, "code"));
            return Status(errc_of(code, message, mutation),
                          "etcd: " + message + " (gRPC code " + std::to_string(code) + ")");
        }
    }
    return Status(errc_of_http(http_status, mutation), "etcd answered HTTP " +
                                                           std::to_string(http_status) + ": " +
                                                           std::string(body.substr(0, 200)));
}

bool retryable_elsewhere(const Status& status) {
    return status.code() == Errc::unavailable || status.code() == Errc::timeout ||
           status.code() == Errc::peer_error;
}

Result<RangeResult> parse_range(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(auto j, parse(body));
    return range_from(j);
}

Result<int64_t> parse_header_revision(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(auto j, parse(body));
    return number(child(j, "header"), "revision");
}

Result<int64_t> parse_deleted(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(auto j, parse(body));
    return number(j, "deleted");
}

Result<TxnResult> parse_txn(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(auto j, parse(body));
    TxnResult out;
    out.succeeded = flag(j, "succeeded");
    out.revision = number(child(j, "header"), "revision");
    auto responses = j.find("responses");
    if (responses != j.end() && responses->is_array()) {
        for (const auto& response : *responses) {
            auto range = response.find("response_range");
            if (range == response.end()) continue;
            NARAD_ASSIGN_OR_RETURN(auto result, range_from(*range));
            out.ranges.push_back(std::move(result));
        }
    }
    return out;
}

Result<int64_t> parse_lease_grant(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(auto j, parse(body));
    if (!text(j, "error").empty()) return Status(Errc::internal, "etcd: " + text(j, "error"));
    int64_t id = number(j, "ID");
    if (id == 0) return Status(Errc::corrupt, "etcd granted a lease without an ID");
    return id;
}

Result<int64_t> parse_keep_alive(std::string_view body) {
    // A keep-alive is a streaming call: one {"result":...} line per request sent.
    auto line = body.substr(0, body.find('\n'));
    NARAD_ASSIGN_OR_RETURN(auto j, parse(line));
    if (j.contains("error")) return decode_error(200, line, Mutation::no);
    int64_t ttl = number(child(j, "result"), "TTL");
    if (ttl <= 0) return Status(Errc::not_found, "etcd: the lease is gone (expired or revoked)");
    return ttl;
}

Result<LeaderInfo> parse_campaign(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(auto j, parse(body));
    const json& leader = child(j, "leader");
    LeaderInfo out;
    NARAD_ASSIGN_OR_RETURN(out.name, bytes(leader, "name"));
    NARAD_ASSIGN_OR_RETURN(out.key, bytes(leader, "key"));
    out.create_revision = number(leader, "rev");
    out.lease = number(leader, "lease");
    if (out.key.empty()) return Status(Errc::corrupt, "etcd campaign answer without a leader key");
    return out;
}

Result<LeaderInfo> parse_leader(std::string_view body, std::string_view election) {
    NARAD_ASSIGN_OR_RETURN(auto j, parse(body));
    auto kv_it = j.find("kv");
    if (kv_it == j.end() || !kv_it->is_object()) {
        return Status(Errc::not_found, "election '" + std::string(election) + "' has no leader");
    }
    NARAD_ASSIGN_OR_RETURN(auto kv, parse_kv(*kv_it));
    LeaderInfo out;
    out.name = std::string(election);
    out.key = std::move(kv.key);
    out.create_revision = kv.create_revision;
    out.lease = kv.lease;
    out.value = std::move(kv.value);
    return out;
}

Result<std::vector<Member>> parse_members(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(auto j, parse(body));
    std::vector<Member> out;
    auto members = j.find("members");
    if (members != j.end() && members->is_array()) {
        for (const auto& m : *members) out.push_back(member_from(m));
    }
    return out;
}

Result<Member> parse_member_add(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(auto j, parse(body));
    Member m = member_from(child(j, "member"));
    if (m.id == 0) return Status(Errc::corrupt, "etcd member add answer without a member ID");
    return m;
}

Result<EtcdStatus> parse_status(std::string_view body) {
    NARAD_ASSIGN_OR_RETURN(auto j, parse(body));
    EtcdStatus out;
    out.member_id = unsigned_number(child(j, "header"), "member_id");
    out.leader = unsigned_number(j, "leader");
    out.raft_index = unsigned_number(j, "raftIndex");
    out.raft_term = unsigned_number(j, "raftTerm");
    out.db_size = number(j, "dbSize");
    out.is_learner = flag(j, "isLearner");
    return out;
}

Result<WatchMessage> parse_watch_message(std::string_view line) {
    NARAD_ASSIGN_OR_RETURN(auto j, parse(line));
    if (j.contains("error")) return decode_error(200, line, Mutation::no);
    const json& result = child(j, "result");
    WatchMessage out;
    out.created = flag(result, "created");
    out.canceled = flag(result, "canceled");
    out.compact_revision = number(result, "compact_revision");
    out.header_revision = number(child(result, "header"), "revision");
    out.cancel_reason = text(result, "cancel_reason");
    auto events = result.find("events");
    if (events != result.end() && events->is_array()) {
        for (const auto& event : *events) {
            WatchEvent e;
            e.type =
                text(event, "type") == "DELETE" ? WatchEvent::Type::remove : WatchEvent::Type::put;
            NARAD_ASSIGN_OR_RETURN(e.kv, parse_kv(child(event, "kv")));
            out.events.push_back(std::move(e));
        }
    }
    return out;
}

}  // namespace narad::meta::gateway
