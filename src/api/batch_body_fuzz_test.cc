// The public API's batch bodies against hostile input: the batch produce body (decode_body, then
// decode_produce_batch) and the batch ack / extend / nack body (decode_ack_batch). Random bytes,
// mutated valid bodies, nesting 100,000 levels deep, numbers past a double, invalid UTF-8, lone
// surrogates, duplicate keys and trailing values. The decoders never crash or throw, answer a
// value or a client error, and what they accept holds again when checked against an independent
// parse (nlohmann's DOM of the same body): within the documented bounds, every field as sent.
// Fixed seeds and iteration counts, so a run is repeatable.
#include <gtest/gtest.h>

#include <exception>
#include <nlohmann/json.hpp>

#include "api/body_encoding.h"
#include "api/compress_test_support.h"
#include "api/params.h"
#include "api/request_json.h"
#include "base/base64.h"
#include "base/json_fuzz.h"
#include "base/json_scan.h"

namespace narad::api {
namespace {

using json_fuzz::pick;
using json_fuzz::printable;
using json_fuzz::Rng;
using nlohmann::json;

const std::vector<std::string> kProduceKeys = {"messages", "payload",        "payload_encoding",
                                               "key",      "key_encoding",   "partition",
                                               "extra",    "receipt_handles"};
const std::vector<std::string> kAckKeys = {"receipt_handles", "extend", "messages", "x"};

// A valid batch produce body: 1 to 5 messages (now and then the bound, 1,000, or one past it),
// each with a JSON or base64 payload, maybe a text or base64 key and a partition, in any order.
std::string valid_produce_batch(Rng& rng, size_t* messages = nullptr) {
    static const std::vector<std::string> kPayloads = {"1",
                                                       "\"text\"",
                                                       "{\"a\":[1,{\"b\":null}]}",
                                                       "[]",
                                                       "true",
                                                       "\"\"",
                                                       "-0.5e2",
                                                       "\"\\u00e9\\n\\ud83d\\ude00\"",
                                                       "{ \"b\" : 1.50, \"b\": 2 }",
                                                       "null",
                                                       "\"caf\xc3\xa9\""};
    size_t count = pick(rng, 40) == 0 ? kMaxProduceBatch + pick(rng, 2) : 1 + pick(rng, 5);
    if (messages != nullptr) *messages = count;
    std::string out = pick(rng, 4) == 0 ? "{ \"messages\" : [ " : "{\"messages\":[";
    for (size_t i = 0; i < count; ++i) {
        std::vector<std::string> members;
        if (pick(rng, 5) == 0) {
            members.push_back(R"("payload":"aGVsbG8=")");
            members.push_back(R"("payload_encoding":"base64")");
        } else {
            members.push_back("\"payload\":" + kPayloads[pick(rng, kPayloads.size())]);
        }
        switch (pick(rng, 5)) {
            case 0:
                members.push_back(R"("key":"k-)" + std::to_string(i) + "\"");
                break;
            case 1:
                members.push_back(R"("key":"/w==")");
                members.push_back(R"("key_encoding":"base64")");
                break;
            case 2:
                members.push_back(pick(rng, 2) ? R"("key":"")" : R"("key":null)");
                break;
            default:
                break;
        }
        if (pick(rng, 3) == 0) {
            members.push_back(pick(rng, 4) == 0 ? R"("partition":null)"
                                                : "\"partition\":" + std::to_string(pick(rng, 4)));
        }
        std::shuffle(members.begin(), members.end(), rng);
        out += i == 0 ? "{" : ",{";
        for (size_t m = 0; m < members.size(); ++m) out += (m ? "," : "") + members[m];
        out += "}";
    }
    return out + "]}";
}

// A valid batch ack body: 1 to 5 handles (now and then 100, or 101), maybe an `extend` of any of
// the shapes the node-to-node route sends or a client might.
std::string valid_ack_batch(Rng& rng, size_t* handles = nullptr) {
    static const std::vector<std::string> kExtends = {
        "\"true\"", "\"0\"", "\"\"", "true", "false", "1", "0", "null", "\"false\""};
    size_t count = pick(rng, 30) == 0 ? kMaxAckBatch + pick(rng, 2) : 1 + pick(rng, 5);
    if (handles != nullptr) *handles = count;
    std::string out = "{\"receipt_handles\":[";
    for (size_t i = 0; i < count; ++i) {
        if (i > 0) out += ",";
        out += "\"" + std::to_string(pick(rng, 8)) + ":" + std::to_string(rng() >> 40) + ":" +
               std::to_string(1 + pick(rng, 1000)) + "\"";
    }
    out += "]";
    if (pick(rng, 2) == 0) out += ",\"extend\":" + kExtends[pick(rng, kExtends.size())];
    return out + "}";
}

// A string member of a DOM object, "" when absent or null.
std::string text_of(const json& object, const char* name) {
    auto it = object.find(name);
    return it == object.end() || it->is_null() ? std::string() : it->get<std::string>();
}

// Checks one decode of a batch produce body; counts it in `accepted` when it decoded.
void check_produce_batch(const std::string& body, size_t& accepted) {
    Result<std::vector<wal::ProduceMessage>> decoded = Status(Errc::internal, "not decoded");
    try {
        decoded = decode_produce_batch(body);
    } catch (const std::exception& e) {
        FAIL() << "decode_produce_batch threw \"" << e.what() << "\" on " << printable(body);
    }
    if (!decoded.is_ok()) {
        ASSERT_TRUE(decoded.code() == Errc::invalid_argument ||
                    decoded.code() == Errc::payload_too_large)
            << decoded.status().to_string() << " on " << printable(body);
        ASSERT_FALSE(decoded.status().message().empty()) << printable(body);
        return;
    }
    ++accepted;
    const auto& messages = *decoded;
    ASSERT_GE(messages.size(), 1u) << printable(body);
    ASSERT_LE(messages.size(), kMaxProduceBatch) << printable(body);
    for (const auto& message : messages) {
        ASSERT_FALSE(message.value.empty()) << printable(body);
        ASSERT_LE(message.value.size(), kMaxMessageBytes) << printable(body);
        ASSERT_FALSE(message.key && message.key->empty()) << "an empty key is no key";
    }
    ASSERT_EQ(json_scan::scan_document(body, json_scan::kGoMaxDepth).outcome,
              json_scan::Outcome::ok)
        << "accepted a body that is not one JSON document: " << printable(body);

    // Against an independent parse. nlohmann refuses invalid UTF-8 and numbers past a double,
    // which Go's decoder (and so Narad's) takes; such bodies are checked only as above.
    json dom = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (dom.is_discarded()) return;
    ASSERT_TRUE(dom.is_object()) << printable(body);
    ASSERT_EQ(dom.size(), 1u) << "accepted a field besides messages: " << printable(body);
    const json& list = dom.at("messages");  // of duplicates, the last (Go's rule and nlohmann's)
    ASSERT_TRUE(list.is_array()) << printable(body);
    ASSERT_EQ(list.size(), messages.size()) << printable(body);
    for (size_t i = 0; i < messages.size(); ++i) {
        const json& item = list[i];
        const wal::ProduceMessage& message = messages[i];
        ASSERT_TRUE(item.is_object()) << i << ": " << printable(body);
        for (const auto& [name, value] : item.items()) {
            ASSERT_TRUE(name == "payload" || name == "payload_encoding" || name == "key" ||
                        name == "key_encoding" || name == "partition")
                << "accepted the field " << name << ": " << printable(body);
            if (name != "payload" && name != "partition") {
                ASSERT_TRUE(value.is_string() || value.is_null())
                    << name << ": " << printable(body);
            }
        }
        std::string key = text_of(item, "key");
        if (text_of(item, "key_encoding") == "base64") key = base64_decode(key).value();
        ASSERT_EQ(message.key.value_or(""), key) << i << ": " << printable(body);
        if (item.contains("partition") && !item["partition"].is_null()) {
            ASSERT_TRUE(item["partition"].is_number_integer()) << printable(body);
            ASSERT_EQ(message.partition, item["partition"].get<uint64_t>()) << printable(body);
        } else {
            ASSERT_FALSE(message.partition.has_value()) << printable(body);
        }
        ASSERT_TRUE(item.contains("payload")) << printable(body);
        if (text_of(item, "payload_encoding") == "base64") {
            ASSERT_EQ(message.value, base64_decode(item["payload"].get<std::string>()).value());
        } else {
            // Kept as written: the same JSON value as the body's.
            ASSERT_EQ(json::parse(message.value), item["payload"]) << printable(body);
        }
    }
}

// Checks one decode of a batch ack body; counts it in `accepted` when it decoded.
void check_ack_batch(const std::string& body, size_t& accepted) {
    Result<AckBatchRequest> decoded = Status(Errc::internal, "not decoded");
    try {
        decoded = decode_ack_batch(body);
    } catch (const std::exception& e) {
        FAIL() << "decode_ack_batch threw \"" << e.what() << "\" on " << printable(body);
    }
    if (!decoded.is_ok()) {
        ASSERT_EQ(decoded.code(), Errc::invalid_argument)
            << decoded.status().to_string() << " on " << printable(body);
        ASSERT_FALSE(decoded.status().message().empty()) << printable(body);
        return;
    }
    ++accepted;
    const auto& handles = decoded->receipt_handles;
    ASSERT_GE(handles.size(), 1u) << printable(body);
    ASSERT_LE(handles.size(), kMaxAckBatch) << printable(body);

    json dom = json::parse(body, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(dom.is_discarded())
        << "accepted a body nlohmann cannot parse: " << printable(body);
    ASSERT_TRUE(dom.is_object()) << printable(body);
    for (const auto& [name, value] : dom.items()) {
        ASSERT_TRUE(name == "receipt_handles" || name == "extend")
            << "accepted the field " << name << ": " << printable(body);
    }
    ASSERT_EQ(dom.at("receipt_handles"), json(handles)) << printable(body);
    std::string extend;
    if (dom.contains("extend")) {
        const json& value = dom["extend"];
        if (value.is_boolean()) {
            extend = value.get<bool>() ? "true" : "false";
        } else if (value.is_string()) {
            extend = value.get<std::string>();
        } else if (value.is_number_integer()) {
            ASSERT_FALSE(value.is_number_float()) << printable(body);
            extend = value.dump();
        } else {
            ASSERT_TRUE(value.is_null()) << "accepted an extend of " << value.type_name();
        }
    }
    // An unsigned extend past INT64_MAX reads back wrapped ("-1"); it is refused by parse_extend
    // either way, so only extends that fit an int64 are compared.
    if (!(dom.contains("extend") && dom["extend"].is_number_unsigned() &&
          dom["extend"].get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) {
        ASSERT_EQ(decoded->extend, extend) << printable(body);
    }

    // What the handler does next with the decoded request never crashes either: the action, and
    // each handle, whose canonical text parses back to the same handle.
    (void)parse_extend(decoded->extend);
    for (const std::string& text : handles) {
        auto handle = parse_receipt_handle(text);
        if (!handle) continue;
        ASSERT_GE(handle->lease_id, LeaseId(1)) << text;
        auto again = parse_receipt_handle(format_receipt_handle(*handle));
        ASSERT_TRUE(again.has_value()) << text;
        ASSERT_EQ(again->partition, handle->partition);
        ASSERT_EQ(again->offset, handle->offset);
        ASSERT_EQ(again->lease_id, handle->lease_id);
    }
}

// Rule: whatever batch produce body a client sends, the decoder answers a client error (400 or
// 413) or 1 to 1,000 messages, each non-empty, at most 1 MiB, with its key, partition and payload
// exactly as the body holds them.
TEST(BatchBodyFuzzTest, HostileProduceBodiesAreRefusedOrDecodedExactly) {
    Rng rng(20260101);
    size_t accepted = 0;
    constexpr int kIterations = 6'000;
    for (int i = 0; i < kIterations; ++i) {
        size_t count = 0;
        std::string body = valid_produce_batch(rng, &count);
        // One body in ten goes unmutated: it must decode, unless it holds too many messages.
        const bool mutated = pick(rng, 10) != 0;
        if (mutated) body = json_fuzz::hostile(body, rng, kProduceKeys);
        size_t before = accepted;
        ASSERT_NO_FATAL_FAILURE(check_produce_batch(body, accepted)) << "iteration " << i;
        if (!mutated) {
            ASSERT_EQ(accepted > before, count <= kMaxProduceBatch) << printable(body);
        }
    }
    EXPECT_GT(accepted, static_cast<size_t>(kIterations / 20));
    ::testing::Test::RecordProperty("accepted", static_cast<int>(accepted));
}

// Rule: whatever batch ack (or extend, or nack) body a client or a peer sends, the decoder
// answers 400 or 1 to 100 handles and an extend exactly as the body holds them.
TEST(BatchBodyFuzzTest, HostileAckBodiesAreRefusedOrDecodedExactly) {
    Rng rng(424242);
    size_t accepted = 0;
    constexpr int kIterations = 8'000;
    for (int i = 0; i < kIterations; ++i) {
        size_t count = 0;
        std::string body = valid_ack_batch(rng, &count);
        const bool mutated = pick(rng, 10) != 0;
        if (mutated) body = json_fuzz::hostile(body, rng, kAckKeys);
        size_t before = accepted;
        ASSERT_NO_FATAL_FAILURE(check_ack_batch(body, accepted)) << "iteration " << i;
        if (!mutated) {
            ASSERT_EQ(accepted > before, count <= kMaxAckBatch) << printable(body);
        }
    }
    EXPECT_GT(accepted, static_cast<size_t>(kIterations / 20));
    ::testing::Test::RecordProperty("accepted", static_cast<int>(accepted));
}

// Rule (regressions and edge cases named): bodies that once escaped as exceptions or sit on a
// bound decode to exactly the documented answer.
TEST(BatchBodyFuzzTest, KnownHostileBodiesGetTheirAnswer) {
    auto produce_error = [](std::string_view body) {
        try {
            return decode_produce_batch(body).status();
        } catch (const std::exception& e) {
            return Status(Errc::internal, std::string("threw: ") + e.what());
        }
    };
    auto ack_error = [](std::string_view body) {
        try {
            return decode_ack_batch(body).status();
        } catch (const std::exception& e) {
            return Status(Errc::internal, std::string("threw: ") + e.what());
        }
    };
    // Regression: a number past a double in a malformed body made nlohmann throw out_of_range
    // (not parse_error) out of the decoder's error path.
    EXPECT_EQ(produce_error(R"({"messages":[{"payload":1e400)").code(), Errc::invalid_argument);
    EXPECT_EQ(produce_error("[1e400,").code(), Errc::invalid_argument);
    EXPECT_EQ(produce_error(R"({"messages":[{"payload":1}]} -1e999)").code(),
              Errc::invalid_argument);
    // Regression: likewise in a well-formed ack body, which nlohmann alone refuses.
    EXPECT_EQ(ack_error(R"({"receipt_handles":["0:1:1"],"extend":1e400})").code(),
              Errc::invalid_argument);
    EXPECT_EQ(ack_error(R"({"receipt_handles":["0:1:1"],"extend":-1e400})").code(),
              Errc::invalid_argument);
    EXPECT_EQ(ack_error(R"({"receipt_handles":[1e400]})").code(), Errc::invalid_argument);
    EXPECT_EQ(ack_error(R"({"receipt_handles":["0:1:1"]} 1e400)").code(), Errc::invalid_argument);

    // A payload past a double is a valid JSON value, kept verbatim, as Go keeps it.
    auto verbatim = decode_produce_batch(R"({"messages":[{"payload":1e400}]})");
    ASSERT_TRUE(verbatim.is_ok()) << verbatim.status().to_string();
    EXPECT_EQ((*verbatim)[0].value, "1e400");
    // Partitions past uint32, or not integers, are refused.
    EXPECT_FALSE(
        decode_produce_batch(R"({"messages":[{"payload":1,"partition":4294967296}]})").is_ok());
    EXPECT_FALSE(decode_produce_batch(R"({"messages":[{"payload":1,"partition":1e400}]})").is_ok());
    EXPECT_FALSE(decode_produce_batch(R"({"messages":[{"payload":1,"partition":1.0}]})").is_ok());
    EXPECT_EQ(decode_produce_batch(R"({"messages":[{"payload":1,"partition":4294967295}]})")
                  .value()[0]
                  .partition,
              4294967295u);

    // 100,000 levels of nesting, open or closed, as the body or a field: refused, never walked.
    for (json_fuzz::Nesting nesting : {json_fuzz::Nesting::left_open, json_fuzz::Nesting::closed}) {
        for (char open : {'[', '{'}) {
            std::string deep = json_fuzz::nested(100'000, nesting, open);
            EXPECT_EQ(produce_error(deep).code(), Errc::invalid_argument);
            EXPECT_EQ(produce_error(R"({"messages":)" + deep + "}").code(), Errc::invalid_argument);
            EXPECT_EQ(produce_error(R"({"messages":[{"payload":)" + deep + "}]}").code(),
                      Errc::invalid_argument);
            EXPECT_EQ(ack_error(deep).code(), Errc::invalid_argument);
            EXPECT_EQ(ack_error(R"({"receipt_handles":["0:1:1"],"extend":)" + deep + "}").code(),
                      Errc::invalid_argument);
        }
    }
    // Invalid UTF-8 and lone surrogates: Go reads them as U+FFFD in a key; the ack decoder
    // (nlohmann) refuses them.
    auto key = decode_produce_batch("{\"messages\":[{\"payload\":1,\"key\":\"a\xff\"}]}");
    ASSERT_TRUE(key.is_ok()) << key.status().to_string();
    EXPECT_EQ((*key)[0].key, "a\xef\xbf\xbd");
    EXPECT_EQ(ack_error("{\"receipt_handles\":[\"0:1:1\xff\"]}").code(), Errc::invalid_argument);
    EXPECT_EQ(ack_error(R"({"receipt_handles":["\ud800"]})").code(), Errc::invalid_argument);
    // Duplicate keys: the last wins, as in Go.
    auto duplicate =
        decode_ack_batch(R"({"receipt_handles":["1:1:1"],"receipt_handles":["2:2:2"]})");
    ASSERT_TRUE(duplicate.is_ok());
    EXPECT_EQ(duplicate->receipt_handles, std::vector<std::string>{"2:2:2"});
    // Trailing values are refused.
    EXPECT_EQ(produce_error(R"({"messages":[{"payload":1}]} {})").code(), Errc::invalid_argument);
    EXPECT_EQ(ack_error(R"({"receipt_handles":["0:1:1"]}])").code(), Errc::invalid_argument);
}

using testing::gzip_of;
using testing::zstd_of;

// Rule: a compressed batch body (zstd or gzip), valid, mutated, cut, concatenated or noise,
// decodes to at most the limit or to 400/413 (415 for another encoding), and what decodes whole
// is exactly what was compressed; the decoded body then goes through the batch decoder safely.
TEST(BatchBodyFuzzTest, CompressedBodiesDecodeWithinTheLimit) {
    Rng rng(31337);
    constexpr uint64_t kLimit = 8 * 1024;
    constexpr int kIterations = 3'000;
    size_t whole = 0;
    size_t accepted = 0;
    for (int i = 0; i < kIterations; ++i) {
        std::string plain = valid_produce_batch(rng);
        if (pick(rng, 4) == 0) plain += std::string(pick(rng, 2 * kLimit), ' ');  // maybe a bomb
        const bool zstd = pick(rng, 2) == 0;
        std::string packed = zstd ? zstd_of(plain) : gzip_of(plain);
        bool intact = false;
        switch (pick(rng, 5)) {
            case 0:
                intact = true;
                break;
            case 1:  // a few bytes flipped
                for (size_t k = 0, n = 1 + pick(rng, 4); k < n; ++k) {
                    packed[pick(rng, packed.size())] ^= static_cast<char>(1 + pick(rng, 255));
                }
                break;
            case 2:
                packed.resize(pick(rng, packed.size()));
                break;
            case 3:  // two members or frames back to back (one body), or trailing noise
                if (pick(rng, 2) == 0) {
                    packed += packed;
                    plain += plain;
                    intact = true;
                } else {
                    packed += json_fuzz::random_bytes(rng, 1 + pick(rng, 9));
                }
                break;
            default:
                packed = json_fuzz::random_bytes(rng, pick(rng, 200));
                break;
        }
        static const char* kEncodings[] = {"zstd", "gzip", "br", "deflate"};
        const char* encoding = pick(rng, 10) == 0 ? kEncodings[pick(rng, 4)]
                               : zstd             ? "zstd"
                                                  : "gzip";
        Result<std::string> decoded = Status(Errc::internal, "not decoded");
        try {
            decoded = decode_body(encoding, packed, kLimit);
        } catch (const std::exception& e) {
            FAIL() << "decode_body threw " << e.what() << " at iteration " << i;
        }
        if (!decoded.is_ok()) {
            ASSERT_TRUE(decoded.code() == Errc::invalid_argument ||
                        decoded.code() == Errc::payload_too_large ||
                        decoded.code() == Errc::unsupported_media_type)
                << decoded.status().to_string();
            if (std::string_view(encoding) == "br" || std::string_view(encoding) == "deflate") {
                ASSERT_EQ(decoded.code(), Errc::unsupported_media_type);
            }
            if (intact && std::string_view(encoding) == (zstd ? "zstd" : "gzip")) {
                ASSERT_EQ(decoded.code(), Errc::payload_too_large) << "refused an intact body";
                ASSERT_GT(plain.size(), kLimit);
            }
            continue;
        }
        ++whole;
        ASSERT_LE(decoded->size(), kLimit);
        if (intact) {
            ASSERT_EQ(*decoded, plain);
        }
        ASSERT_NO_FATAL_FAILURE(check_produce_batch(*decoded, accepted)) << "iteration " << i;
    }
    EXPECT_GT(whole, static_cast<size_t>(kIterations / 10));
}

}  // namespace
}  // namespace narad::api
