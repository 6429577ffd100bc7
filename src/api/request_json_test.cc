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

// Rule: the user bodies are strict as Narad's: fields as named, a grant's action one of the four,
// patterns strings; grants required on their update ([] clears); current_password optional.
TEST(RequestJsonTest, UserBodies) {
    auto user =
        decode_create_user(
            R"({"username":"u","password":"p","grants":[{"action":"produce","patterns":["a*"]},{"action":"admin"}]})")
            .value();
    EXPECT_EQ(user.username, "u");
    EXPECT_EQ(user.password, "p");
    EXPECT_EQ(user.grants, (std::vector<meta::Grant>{{meta::Action::produce, {"a*"}},
                                                     {meta::Action::admin, {}}}));
    EXPECT_EQ(decode_create_user(R"({"username":"u","pw":"p"})").status().message(),
              "invalid json: json: unknown field \"pw\"");
    EXPECT_EQ(
        decode_create_user(R"({"username":"u","grants":[{"action":"root"}]})").status().message(),
        "unknown grant action \"root\"");
    EXPECT_FALSE(
        decode_create_user(R"({"username":"u","grants":[{"action":"produce","patterns":[1]}]})")
            .is_ok());
    EXPECT_FALSE(decode_create_user(R"({"username":"u","grants":{}})").is_ok());
    EXPECT_FALSE(decode_create_user(R"({"username":5})").is_ok());

    EXPECT_TRUE(decode_grants_update(R"({"grants":[]})").value().empty());
    EXPECT_EQ(decode_grants_update("{}").status().message(), "grants required");
    EXPECT_EQ(decode_grants_update(R"({"grants":null})").status().message(), "grants required");

    auto change = decode_password_change(R"({"new_password":"n"})").value();
    EXPECT_EQ(change.new_password, "n");
    EXPECT_FALSE(change.current_password.has_value());
    EXPECT_EQ(decode_password_change(R"({"new_password":"n","current_password":"c"})")
                  .value()
                  .current_password,
              "c");
    EXPECT_FALSE(decode_password_change(R"({"password":"n"})").is_ok());
}

// Rule: PATCH refuses visibility_timeout_ms (it cannot change after create).
TEST(RequestJsonTest, UpdateRefusesVisibility) {
    EXPECT_EQ(decode_update_topic(R"({"visibility_timeout_ms":5})").status().message(),
              "invalid json: json: unknown field \"visibility_timeout_ms\"");
    auto update = decode_update_topic(R"({"retention_ms":null,"partitions":5})").value();
    EXPECT_FALSE(update.retention_ms.has_value());
    EXPECT_EQ(update.partitions, 5);
}

// Rule: batch produce takes each payload as a JSON value or as base64 bytes, each key as text or
// base64, and an optional partition, as Narad 3.2.
TEST(RequestJsonTest, ProduceBatch) {
    auto messages =
        decode_produce_batch(R"({"messages":[{"payload":{"a":1}},{"payload":"text","key":"k"},)"
                             R"({"payload":"AAE=","payload_encoding":"base64","partition":2},)"
                             R"({"payload":1,"key":"/w==","key_encoding":"base64"},)"
                             R"({"payload":2,"key":""}]})")
            .value();
    ASSERT_EQ(messages.size(), 5u);
    EXPECT_EQ(messages[0].value, R"({"a":1})");
    EXPECT_FALSE(messages[0].key.has_value());
    EXPECT_EQ(messages[1].value, R"("text")");
    EXPECT_EQ(messages[1].key, "k");
    EXPECT_EQ(messages[2].value, std::string("\x00\x01", 2));
    EXPECT_EQ(messages[2].partition, 2u);
    EXPECT_EQ(messages[3].key, std::string("\xff"));
    EXPECT_FALSE(messages[4].key.has_value());  // an empty key is no key
}

