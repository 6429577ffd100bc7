#include "cli/message.h"

#include <ctime>
#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/json_text.h"
#include "base/utf8.h"
#include "cli/json_text.h"
#include "cli/text.h"

namespace narad::cli {
namespace {

Status parse_error(std::string_view why) {
    return Status(Errc::invalid_argument, "parse message: " + std::string(why));
}

// The payload bytes a person should see, and whether it was base64 binary.
std::string decode_payload(const ConsumedMessage& message, MessageView view) {
    const std::string& payload = message.payload;
    if (message.payload_encoding == "base64") {
        if (auto quoted = decode_json_string(payload)) {
            if (auto decoded = base64_decode(*quoted)) return *decoded;
        }
        return payload;
    }
    if (!payload.empty() && payload.front() == '"' && view == MessageView::annotated) {
        if (auto text = decode_json_string(payload)) return *text;
    }
    return payload;
}

std::string clock_text(int64_t unix_seconds, int64_t offset_s) {
    // The server's timestamp is Unix seconds (the Go CLI misread it as milliseconds, showing a
    // 1970 clock); milliseconds are therefore always .000.
    const int64_t local = unix_seconds + offset_s;
    int64_t seconds_of_day = local % 86'400;
    if (seconds_of_day < 0) seconds_of_day += 86'400;
    char buffer[16];
    std::snprintf(buffer, sizeof(buffer), "%02d:%02d:%02d.000", int(seconds_of_day / 3600),
                  int(seconds_of_day / 60 % 60), int(seconds_of_day % 60));
    return buffer;
}

}  // namespace

Result<ConsumedMessage> parse_consumed_message(std::string_view body) {
    auto members = object_members(body);
    if (!members) return parse_error("not a JSON object");
    ConsumedMessage message;
    std::string key_encoding;
    try {
        for (const auto& [name, raw] : *members) {
            if (name == "payload") {
                message.payload = std::string(raw);
                continue;
            }
            const nlohmann::json value = nlohmann::json::parse(raw);
            if (value.is_null()) continue;
            if (name == "topic") message.topic = value.get<std::string>();
            if (name == "partition") message.partition = value.get<int64_t>();
            if (name == "offset") message.offset = value.get<int64_t>();
            if (name == "key") message.key = value.get<std::string>();
            if (name == "key_encoding") key_encoding = value.get<std::string>();
            if (name == "payload_encoding") message.payload_encoding = value.get<std::string>();
            if (name == "timestamp") message.timestamp = value.get<int64_t>();
            if (name == "receipt_handle") message.receipt_handle = value.get<std::string>();
        }
    } catch (const nlohmann::json::exception& e) {
        return parse_error(e.what());
    }
    if (key_encoding == "base64") {
        auto decoded = base64_decode(message.key);
        if (!decoded) return parse_error("key: not valid base64");
        message.key = std::move(*decoded);
    } else if (!key_encoding.empty()) {
        return parse_error("unknown key_encoding " + go_quote(key_encoding));
    }
    return message;
}

std::string format_message(const ConsumedMessage& message, MessageView view, const Style& style,
                           int64_t time_zone_offset_s) {
    const std::string payload = decode_payload(message, view);
    if (view == MessageView::raw) return payload + "\n";
    std::string meta =
        "[p" + std::to_string(message.partition) + " @" + std::to_string(message.offset) + "]";
    if (!message.key.empty()) {
        meta += " key=" +
                (is_valid_utf8(message.key) ? message.key : hex_encode(message.key) + " (binary)");
    }
    if (message.timestamp > 0) {
        meta += ' ';
        meta += clock_text(message.timestamp, time_zone_offset_s);
    }
    if (message.payload_encoding == "base64") {
        meta += " (binary, " + std::to_string(payload.size()) + " bytes)";
        return style.dim(meta) + "\n" + hex_encode(payload) + "\n";
    }
    return style.dim(meta) + " " + payload + "\n";
}

int64_t local_utc_offset_s(int64_t unix_seconds) {
    const std::time_t time = std::time_t(unix_seconds);
    std::tm local{};
    if (localtime_r(&time, &local) == nullptr) return 0;
    return int64_t(local.tm_gmtoff);
}

}  // namespace narad::cli
