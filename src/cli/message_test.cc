#include "cli/message.h"

#include <gtest/gtest.h>

namespace narad::cli {
namespace {

ConsumedMessage parse(std::string_view body) {
    auto message = parse_consumed_message(body);
    EXPECT_TRUE(message.is_ok()) << message.status().message();
    return message.is_ok() ? *message : ConsumedMessage{};
}

// Rule: the consume response is read field by field, the payload kept as its raw JSON text.
TEST(ParseConsumedMessage, KeepsPayloadVerbatim) {
    const ConsumedMessage m =
        parse(R"({"topic":"t","partition":2,"offset":41,"key":"k-1","payload":{"a": [1, 2]},)"
              R"("timestamp":1783615560,"receipt_handle":"2:41:7"})"
              "\n");
    EXPECT_EQ(m.topic, "t");
    EXPECT_EQ(m.partition, 2);
    EXPECT_EQ(m.offset, 41);
    EXPECT_EQ(m.key, "k-1");
    EXPECT_EQ(m.payload, R"({"a": [1, 2]})");
    EXPECT_EQ(m.timestamp, 1783615560);
    EXPECT_EQ(m.receipt_handle, "2:41:7");
    EXPECT_FALSE(parse_consumed_message("").is_ok());
    EXPECT_EQ(parse_consumed_message("{\"offset\":\"x\"}").status().message().substr(0, 15),
              "parse message: ");
}

// Rule: a JSON payload prints verbatim after the header `[p<P> @<O>] key=<k> HH:MM:SS.000`,
// the clock read from Unix seconds (not milliseconds, Go's bug).
TEST(FormatMessage, PrintsHeaderAndJsonPayload) {
    const ConsumedMessage m = parse(
        R"({"topic":"t","partition":2,"offset":41,"key":"k-1","payload":{"a":1},"timestamp":1783615560})");
    EXPECT_EQ(format_message(m, MessageView::annotated, Style(Color::off), 0),
              "[p2 @41] key=k-1 16:46:00.000 {\"a\":1}\n");
    EXPECT_EQ(format_message(m, MessageView::annotated, Style(Color::off), 3600),
              "[p2 @41] key=k-1 17:46:00.000 {\"a\":1}\n");
    EXPECT_EQ(format_message(m, MessageView::annotated, Style(Color::on), 0),
              "\x1b[2m[p2 @41] key=k-1 16:46:00.000\x1b[0m {\"a\":1}\n");
    EXPECT_EQ(format_message(m, MessageView::raw, Style(Color::on), 0), "{\"a\":1}\n");
}

// Rule: without a key or timestamp the header has only the position.
TEST(FormatMessage, OmitsEmptyKeyAndZeroTimestamp) {
    const ConsumedMessage m = parse(R"({"topic":"t","partition":0,"offset":5,"payload":42})");
    EXPECT_EQ(format_message(m, MessageView::annotated, Style(Color::off), 0), "[p0 @5] 42\n");
}

// Rule: a text payload (a JSON string) is unquoted for people and kept quoted with --raw.
TEST(FormatMessage, UnquotesTextUnlessRaw) {
    const ConsumedMessage m = parse(
        R"({"topic":"t","partition":1,"offset":0,"payload":"hello \"you\"\n","timestamp":0})");
    EXPECT_EQ(format_message(m, MessageView::annotated, Style(Color::off), 0),
              "[p1 @0] hello \"you\"\n\n");
    EXPECT_EQ(format_message(m, MessageView::raw, Style(Color::off), 0),
              "\"hello \\\"you\\\"\\n\"\n");
}

// Rule: a base64 payload is decoded: the header gains "(binary, <n> bytes)" on its own line and
// a lowercase hex dump follows; --raw prints the decoded bytes.
TEST(FormatMessage, DecodesBinaryToHexDump) {
    const ConsumedMessage m = parse(
        R"({"topic":"t","partition":0,"offset":9,"key":"b","payload":"AP8Q","payload_encoding":"base64","timestamp":60})");
    EXPECT_EQ(format_message(m, MessageView::annotated, Style(Color::off), 0),
              "[p0 @9] key=b 00:01:00.000 (binary, 3 bytes)\n00ff10\n");
    EXPECT_EQ(format_message(m, MessageView::raw, Style(Color::off), 0),
              std::string("\x00\xff\x10\n", 4));
}

// Rule: a key sent with key_encoding base64 is decoded; one that is not UTF-8 prints in hex marked
// `(binary)`, a UTF-8 one as text; a bad encoding is a parse error, not a wrong key.
TEST(FormatMessage, BinaryKeysPrintInHex) {
    const ConsumedMessage binary = parse(
        R"({"topic":"t","partition":1,"offset":7,"key":"/wAQ","key_encoding":"base64","payload":{"a":1}})");
    EXPECT_EQ(binary.key, std::string("\xff\x00\x10", 3));
    EXPECT_EQ(format_message(binary, MessageView::annotated, Style(Color::off), 0),
              "[p1 @7] key=ff0010 (binary) {\"a\":1}\n");
    const ConsumedMessage text =
        parse(R"({"topic":"t","partition":1,"offset":8,"key":"user-42","payload":{"a":1}})");
    EXPECT_EQ(format_message(text, MessageView::annotated, Style(Color::off), 0),
              "[p1 @8] key=user-42 {\"a\":1}\n");
    EXPECT_FALSE(
        parse_consumed_message(R"({"offset":1,"key":"!!","key_encoding":"base64","payload":1})")
            .is_ok());
    EXPECT_FALSE(
        parse_consumed_message(R"({"offset":1,"key":"k","key_encoding":"hex","payload":1})")
            .is_ok());
}

// Rule: a base64 payload that does not decode is shown as received.
TEST(FormatMessage, KeepsUndecodableBase64) {
    const ConsumedMessage m = parse(
        R"({"topic":"t","partition":0,"offset":1,"payload":"!!","payload_encoding":"base64"})");
    EXPECT_EQ(format_message(m, MessageView::annotated, Style(Color::off), 0),
              "[p0 @1] (binary, 4 bytes)\n22212122\n");
}

}  // namespace
}  // namespace narad::cli
