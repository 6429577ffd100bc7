#include "api/params.h"

#include <gtest/gtest.h>

namespace narad::api {
namespace {

std::string produce_error(std::string_view query) {
    auto parsed = parse_produce_params(query);
    return parsed.is_ok() ? "" : parsed.status().message();
}

// Rule: produce query parsing follows Narad: duplicates refused, escapes decoded, Go's texts.
TEST(ParamsTest, ProduceParams) {
    auto parsed = parse_produce_params("key=a%20b&partition=%2B2&other=%zz").value();
    EXPECT_EQ(parsed.key, "a b");
    EXPECT_EQ(parsed.partition, 2u);
    EXPECT_FALSE(parse_produce_params("key").value().key.has_value());
    EXPECT_EQ(produce_error("key=a&key=b"), "duplicate key query parameter");
    EXPECT_EQ(produce_error("partition=1&partition=2"), "duplicate partition query parameter");
    EXPECT_EQ(produce_error("partition="), "invalid partition: empty");
    EXPECT_EQ(produce_error("partition=x"),
              "invalid partition: strconv.Atoi: parsing \"x\": invalid syntax");
    EXPECT_EQ(produce_error("partition=-1"), "invalid partition: must be >= 0");
    EXPECT_EQ(produce_error("key=%zz"), "invalid key: invalid URL escape \"%zz\"");
    EXPECT_EQ(produce_error("k%zy=1"), "invalid query parameter: invalid URL escape \"%zy\"");
}

// Rule: ack parsing: first occurrence wins; extend maps to ack/extend/nack; Narad's texts.
TEST(ParamsTest, AckParams) {
    auto ack = parse_ack_params("receipt_handle=1:2:3&receipt_handle=9:9:9").value();
    EXPECT_EQ(ack.receipt_handle, "1:2:3");
    EXPECT_EQ(ack.action, AckAction::ack);
    EXPECT_EQ(parse_ack_params("receipt_handle=1:2:3&extend=true")->action, AckAction::extend);
    EXPECT_EQ(parse_ack_params("receipt_handle=1:2:3&extend=1")->action, AckAction::extend);
    EXPECT_EQ(parse_ack_params("receipt_handle=1:2:3&extend=0")->action, AckAction::nack);
    EXPECT_EQ(parse_ack_params("receipt_handle=1:2:3&extend=false")->action, AckAction::ack);
    EXPECT_EQ(parse_ack_params("extend=1").status().message(), "receipt_handle required");
    EXPECT_EQ(parse_ack_params("receipt_handle=1:2:3&extend=TRUE").status().message(),
              "invalid extend: want \"true\" (renew lease) or \"0\" (release for redelivery)");
}

// Rule: receipt handles are three digit runs; anything else is malformed.
TEST(ParamsTest, ReceiptHandles) {
    auto handle = parse_receipt_handle("3:1024:77").value();
    EXPECT_EQ(handle.partition.value(), 3u);
    EXPECT_EQ(handle.offset.value(), 1024u);
    EXPECT_EQ(handle.lease_id, LeaseId(77));
    EXPECT_EQ(format_receipt_handle(handle), "3:1024:77");
    for (const char* bad :
         {"", "1:2", "1:2:3:4", "a:2:3", "1::3", "-1:2:3", "1:2:0", " 1:2:3", "99999999999:1:1"}) {
        EXPECT_FALSE(parse_receipt_handle(bad).has_value()) << bad;
    }
}

// Rule: consume's wait is a Go duration, clamped to the server's ceiling; bare numbers refused.
TEST(ParamsTest, ConsumeParams) {
    std::map<std::string, std::string> query;
    auto first = [&](std::string_view name) -> std::optional<std::string_view> {
        auto it = query.find(std::string(name));
        if (it == query.end()) return std::nullopt;
        return std::string_view(it->second);
    };
    query = {{"wait", "5"}};
    EXPECT_EQ(parse_consume_params(first, Millis(10'000)).status().message(),
              "invalid wait: time: missing unit in duration \"5\"");
    query = {{"wait", "1m"}};
    EXPECT_EQ(parse_consume_params(first, Millis(10'000))->wait, Millis(10'000));
    EXPECT_EQ(parse_consume_params(first, Millis(0))->wait, Millis(30'000));
    query = {{"wait", "-3s"}, {"partition", "2"}, {"offset", "7"}};
    auto parsed = parse_consume_params(first, Millis(10'000)).value();
    EXPECT_EQ(parsed.wait, Millis(0));
    EXPECT_EQ(parsed.partition, 2u);
    EXPECT_EQ(parsed.offset, 7u);
    EXPECT_FALSE(parsed.batch);
    query = {{"offset", "-1"}};
    EXPECT_EQ(parse_consume_params(first, Millis(10'000)).status().message(),
              "invalid offset: must be >= 0");
    query = {{"max", "0"}};
    EXPECT_FALSE(parse_consume_params(first, Millis(10'000)).is_ok());
    query = {{"max", "50"}};
    EXPECT_TRUE(parse_consume_params(first, Millis(10'000))->batch);
}

// Rule: the single produce's key and partition parameters are refused on the batch route.
TEST(ParamsTest, ProduceBatchQuery) {
    EXPECT_TRUE(check_produce_batch_query("").is_ok());
    EXPECT_TRUE(check_produce_batch_query("wait=1s&x").is_ok());
    EXPECT_EQ(check_produce_batch_query("a=1&key=k").message(),
              "key is set per message in a batch produce, not as a query parameter");
    EXPECT_EQ(check_produce_batch_query("%70artition=1").message(),
              "partition is set per message in a batch produce, not as a query parameter");
}

// Rule: a nack may carry a reason (ours): first one wins, at most 256 bytes, only on a single nack.
TEST(ParamsTest, NackReason) {
    auto nack = parse_ack_params("receipt_handle=0:1:2&extend=0&reason=bad%20input&reason=x");
    ASSERT_TRUE(nack.is_ok()) << nack.status().to_string();
    EXPECT_EQ(nack->reason, "bad input");
    EXPECT_EQ(parse_ack_params("receipt_handle=0:1:2&reason=x").status().message(),
              "reason requires extend=0 (a nack)");
    EXPECT_EQ(
        parse_ack_params("receipt_handle=0:1:2&extend=0&reason=" + std::string(257, 'r')).code(),
        Errc::invalid_argument);
    EXPECT_EQ(parse_ack_extend("extend=0&reason=x").status().message(),
              "reason is taken by a single nack only");
}

}  // namespace
}  // namespace narad::api
