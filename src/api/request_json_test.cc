#include "api/request_json.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "base/json_scan.h"

namespace narad::api {
namespace {

// Rule: create bodies decode strictly with Narad's "invalid json" texts.
TEST(RequestJsonTest, CreateTopicIsStrict) {
    auto request =
        decode_create_topic(R"({"name":"t","partitions":4,"schema":{"type":"object"},"owner":"x"})")
            .value();
    EXPECT_EQ(request.name, "t");
    EXPECT_EQ(request.partitions, 4);
    EXPECT_EQ(request.schema, R"({"type":"object"})");
    EXPECT_EQ(decode_create_topic("").status().message(), "invalid json: EOF");
    EXPECT_EQ(decode_create_topic(R"({"name":"t","bogus":1})").status().message(),
              "invalid json: json: unknown field \"bogus\"");
    EXPECT_EQ(decode_create_topic(R"({"name":"t")").status().message(),
              "invalid json: unexpected EOF");
    EXPECT_EQ(decode_create_topic(R"({"partitions":"4"})").status().message(),
              "invalid json: json: cannot unmarshal string into Go struct field "
              "createRequest.partitions of type int64");
    EXPECT_FALSE(decode_create_topic(R"({"name":"t"} {"name":"u"})").is_ok());
    EXPECT_FALSE(decode_create_topic("[1]").is_ok());
}

// Rule: PATCH refuses visibility_timeout_ms (it cannot change after create).
TEST(RequestJsonTest, UpdateRefusesVisibility) {
    EXPECT_EQ(decode_update_topic(R"({"visibility_timeout_ms":5})").status().message(),
              "invalid json: json: unknown field \"visibility_timeout_ms\"");
    auto update = decode_update_topic(R"({"retention_ms":null,"partitions":5})").value();
    EXPECT_FALSE(update.retention_ms.has_value());
    EXPECT_EQ(update.partitions, 5);
}

// Rule: batch produce takes a JSON payload or base64 bytes, one per message, never both.
TEST(RequestJsonTest, ProduceBatch) {
    auto messages =
        decode_produce_batch(R"({"messages":[{"payload":{"a":1}},{"payload":"text","key":"k"},)"
                             R"({"payload_base64":"AAE=","partition":2}]})")
            .value();
    ASSERT_EQ(messages.size(), 3u);
    EXPECT_EQ(messages[0].value, R"({"a":1})");
    EXPECT_EQ(messages[1].value, "text");
    EXPECT_EQ(messages[1].key, "k");
    EXPECT_EQ(messages[2].value, std::string("\x00\x01", 2));
    EXPECT_EQ(messages[2].partition, 2u);
    EXPECT_FALSE(decode_produce_batch(R"({"messages":[]})").is_ok());
    EXPECT_FALSE(
        decode_produce_batch(R"({"messages":[{"payload":"a","payload_base64":"YQ=="}]})").is_ok());
    EXPECT_FALSE(decode_produce_batch(R"({"messages":[{"payload":""}]})").is_ok());
    EXPECT_FALSE(decode_produce_batch(R"({"messages":[{"payload_base64":"@@"}]})").is_ok());
    EXPECT_FALSE(decode_produce_batch(R"({"messages":[{"partition":-1,"payload":1}]})").is_ok());
}

std::string nested_arrays(size_t levels) {
    return std::string(levels, '[') + std::string(levels, ']');
}

// Rule: a JSON payload is kept exactly as the client wrote it (spacing, key order, number
// spelling); a JSON string is its text; of duplicate fields the last one counts, as in Go.
TEST(RequestJsonTest, ProduceBatchKeepsPayloadsAsWritten) {
    auto messages =
        decode_produce_batch(R"({"messages":[{"payload": { "b" : 1.50, "a":[ 2 ] } },)"
                             R"({"payload":"42"},{"payload":42},{"payload":1,"payload":"last"}]})")
            .value();
    ASSERT_EQ(messages.size(), 4u);
    EXPECT_EQ(messages[0].value, R"({ "b" : 1.50, "a":[ 2 ] })");
    EXPECT_EQ(messages[1].value, "42");
    EXPECT_EQ(messages[2].value, "42");
    EXPECT_EQ(messages[3].value, "last");
}

// Rule (regression: a 600 KB batch of 300,000 nested arrays killed the node): a payload nested
// deeper than 256 levels is refused naming its message, whatever the depth; 256 levels pass.
TEST(RequestJsonTest, ProduceBatchRefusesDeepPayloads) {
    auto batch = [](const std::string& payload) {
        return R"({"messages":[{"payload":1},{"payload":)" + payload + "}]}";
    };
    EXPECT_EQ(decode_produce_batch(batch(nested_arrays(257))).status().message(),
              "message 1: payload nests deeper than 256 levels");
    EXPECT_EQ(decode_produce_batch(batch(nested_arrays(300'000))).status().message(),
              "payload nests deeper than 256 levels");
    auto ok = decode_produce_batch(batch(nested_arrays(256)));
    ASSERT_TRUE(ok.is_ok()) << ok.status().to_string();
    EXPECT_EQ((*ok)[1].value, nested_arrays(256));
}

// Rule: every JSON route refuses a body nested beyond Go's limit, and a topic schema nested
// beyond 256 levels, before anything walks them.
TEST(RequestJsonTest, DeepBodiesAndSchemasAreRefused) {
    std::string deep_body = R"({"name":"t","bogus":)" + nested_arrays(20'000) + "}";
    EXPECT_EQ(decode_create_topic(deep_body).status().message(),
              "invalid json: exceeded max depth");
    EXPECT_EQ(decode_ack_batch(nested_arrays(20'000)).status().message(),
              "invalid json: exceeded max depth");
    std::string deep_schema = R"({"name":"t","schema":{"items":)" + nested_arrays(300) + "}}";
    EXPECT_EQ(decode_create_topic(deep_schema).status().message(),
              "schema nests deeper than 256 levels");
    EXPECT_EQ(decode_update_topic(R"({"schema":)" + nested_arrays(300) + "}").status().message(),
              "schema nests deeper than 256 levels");
    auto kept = decode_create_topic(R"({"name":"t","schema": {"type" : "object"}})").value();
    EXPECT_EQ(kept.schema, R"({"type" : "object"})");
}

std::string random_batch(std::mt19937_64& rng) {
    static const std::vector<std::string> kPayloads = {
        "1", "\"text\"", "{\"a\":[1,{\"b\":null}]}", "[]", "true", "\"\"", "-0.5e2"};
    std::string out = R"({"messages":[)";
    for (size_t i = 0, n = 1 + rng() % 4; i < n; ++i) {
        if (i > 0) out += ",";
        out += "{";
        if (rng() % 3 == 0) out += R"("key":"k",)";
        if (rng() % 4 == 0) out += R"("partition":)" + std::to_string(rng() % 3) + ",";
        if (rng() % 5 == 0) {
            out += R"("payload_base64":"AAE=")";
        } else {
            out += R"("payload":)";
            out += rng() % 6 == 0 ? std::string(250 + rng() % 10, '[') + std::string(260, ']')
                                  : kPayloads[rng() % kPayloads.size()];
        }
        out += "}";
    }
    return out + "]}";
}

// Rule (fuzz): the batch decoder never crashes on random and mutated batches, and whatever it
// accepts holds a non-empty value per message, JSON payloads no deeper than 256 levels. Bounded
// to a few seconds.
TEST(RequestJsonTest, FuzzProduceBatch) {
    std::mt19937_64 rng(0xba7c);
    static constexpr std::string_view kBytes = "{}[]\",:0123456789 payloadkey";
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    size_t accepted = 0;
    size_t runs = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        std::string body = random_batch(rng);
        for (int edits = static_cast<int>(rng() % 3); edits > 0; --edits) {
            size_t at = rng() % body.size();
            if (rng() % 2) {
                body[at] = kBytes[rng() % kBytes.size()];
            } else {
                body.erase(at, 1);
            }
        }
        auto decoded = decode_produce_batch(body);
        ++runs;
        if (!decoded.is_ok()) {
            ASSERT_EQ(decoded.code(), Errc::invalid_argument) << body;
            continue;
        }
        ++accepted;
        for (const auto& message : *decoded) {
            ASSERT_FALSE(message.value.empty()) << body;
            ASSERT_FALSE(json_scan::nests_deeper_than(message.value, 256)) << body;
        }
    }
    EXPECT_GT(runs, 1000u);
    EXPECT_GT(accepted, 100u);
}

// Rule: batch ack takes handles and an optional extend.
TEST(RequestJsonTest, AckBatch) {
    auto request = decode_ack_batch(R"({"receipt_handles":["0:1:2"],"extend":"0"})").value();
    EXPECT_EQ(request.receipt_handles.size(), 1u);
    EXPECT_EQ(request.extend, "0");
    EXPECT_FALSE(decode_ack_batch(R"({"receipt_handles":[]})").is_ok());
    EXPECT_FALSE(decode_ack_batch(R"({"receipt_handles":[1]})").is_ok());
}

}  // namespace
}  // namespace narad::api
