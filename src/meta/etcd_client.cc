// EtcdClient: request bodies are built here, answers parsed in etcd_client_json.cc, the watch lives
// in etcd_client_watch.cc.
//
// Failover. A call starts at the endpoint that answered last. Errc::peer_error from the transport
// means nothing was sent, so the next endpoint is tried; so is an etcd answer saying the request
// was never proposed ("no leader"). A read that timed out is also asked elsewhere. A mutation whose
// answer was lost is Errc::unknown_outcome and is never sent again: a txn sent twice could report
// its own first success as a failed compare.
#include "meta/etcd_client.h"

#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "meta/etcd_client_json.h"

namespace narad::meta {
namespace {

using nlohmann::json;

std::string b64(std::string_view bytes) { return base64_encode(bytes); }

// 64-bit numbers go as strings, as the gateway writes them (a JSON number loses precision above
// 2^53 in many parsers).
std::string num(int64_t value) { return std::to_string(value); }
std::string unum(uint64_t value) { return std::to_string(value); }

const char* target_name(Compare::Target target) {
    switch (target) {
        case Compare::Target::value:
            return "VALUE";
        case Compare::Target::mod_revision:
            return "MOD";
        case Compare::Target::create_revision:
            return "CREATE";
        case Compare::Target::version:
            return "VERSION";
    }
    return "VALUE";
}

const char* op_name(Compare::Op op) {
    switch (op) {
        case Compare::Op::equal:
            return "EQUAL";
        case Compare::Op::not_equal:
            return "NOT_EQUAL";
        case Compare::Op::greater:
            return "GREATER";
        case Compare::Op::less:
            return "LESS";
    }
    return "EQUAL";
}

json compare_json(const Compare& c) {
    json j = {{"key", b64(c.key)}, {"target", target_name(c.target)}, {"result", op_name(c.op)}};
    switch (c.target) {
        case Compare::Target::value:
            j["value"] = b64(c.value);
            break;
        case Compare::Target::mod_revision:
            j["mod_revision"] = num(c.number);
            break;
        case Compare::Target::create_revision:
            j["create_revision"] = num(c.number);
            break;
        case Compare::Target::version:
            j["version"] = num(c.number);
            break;
    }
    return j;
}

json op_json(const TxnOp& op) {
    json body = {{"key", b64(op.key)}};
    switch (op.kind) {
        case TxnOp::Kind::put:
            body["value"] = b64(op.value);
            if (op.lease != 0) body["lease"] = num(op.lease);
            return {{"requestPut", body}};
        case TxnOp::Kind::remove:
            if (!op.range_end.empty()) body["range_end"] = b64(op.range_end);
            return {{"requestDeleteRange", body}};
        case TxnOp::Kind::range:
            if (!op.range_end.empty()) body["range_end"] = b64(op.range_end);
            return {{"requestRange", body}};
    }
    return {};
}

}  // namespace

Compare Compare::value_is(std::string key, std::string value) {
    Compare c;
    c.key = std::move(key);
    c.target = Target::value;
    c.value = std::move(value);
    return c;
}

Compare Compare::mod_revision_is(std::string key, int64_t revision) {
    Compare c;
    c.key = std::move(key);
    c.target = Target::mod_revision;
    c.number = revision;
    return c;
}

Compare Compare::create_revision_is(std::string key, int64_t revision) {
    Compare c;
    c.key = std::move(key);
    c.target = Target::create_revision;
    c.number = revision;
    return c;
}

Compare Compare::missing(std::string key) { return create_revision_is(std::move(key), 0); }

Compare Compare::present(std::string key) {
    Compare c = create_revision_is(std::move(key), 0);
    c.op = Op::greater;
    return c;
}

TxnOp TxnOp::put(std::string key, std::string value, int64_t lease) {
    TxnOp op;
    op.kind = Kind::put;
    op.key = std::move(key);
    op.value = std::move(value);
    op.lease = lease;
    return op;
}

TxnOp TxnOp::remove(std::string key, std::string range_end) {
    TxnOp op;
    op.kind = Kind::remove;
    op.key = std::move(key);
    op.range_end = std::move(range_end);
    return op;
}

TxnOp TxnOp::range(std::string key, std::string range_end) {
    TxnOp op;
    op.kind = Kind::range;
    op.key = std::move(key);
    op.range_end = std::move(range_end);
    return op;
}

EtcdClient::EtcdClient(EtcdTransport& transport, EtcdClientOptions options, Clock& clock)
    : transport_(transport), options_(std::move(options)), clock_(clock) {}

EtcdClient::~EtcdClient() = default;

Result<std::string> EtcdClient::call_endpoint(const std::string& endpoint, std::string_view path,
                                              const std::string& body, Mutation mutation,
                                              Millis timeout) {
    auto reply = transport_.post(endpoint, path, body, timeout);
    if (!reply.is_ok()) {
        if (reply.code() == Errc::peer_error) return reply.status();
        // Sent, but no answer: a mutation may have been applied.
        Errc code = mutation == Mutation::yes ? Errc::unknown_outcome : Errc::timeout;
        return Status(code,
                      std::string(path) + " on " + endpoint + ": " + reply.status().message());
    }
    if (reply->status != 200) {
        return gateway::decode_error(reply->status, reply->body, mutation)
            .with_context(std::string(path) + " on " + endpoint);
    }
    return std::move(reply->body);
}

Result<std::string> EtcdClient::call(std::string_view path, const std::string& body,
                                     Mutation mutation, std::optional<Millis> timeout) {
    const auto& endpoints = options_.endpoints;
    if (endpoints.empty()) return Status(Errc::invalid_argument, "no etcd endpoints configured");
    Millis limit = timeout.value_or(options_.call_timeout);
    size_t start = preferred_.load(std::memory_order_relaxed) % endpoints.size();
    Status last;
    for (size_t i = 0; i < endpoints.size(); ++i) {
        size_t index = (start + i) % endpoints.size();
        auto answer = call_endpoint(endpoints[index], path, body, mutation, limit);
        if (answer.is_ok()) {
            preferred_.store(index, std::memory_order_relaxed);
            return answer;
        }
        last = answer.status();
        // decode_error says unavailable for a mutation only when it was never proposed.
        if (!gateway::retryable_elsewhere(last)) return last;
    }
    return last;
}

std::string EtcdClient::prefix_end(std::string_view prefix) {
    std::string end(prefix);
    while (!end.empty()) {
        auto last = static_cast<unsigned char>(end.back());
        if (last < 0xff) {
            end.back() = static_cast<char>(last + 1);
            return end;
        }
        end.pop_back();
    }
    return std::string(1, '\0');  // every key
}

Result<RangeResult> EtcdClient::range(std::string key, std::string range_end,
                                      ReadConsistency consistency) {
    json body = {{"key", b64(key)}};
    if (!range_end.empty()) body["range_end"] = b64(range_end);
    if (consistency == ReadConsistency::serializable) body["serializable"] = true;
    NARAD_ASSIGN_OR_RETURN(auto answer, call("/v3/kv/range", body.dump(), Mutation::no));
    return gateway::parse_range(answer);
}

Result<RangeResult> EtcdClient::range_page(std::string key, std::string range_end, RangePage page) {
    json body = {{"key", b64(key)}};
    if (!range_end.empty()) body["range_end"] = b64(range_end);
    if (page.limit > 0) body["limit"] = num(page.limit);
    if (page.revision > 0) body["revision"] = num(page.revision);
    NARAD_ASSIGN_OR_RETURN(auto answer, call("/v3/kv/range", body.dump(), Mutation::no));
    return gateway::parse_range(answer);
}

Result<RangeResult> EtcdClient::range_all(std::string key, std::string range_end,
                                          int64_t page_keys) {
    constexpr int kAttempts = 3;
    Status last;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
        RangeResult all;
        RangePage page{std::max<int64_t>(page_keys, 1), 0};
        std::string from = key;
        bool restart = false;
        for (;;) {
            auto read = range_page(from, range_end, page);
            if (!read.is_ok()) {
                if (read.code() == Errc::gone && page.revision > 0) {
                    last = read.status();
                    restart = true;  // compacted past the first page's revision
                    break;
                }
                if (read.code() != Errc::peer_error && page.limit > 1) {
                    page.limit /= 2;  // perhaps over the body limit: ask for fewer keys
                    continue;
                }
                return read.status();
            }
            if (page.revision == 0) {
                page.revision = read->revision;
                all.revision = read->revision;
            }
            bool more = read->more && !read->kvs.empty();
            if (more) {
                // The next page starts just after this one's last key.
                from = read->kvs.back().key;
                from.push_back('\0');
            }
            for (KeyValue& kv : read->kvs) all.kvs.push_back(std::move(kv));
            if (!more) return all;
        }
        if (!restart) break;
    }
    return last.with_context("reading a range at one revision");
}

