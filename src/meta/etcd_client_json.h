// The etcd JSON gateway's answers parsed into the plain types of meta/etcd_client.h, and its error
// bodies mapped onto Errc. Keys and values arrive base64-encoded and 64-bit numbers as strings;
// both are undone here so nothing above sees them. Private to meta/ (etcd_client*.cc). Pure
// functions, callable from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "meta/etcd_client.h"

namespace narad::meta::gateway {

// The Status for a gateway answer with HTTP status `http_status` (not 200) or an error body
// ({"error","code","message"} or, from a streaming call, {"error":{"grpc_code","message"}}).
// For a mutation, an etcd timeout or leader change after the proposal means the write may or may
// not have been applied, so it becomes Errc::unknown_outcome; for a read it is retryable.
Status decode_error(int http_status, std::string_view body, Mutation mutation);

// Whether `status` (from decode_error of a read) is worth asking another member.
bool retryable_elsewhere(const Status& status);

Result<RangeResult> parse_range(std::string_view body);
// header.revision of a put (or any call whose answer is only a header).
Result<int64_t> parse_header_revision(std::string_view body);
// "deleted" of a deleterange.
Result<int64_t> parse_deleted(std::string_view body);
Result<TxnResult> parse_txn(std::string_view body);
// The "ID" of a lease grant.
Result<int64_t> parse_lease_grant(std::string_view body);
// The TTL of a keep-alive answer; Errc::not_found when the lease is gone (no TTL, or TTL <= 0).
Result<int64_t> parse_keep_alive(std::string_view body);
// The "leader" of a campaign answer (name, key, rev, lease); `value` is not in it.
Result<LeaderInfo> parse_campaign(std::string_view body);
// The "kv" of an election leader answer; Errc::not_found when it has none.
Result<LeaderInfo> parse_leader(std::string_view body, std::string_view election);
Result<std::vector<Member>> parse_members(std::string_view body);
// The "member" of a member add answer.
Result<Member> parse_member_add(std::string_view body);
Result<EtcdStatus> parse_status(std::string_view body);

// One message of a watch stream.
struct WatchMessage {
    bool created = false;
    bool canceled = false;
    int64_t compact_revision = 0;  // > 0: the requested revision was compacted
    int64_t header_revision = 0;
    std::string cancel_reason;
    std::vector<WatchEvent> events;
};
// A line of the stream: {"result":{...}}, or an error ({"error":{...}}) as a failed Result.
Result<WatchMessage> parse_watch_message(std::string_view line);

}  // namespace narad::meta::gateway