// Rule: each refusal names its message and says what is wrong, with Narad's texts and statuses.
TEST(RequestJsonTest, ProduceBatchRefusals) {
    auto error = [](std::string_view body) { return decode_produce_batch(body).status(); };
    EXPECT_EQ(error(R"({"messages":[]})").message(), "messages required");
    EXPECT_EQ(error(R"({"messages":null})").message(), "messages required");
    EXPECT_EQ(error(R"({"messages":[{"payload":1},{}]})").message(), "message 1: message required");
    EXPECT_EQ(error(R"({"messages":[{"payload":1,"payload_encoding":"hex"}]})").message(),
              R"(message 0: invalid payload_encoding: want "base64" or none)");
    EXPECT_EQ(error(R"({"messages":[{"payload":1,"key":"a","key_encoding":"x"}]})").message(),
              R"(message 0: invalid key_encoding: want "base64" or none)");
    EXPECT_EQ(error(R"({"messages":[{"payload":1,"payload_encoding":"base64"}]})").message(),
              "message 0: invalid payload: a base64 payload must be a JSON string");
    EXPECT_EQ(error(R"({"messages":[{"payload":"@@@@","payload_encoding":"base64"}]})").message(),
              "message 0: invalid payload: illegal base64 data at input byte 0");
    EXPECT_EQ(
        error(R"({"messages":[{"payload":1,"key":"a!==","key_encoding":"base64"}]})").message(),
        "message 0: invalid key: illegal base64 data at input byte 1");
    EXPECT_EQ(error(R"({"messages":[{"payload":1,"partition":-1}]})").message(),
              "message 0: invalid partition: must be >= 0");
    EXPECT_EQ(error(R"({"messages":[{"payload":1,"payload_base64":"YQ=="}]})").message(),
              "invalid json: json: unknown field \"payload_base64\"");
    EXPECT_EQ(error(R"({"messages":[{"payload":1,"key":5}]})").message(),
              "invalid json: json: cannot unmarshal number 5 into Go struct field "
              "produceBatchRequest.messages.key of type string");
    // One message over 1 MiB is the single produce's 413, with its index.
    std::string big = R"({"messages":[{"payload":1},{"payload":")" +
                      std::string(kMaxMessageBytes, 'y') + R"("}]})";
    Status too_large = error(big);
    EXPECT_EQ(too_large.code(), Errc::payload_too_large);
    EXPECT_EQ(too_large.message(), "message 1: message too large");
}

// Rule: 1,000 messages make a batch; the 1,001st is refused, and the decoder never looks past
// it, however many elements the body holds.
TEST(RequestJsonTest, ProduceBatchTakesAThousandMessages) {
    auto batch = [](size_t n) {
        std::string out = R"({"messages":[)";
        for (size_t i = 0; i < n; ++i) out += i == 0 ? R"({"payload":1})" : R"(,{"payload":1})";
        return out + "]}";
    };
    EXPECT_EQ(decode_produce_batch(batch(1000)).value().size(), 1000u);
    EXPECT_EQ(decode_produce_batch(batch(1001)).status().message(),
              "too many messages: more than 1000 (max 1000)");
    EXPECT_EQ(decode_produce_batch(batch(200'000)).status().message(),
              "too many messages: more than 1000 (max 1000)");
}

std::string nested_arrays(size_t levels) {
    return std::string(levels, '[') + std::string(levels, ']');
}

// Rule: a JSON payload is kept exactly as the client wrote it (spacing, key order, number
// spelling, a string's quotes); of duplicate fields the last one counts, as in Go.
TEST(RequestJsonTest, ProduceBatchKeepsPayloadsAsWritten) {
    auto messages =
        decode_produce_batch(R"({"messages":[{"payload": { "b" : 1.50, "a":[ 2 ] } },)"
                             R"({"payload":"42"},{"payload":42},{"payload":1,"payload":"last"}]})")
            .value();
    ASSERT_EQ(messages.size(), 4u);
    EXPECT_EQ(messages[0].value, R"({ "b" : 1.50, "a":[ 2 ] })");
    EXPECT_EQ(messages[1].value, R"("42")");  // a JSON string keeps its quotes
    EXPECT_EQ(messages[2].value, "42");
    EXPECT_EQ(messages[3].value, R"("last")");
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
            out += R"("payload":"AAE=","payload_encoding":"base64")";
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
            ASSERT_TRUE(decoded.code() == Errc::invalid_argument ||
                        decoded.code() == Errc::payload_too_large)
                << body;
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

// Rule: batch ack takes 1 to 100 handles and an optional extend.
TEST(RequestJsonTest, AckBatch) {
    auto request = decode_ack_batch(R"({"receipt_handles":["0:1:2"],"extend":"0"})").value();
    EXPECT_EQ(request.receipt_handles.size(), 1u);
    EXPECT_EQ(request.extend, "0");
    EXPECT_EQ(decode_ack_batch(R"({"receipt_handles":[]})").status().message(),
              "receipt_handles required");
    EXPECT_FALSE(decode_ack_batch(R"({"receipt_handles":[1]})").is_ok());
    std::string hundred_one = R"({"receipt_handles":[)";
    for (int i = 0; i < 101; ++i) hundred_one += i == 0 ? R"("0:1:1")" : R"(,"0:1:1")";
    EXPECT_EQ(decode_ack_batch(hundred_one + "]}").status().message(),
              "too many receipt_handles: more than 100 (max 100)");
}

}  // namespace
}  // namespace narad::api