Result<int64_t> EtcdClient::put(std::string key, std::string value, int64_t lease) {
    json body = {{"key", b64(key)}, {"value", b64(value)}};
    if (lease != 0) body["lease"] = num(lease);
    NARAD_ASSIGN_OR_RETURN(auto answer, call("/v3/kv/put", body.dump(), Mutation::yes));
    return gateway::parse_header_revision(answer);
}

Result<int64_t> EtcdClient::remove(std::string key, std::string range_end) {
    json body = {{"key", b64(key)}};
    if (!range_end.empty()) body["range_end"] = b64(range_end);
    NARAD_ASSIGN_OR_RETURN(auto answer, call("/v3/kv/deleterange", body.dump(), Mutation::yes));
    return gateway::parse_deleted(answer);
}

Result<TxnResult> EtcdClient::txn(std::vector<Compare> compare, std::vector<TxnOp> success,
                                  std::vector<TxnOp> failure) {
    json body = {
        {"compare", json::array()}, {"success", json::array()}, {"failure", json::array()}};
    for (const auto& c : compare) body["compare"].push_back(compare_json(c));
    for (const auto& op : success) body["success"].push_back(op_json(op));
    for (const auto& op : failure) body["failure"].push_back(op_json(op));
    Mutation mutation = Mutation::no;
    for (const auto* ops : {&success, &failure}) {
        for (const auto& op : *ops) {
            if (op.kind != TxnOp::Kind::range) mutation = Mutation::yes;
        }
    }
    NARAD_ASSIGN_OR_RETURN(auto answer, call("/v3/kv/txn", body.dump(), mutation));
    return gateway::parse_txn(answer);
}

