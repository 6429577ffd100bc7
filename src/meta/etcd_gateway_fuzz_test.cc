// The etcd JSON gateway's answers (meta/etcd_client_json.h) against hostile bodies: every parser,
// fed random bytes, valid answers mutated (numbers past 64 bits or a double, strings of invalid
// UTF-8, bad base64, duplicate keys, trailing values) and nesting 100,000 levels deep, also
// inside an error object. The parsers never crash or throw; they answer a value or an error of
// the documented kind; what they read follows the gateway's rules (64-bit numbers as strings or
// numbers, absent means 0; keys and values base64), and the checks they promise (a lease with an
// ID, a keep-alive with a TTL, a campaign with a key, an added member with an ID) hold. Fixed
// seeds and iteration counts.
#include <gtest/gtest.h>

#include <charconv>
#include <exception>
#include <functional>
#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/json_fuzz.h"
#include "meta/etcd_client_json.h"

namespace narad::meta::gateway {
namespace {

using json_fuzz::pick;
using json_fuzz::printable;
using json_fuzz::Rng;
using nlohmann::json;

const std::vector<std::string> kKeys = {"header",
                                        "revision",
                                        "kvs",
                                        "key",
                                        "value",
                                        "create_revision",
                                        "mod_revision",
                                        "version",
                                        "lease",
                                        "succeeded",
                                        "responses",
                                        "response_range",
                                        "ID",
                                        "TTL",
                                        "leader",
                                        "name",
                                        "rev",
                                        "kv",
                                        "members",
                                        "member",
                                        "peerURLs",
                                        "clientURLs",
                                        "isLearner",
                                        "member_id",
                                        "dbSize",
                                        "raftIndex",
                                        "raftTerm",
                                        "result",
                                        "events",
                                        "type",
                                        "created",
                                        "canceled",
                                        "compact_revision",
                                        "cancel_reason",
                                        "error",
                                        "code",
                                        "grpc_code",
                                        "message",
                                        "deleted"};

// A 64-bit number as the gateway writes it: mostly a decimal string, sometimes a number.
json number_text(Rng& rng, uint64_t value) {
    return pick(rng, 4) == 0 ? json(value) : json(std::to_string(value));
}

json kv_of(Rng& rng) {
    return {{"key", base64_encode("/narad/members/n" + std::to_string(pick(rng, 9)))},
            {"value", base64_encode(R"({"id":"n1"})")},
            {"create_revision", number_text(rng, 1 + pick(rng, 1000))},
            {"mod_revision", number_text(rng, 1 + pick(rng, 1000))},
            {"version", number_text(rng, 1 + pick(rng, 9))},
            {"lease", number_text(rng, rng() >> 1)}};
}

json header_of(Rng& rng) {
    return {{"cluster_id", "14841639068965178418"},
            {"member_id", number_text(rng, rng() >> 1)},
            {"revision", number_text(rng, 1 + pick(rng, 1'000'000))},
            {"raft_term", "3"}};
}

json range_of(Rng& rng) {
    json kvs = json::array();
    for (size_t i = 0, n = pick(rng, 4); i < n; ++i) kvs.push_back(kv_of(rng));
    return {{"header", header_of(rng)}, {"kvs", kvs}, {"count", std::to_string(kvs.size())}};
}

json member_of(Rng& rng) {
    return {{"ID", number_text(rng, 1 + (rng() >> 1))},
            {"name", "n" + std::to_string(pick(rng, 9))},
            {"peerURLs", {"http://127.0.0.1:2380"}},
            {"clientURLs", {"http://127.0.0.1:2379", "http://[::1]:2379"}},
            {"isLearner", pick(rng, 2) == 0}};
}

// The parsers, by answer kind: a valid answer and what to check of a parse.
enum class Kind {
    range,
    header,
    deleted,
    txn,
    lease,
    keep_alive,
    campaign,
    leader,
    members,
    member_add,
    status,
    watch,
    error
};
constexpr int kKinds = 13;

std::string valid_answer(Kind kind, Rng& rng) {
    switch (kind) {
        case Kind::range:
            return range_of(rng).dump();
        case Kind::header:
            return json{{"header", header_of(rng)}}.dump();
        case Kind::deleted:
            return json{{"header", header_of(rng)}, {"deleted", number_text(rng, pick(rng, 5))}}
                .dump();
        case Kind::txn: {
            json responses = json::array();
            for (size_t i = 0, n = pick(rng, 4); i < n; ++i) {
                if (pick(rng, 2)) {
                    responses.push_back({{"response_range", range_of(rng)}});
                } else {
                    responses.push_back({{"response_put", {{"header", header_of(rng)}}}});
                }
            }
            return json{{"header", header_of(rng)},
                        {"succeeded", pick(rng, 2) == 0},
                        {"responses", responses}}
                .dump();
        }
        case Kind::lease:
            return json{{"header", header_of(rng)},
                        {"ID", number_text(rng, 1 + (rng() >> 1))},
                        {"TTL", number_text(rng, 10)}}
                .dump();
        case Kind::keep_alive:
            return json{{"result",
                         {{"header", header_of(rng)},
                          {"ID", number_text(rng, rng() >> 1)},
                          {"TTL", number_text(rng, pick(rng, 30))}}}}
                       .dump() +
                   "\n";
        case Kind::campaign:
            return json{{"header", header_of(rng)},
                        {"leader",
                         {{"name", base64_encode("narad/controller")},
                          {"key", base64_encode("narad/controller/694d8ff1")},
                          {"rev", number_text(rng, 4)},
                          {"lease", number_text(rng, rng() >> 1)}}}}
                .dump();
        case Kind::leader:
            return json{{"header", header_of(rng)}, {"kv", kv_of(rng)}}.dump();
        case Kind::members: {
            json members = json::array();
            for (size_t i = 0, n = pick(rng, 4); i < n; ++i) members.push_back(member_of(rng));
            return json{{"header", header_of(rng)}, {"members", members}}.dump();
        }
        case Kind::member_add:
            return json{{"header", header_of(rng)},
                        {"member", member_of(rng)},
                        {"members", {member_of(rng)}}}
                .dump();
        case Kind::status:
            return json{{"header", header_of(rng)},
                        {"version", "3.5.9"},
                        {"dbSize", number_text(rng, 20480)},
                        {"leader", number_text(rng, rng() >> 1)},
                        {"raftIndex", number_text(rng, rng() >> 20)},
                        {"raftTerm", number_text(rng, 2)},
                        {"isLearner", pick(rng, 2) == 0}}
                .dump();
        case Kind::watch: {
            json events = json::array();
            for (size_t i = 0, n = pick(rng, 4); i < n; ++i) {
                events.push_back({{"type", pick(rng, 2) ? "PUT" : "DELETE"}, {"kv", kv_of(rng)}});
            }
            json result = {{"header", header_of(rng)}, {"events", events}};
            if (pick(rng, 4) == 0) result["created"] = true;
            if (pick(rng, 8) == 0) result["compact_revision"] = number_text(rng, 5);
            return json{{"result", result}}.dump();
        }
        case Kind::error:
            break;
    }
    if (pick(rng, 2) == 0) {
        return json{{"error", "etcdserver: request timed out"},
                    {"code", pick(rng, 17)},
                    {"message", "etcdserver: request timed out"}}
            .dump();
    }
    return json{{"error",
                 {{"grpc_code", pick(rng, 17)},
                  {"http_code", 503},
                  {"message", "etcdserver: no leader"},
                  {"http_status", "Service Unavailable"}}}}
        .dump();
}

// What the gateway's rule makes of a 64-bit field: an integer or a decimal string that fits,
// or 0 when absent; nullopt when the rule does not say (a float, a string of something else).
template <typename T>
std::optional<T> exact_number(const json& object, const char* field) {
    if (!object.is_object()) return T{0};
    auto it = object.find(field);
    if (it == object.end() || it->is_null()) return T{0};
    if (it->is_number_integer()) {
        if (it->is_number_unsigned() && it->get<uint64_t>() > std::numeric_limits<T>::max()) {
            return std::nullopt;
        }
        if (!it->is_number_unsigned() && std::is_unsigned_v<T>) return std::nullopt;
        return it->get<T>();
    }
    if (!it->is_string()) return std::nullopt;
    const std::string& text = it->get_ref<const std::string&>();
    T value{};
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

const json& member_or_empty(const json& object, const char* field) {
    static const json kEmpty = json::object();
    if (!object.is_object()) return kEmpty;
    auto it = object.find(field);
    return it != object.end() && it->is_object() ? *it : kEmpty;
}

template <typename T>
void expect_number(const json& object, const char* field, T actual, const std::string& body) {
    auto expected = exact_number<T>(object, field);
    if (expected) {
        ASSERT_EQ(actual, *expected) << field << ": " << printable(body);
    }
}

// A kv exactly as the answer holds it: base64 undone, numbers by the rule.
void expect_kv(const KeyValue& kv, const json& dom, const std::string& body,
               bool with_mod_revision = true) {
    ASSERT_TRUE(dom.is_object()) << printable(body);
    auto decoded = [&](const char* field) {
        auto it = dom.find(field);
        std::string text = it != dom.end() && it->is_string() ? it->get<std::string>() : "";
        return base64_decode(text);
    };
    ASSERT_EQ(decoded("key"), kv.key) << printable(body);
    ASSERT_EQ(decoded("value"), kv.value) << printable(body);
    ASSERT_NO_FATAL_FAILURE(expect_number(dom, "create_revision", kv.create_revision, body));
    if (with_mod_revision) {
        ASSERT_NO_FATAL_FAILURE(expect_number(dom, "mod_revision", kv.mod_revision, body));
    }
    ASSERT_NO_FATAL_FAILURE(expect_number(dom, "lease", kv.lease, body));
}

void expect_range(const RangeResult& range, const json& dom, const std::string& body) {
    ASSERT_NO_FATAL_FAILURE(
        expect_number(member_or_empty(dom, "header"), "revision", range.revision, body));
    auto kvs = dom.find("kvs");
    if (kvs == dom.end() || !kvs->is_array()) {
        ASSERT_TRUE(range.kvs.empty()) << printable(body);
        return;
    }
    ASSERT_EQ(range.kvs.size(), kvs->size()) << printable(body);
    for (size_t i = 0; i < kvs->size(); ++i) {
        ASSERT_NO_FATAL_FAILURE(expect_kv(range.kvs[i], (*kvs)[i], body));
    }
}

// Runs `parse` on `body`; a thrown exception is a failure.
template <typename T>
Result<T> run(const std::function<Result<T>()>& parse, const std::string& body) {
    try {
        return parse();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "threw \"" << e.what() << "\" on " << printable(body);
        return Status(Errc::internal, "threw");
    }
}

// One parse of `body` as an answer of `kind`, and the checks its rule allows.
void check(Kind kind, const std::string& body, size_t& accepted) {
    json dom = json::parse(body, nullptr, /*allow_exceptions=*/false);
    const bool object = dom.is_object();
    // The parse of any answer that is not a JSON object is corrupt.
    auto refused = [&](Errc code, std::initializer_list<Errc> allowed) {
        for (Errc one : allowed) {
            if (code == one) return;
        }
        ADD_FAILURE() << "unexpected " << static_cast<int>(code) << " on " << printable(body);
    };
    switch (kind) {
        case Kind::range: {
            auto r = run<RangeResult>([&] { return parse_range(body); }, body);
            if (!r.is_ok()) return refused(r.code(), {Errc::corrupt});
            ASSERT_TRUE(object) << printable(body);
            ASSERT_NO_FATAL_FAILURE(expect_range(*r, dom, body));
            break;
        }
        case Kind::header: {
            auto r = run<int64_t>([&] { return parse_header_revision(body); }, body);
            if (!r.is_ok()) return refused(r.code(), {Errc::corrupt});
            ASSERT_TRUE(object) << printable(body);
            ASSERT_NO_FATAL_FAILURE(
                expect_number(member_or_empty(dom, "header"), "revision", *r, body));
            break;
        }
        case Kind::deleted: {
            auto r = run<int64_t>([&] { return parse_deleted(body); }, body);
            if (!r.is_ok()) return refused(r.code(), {Errc::corrupt});
            ASSERT_TRUE(object) << printable(body);
            ASSERT_NO_FATAL_FAILURE(expect_number(dom, "deleted", *r, body));
            break;
        }
        case Kind::txn: {
            auto r = run<TxnResult>([&] { return parse_txn(body); }, body);
            if (!r.is_ok()) return refused(r.code(), {Errc::corrupt});
            ASSERT_TRUE(object) << printable(body);
            auto responses = dom.find("responses");
            size_t ranges = 0;
            if (responses != dom.end() && responses->is_array()) {
                for (const json& response : *responses) {
                    if (!response.is_object() || !response.contains("response_range")) continue;
                    ASSERT_LT(ranges, r->ranges.size()) << printable(body);
                    ASSERT_NO_FATAL_FAILURE(
                        expect_range(r->ranges[ranges++], response["response_range"], body));
                }
            }
            ASSERT_EQ(ranges, r->ranges.size()) << printable(body);
            break;
        }
        case Kind::lease: {
            auto r = run<int64_t>([&] { return parse_lease_grant(body); }, body);
            if (!r.is_ok()) return refused(r.code(), {Errc::corrupt, Errc::internal});
            ASSERT_NE(*r, 0) << "a lease without an ID: " << printable(body);
            ASSERT_NO_FATAL_FAILURE(expect_number(dom, "ID", *r, body));
            break;
        }
        case Kind::keep_alive: {
            auto r = run<int64_t>([&] { return parse_keep_alive(body); }, body);
            if (!r.is_ok()) break;  // any code: the error may be etcd's own
            ASSERT_GT(*r, 0) << "a keep-alive without a TTL: " << printable(body);
            break;
        }
        case Kind::campaign: {
            auto r = run<LeaderInfo>([&] { return parse_campaign(body); }, body);
            if (!r.is_ok()) return refused(r.code(), {Errc::corrupt});
            ASSERT_FALSE(r->key.empty()) << "a leader without a key: " << printable(body);
            break;
        }
        case Kind::leader: {
            auto r = run<LeaderInfo>([&] { return parse_leader(body, "narad/controller"); }, body);
            if (!r.is_ok()) return refused(r.code(), {Errc::corrupt, Errc::not_found});
            ASSERT_EQ(r->name, "narad/controller");
            const json& kv = member_or_empty(dom, "kv");
            KeyValue expected{r->key, r->value, r->create_revision, 0, 0, r->lease};
            ASSERT_NO_FATAL_FAILURE(expect_kv(expected, kv, body, /*with_mod_revision=*/false));
            break;
        }
        case Kind::members: {
            auto r = run<std::vector<Member>>([&] { return parse_members(body); }, body);
            if (!r.is_ok()) return refused(r.code(), {Errc::corrupt});
            auto members = dom.find("members");
            size_t expected = members != dom.end() && members->is_array() ? members->size() : 0;
            ASSERT_EQ(r->size(), expected) << printable(body);
            for (size_t i = 0; i < expected; ++i) {
                ASSERT_NO_FATAL_FAILURE(expect_number((*members)[i], "ID", (*r)[i].id, body));
            }
            break;
        }
        case Kind::member_add: {
            auto r = run<Member>([&] { return parse_member_add(body); }, body);
            if (!r.is_ok()) return refused(r.code(), {Errc::corrupt});
            ASSERT_NE(r->id, 0u) << "an added member without an ID: " << printable(body);
            break;
        }
        case Kind::status: {
            auto r = run<EtcdStatus>([&] { return parse_status(body); }, body);
            if (!r.is_ok()) return refused(r.code(), {Errc::corrupt});
            ASSERT_NO_FATAL_FAILURE(expect_number(dom, "leader", r->leader, body));
            ASSERT_NO_FATAL_FAILURE(expect_number(dom, "raftIndex", r->raft_index, body));
            ASSERT_NO_FATAL_FAILURE(expect_number(dom, "dbSize", r->db_size, body));
            break;
        }
        case Kind::watch: {
            auto r = run<WatchMessage>([&] { return parse_watch_message(body); }, body);
            if (!r.is_ok()) break;  // any code: the error may be etcd's own
            const json& result = member_or_empty(dom, "result");
            ASSERT_NO_FATAL_FAILURE(
                expect_number(result, "compact_revision", r->compact_revision, body));
            auto events = result.find("events");
            size_t expected = events != result.end() && events->is_array() ? events->size() : 0;
            ASSERT_EQ(r->events.size(), expected) << printable(body);
            break;
        }
        case Kind::error: {
            static constexpr int kStatuses[] = {500, 503, 404, 400, 429, 200, 0};
            const int http = kStatuses[body.size() % std::size(kStatuses)];
            const Mutation mutation = body.size() % 2 == 0 ? Mutation::yes : Mutation::no;
            Status status;
            try {
                status = decode_error(http, body, mutation);
            } catch (const std::exception& e) {
                FAIL() << "decode_error threw \"" << e.what() << "\" on " << printable(body);
            }
            ASSERT_FALSE(status.is_ok()) << "an error read as success: " << printable(body);
            // Quotes at most 200 bytes of the body, or the message it holds.
            ASSERT_LE(status.message().size(), std::max<size_t>(body.size(), 200) + 80)
                << printable(body);
            break;
        }
    }
    ++accepted;
}

// Rule: whatever a gateway (or whatever answers in its place) sends, each parser answers a value
// read by the gateway's rules or an error of its documented kind, and never throws.
TEST(EtcdGatewayFuzzTest, HostileAnswersAreRefusedOrReadByTheRules) {
    Rng rng(19700101);
    size_t accepted = 0;
    constexpr int kIterations = 10'400;  // 800 per parser
    for (int i = 0; i < kIterations; ++i) {
        Kind kind = static_cast<Kind>(i % kKinds);
        std::string body = valid_answer(kind, rng);
        if (pick(rng, 10) != 0) body = json_fuzz::hostile(body, rng, kKeys);
        try {
            ASSERT_NO_FATAL_FAILURE(check(kind, body, accepted))
                << "iteration " << i << ", parser " << static_cast<int>(kind);
        } catch (const std::exception& e) {
            FAIL() << "the check threw \"" << e.what() << "\" on " << printable(body);
        }
    }
    EXPECT_GT(accepted, static_cast<size_t>(kIterations / 10));
    ::testing::Test::RecordProperty("accepted", static_cast<int>(accepted));
}

// Rule (regression: decode_error copied a streaming call's {"error":{...}} object, and
// nlohmann's copy recurses once per level, so an error object nested 100,000 deep overflowed the
// stack): an error body of any depth maps onto its code without walking the nesting.
TEST(EtcdGatewayFuzzTest, DeepErrorObjectIsDecodedWithoutRecursion) {
    for (char open : {'[', '{'}) {
        std::string deep = json_fuzz::nested(100'000, json_fuzz::Nesting::closed, open);
        std::string body =
            R"({"error":{"grpc_code":14,"message":"etcdserver: no leader","x":)" + deep + "}}";
        Status status = decode_error(503, body, Mutation::no);
        EXPECT_EQ(status.code(), Errc::unavailable) << status.to_string();
        EXPECT_NE(status.message().find("no leader"), std::string::npos);
        EXPECT_EQ(parse_watch_message(body).code(), Errc::unavailable);
        EXPECT_EQ(parse_keep_alive(body).code(), Errc::unavailable);
        EXPECT_EQ(parse_range(deep).is_ok(), open == '{');  // an array is not an answer
        EXPECT_TRUE(parse_range(R"({"kvs":)" + deep + "}").is_ok());
    }
}

// Rule: numbers the gateway never sends (past 64 bits, past a double, negative where unsigned,
// fractions) do not crash the parsers and do not fake the checks: a lease ID or member ID that
// reads as 0 is refused.
TEST(EtcdGatewayFuzzTest, OutOfRangeNumbersAreReadSafely) {
    for (const std::string& value : json_fuzz::nasty_values()) {
        std::string lease = R"({"ID":)" + value + R"(,"TTL":"10"})";
        auto granted = parse_lease_grant(lease);
        if (granted.is_ok()) {
            EXPECT_NE(*granted, 0) << lease;
        }
        std::string member = R"({"member":{"ID":)" + value + "}}";
        auto added = parse_member_add(member);
        if (added.is_ok()) {
            EXPECT_NE(added->id, 0u) << member;
        }
        auto alive = parse_keep_alive(R"({"result":{"TTL":)" + value + "}}");
        if (alive.is_ok()) {
            EXPECT_GT(*alive, 0) << value;
        }
        (void)parse_status(R"({"header":{"member_id":)" + value + R"(},"dbSize":)" + value + "}");
        (void)decode_error(500, R"({"code":)" + value + R"(,"message":"m"})", Mutation::yes);
    }
    // A revision past INT64_MAX as a string saturates (strtoll) rather than wrapping negative.
    EXPECT_EQ(parse_header_revision(R"({"header":{"revision":"99999999999999999999"}})").value(),
              INT64_MAX);
}

}  // namespace
}  // namespace narad::meta::gateway
