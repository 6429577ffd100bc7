// A consumed message as the CLI sees it (the single consume response), and how sub, peek and
// replay print it: a dim `[p<P> @<offset>] key=<k> HH:MM:SS.mmm` header (a key that is not
// UTF-8, which the server sends base64 with `key_encoding`, shown in hex marked `(binary)`) and the
// payload (JSON strings unquoted, base64 payloads decoded and shown as `(binary, <n> bytes)` plus a
// hex dump), or with --raw the payload bytes alone. Pure; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cli/output.h"

namespace narad::cli {

struct ConsumedMessage {
    std::string topic;
    int64_t partition = 0;
    int64_t offset = 0;
    std::string key;      // the key's bytes (decoded when the server sent `key_encoding`)
    std::string payload;  // the raw JSON text of "payload", verbatim
    std::string payload_encoding;
    int64_t timestamp = 0;  // Unix seconds, as the server sends it
    std::string receipt_handle;
};

// Parses one consume response body (`parse message: <why>` on failure).
Result<ConsumedMessage> parse_consumed_message(std::string_view body);

// How `narad sub` prints a message: with its partition, offset, key and clock, text unquoted
// and binary as hex; or (--raw) the payload alone, as received.
enum class MessageView { annotated, raw };

// The text printed for one message, ending in '\n'. `time_zone_offset_s` is added to the
// timestamp before it is shown as a clock (the local zone's offset; tests pass 0).
std::string format_message(const ConsumedMessage& message, MessageView view, const Style& style,
                           int64_t time_zone_offset_s);

// The local time zone's offset from UTC at `unix_seconds`.
int64_t local_utc_offset_s(int64_t unix_seconds);

}  // namespace narad::cli