Result<int64_t> EtcdClient::lease_grant(int64_t ttl_seconds) {
    json body = {{"TTL", num(ttl_seconds)}};
    NARAD_ASSIGN_OR_RETURN(auto answer, call("/v3/lease/grant", body.dump(), Mutation::yes));
    return gateway::parse_lease_grant(answer);
}

Result<int64_t> EtcdClient::lease_keep_alive(int64_t lease) {
    // The gateway turns this POST into a keep-alive stream carrying exactly one request, and
    // answers with its one response. Repeating a keep-alive is harmless, so it counts as a read.
    json body = {{"ID", num(lease)}};
    NARAD_ASSIGN_OR_RETURN(auto answer, call("/v3/lease/keepalive", body.dump(), Mutation::no));
    return gateway::parse_keep_alive(answer);
}

Status EtcdClient::lease_revoke(int64_t lease) {
    json body = {{"ID", num(lease)}};
    auto answer = call("/v3/lease/revoke", body.dump(), Mutation::yes);
    return answer.is_ok() ? Status::ok() : answer.status();
}

Result<LeaderInfo> EtcdClient::campaign(std::string election, int64_t lease, std::string value,
                                        Millis timeout) {
    json body = {{"name", b64(election)}, {"lease", num(lease)}, {"value", b64(value)}};
    auto answer = call("/v3/election/campaign", body.dump(), Mutation::yes, timeout);
    if (!answer.is_ok()) {
        // etcd drops the candidate's key when the connection closes, and the lease bounds it.
        if (answer.code() == Errc::unknown_outcome) {
            return Status(Errc::timeout, "campaign for '" + election + "' not won within " +
                                             std::to_string(timeout.count()) + " ms");
        }
        return answer.status();
    }
    NARAD_ASSIGN_OR_RETURN(auto leader, gateway::parse_campaign(*answer));
    leader.value = std::move(value);
    if (leader.name.empty()) leader.name = std::move(election);
    return leader;
}

