#include "api/request_json.h"

#include <gtest/gtest.h>

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