Status EtcdClient::resign(const LeaderInfo& leadership) {
    json body = {{"leader",
                  {{"name", b64(leadership.name)},
                   {"key", b64(leadership.key)},
                   {"rev", num(leadership.create_revision)},
                   {"lease", num(leadership.lease)}}}};
    auto answer = call("/v3/election/resign", body.dump(), Mutation::yes);
    return answer.is_ok() ? Status::ok() : answer.status();
}

Result<LeaderInfo> EtcdClient::leader(std::string election) {
    json body = {{"name", b64(election)}};
    NARAD_ASSIGN_OR_RETURN(auto answer, call("/v3/election/leader", body.dump(), Mutation::no));
    return gateway::parse_leader(answer, election);
}

Result<std::vector<Member>> EtcdClient::member_list() {
    NARAD_ASSIGN_OR_RETURN(auto answer, call("/v3/cluster/member/list", "{}", Mutation::no));
    return gateway::parse_members(answer);
}

Result<Member> EtcdClient::member_add(std::vector<std::string> peer_urls, MemberKind kind) {
    json body = {{"peerURLs", peer_urls}, {"isLearner", kind == MemberKind::learner}};
    NARAD_ASSIGN_OR_RETURN(auto answer, call("/v3/cluster/member/add", body.dump(), Mutation::yes));
    return gateway::parse_member_add(answer);
}

Status EtcdClient::member_promote(uint64_t id) {
    json body = {{"ID", unum(id)}};
    auto answer = call("/v3/cluster/member/promote", body.dump(), Mutation::yes);
    return answer.is_ok() ? Status::ok() : answer.status();
}

Status EtcdClient::member_remove(uint64_t id) {
    json body = {{"ID", unum(id)}};
    auto answer = call("/v3/cluster/member/remove", body.dump(), Mutation::yes);
    return answer.is_ok() ? Status::ok() : answer.status();
}

Result<EtcdStatus> EtcdClient::status(std::optional<std::string> endpoint) {
    if (!endpoint) {
        NARAD_ASSIGN_OR_RETURN(auto answer, call("/v3/maintenance/status", "{}", Mutation::no));
        return gateway::parse_status(answer);
    }
    NARAD_ASSIGN_OR_RETURN(auto answer, call_endpoint(*endpoint, "/v3/maintenance/status", "{}",
                                                      Mutation::no, options_.call_timeout));
    return gateway::parse_status(answer);
}

Status EtcdClient::transfer_leadership(uint64_t target) {
    // Only the leader can hand leadership over: find its client URL.
    NARAD_ASSIGN_OR_RETURN(auto current, status());
    if (current.leader == 0) return Status(Errc::unavailable, "etcd has no leader right now");
    if (current.leader == target) return Status::ok();
    NARAD_ASSIGN_OR_RETURN(auto members, member_list());
    const Member* leader = nullptr;
    for (const auto& m : members) {
        if (m.id == current.leader) leader = &m;
    }
    if (leader == nullptr || leader->client_urls.empty()) {
        return Status(Errc::unavailable,
                      "the etcd leader " + unum(current.leader) + " publishes no client URL");
    }
    json body = {{"targetID", unum(target)}};
    auto answer = call_endpoint(leader->client_urls.front(), "/v3/maintenance/transfer-leadership",
                                body.dump(), Mutation::yes, options_.call_timeout);
    return answer.is_ok() ? Status::ok() : answer.status();
}

}  // namespace narad::meta
