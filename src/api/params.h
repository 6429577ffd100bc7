// The query parameters of the message routes, parsed exactly as Narad does: produce and ack walk
// the raw query string themselves (produce refuses duplicates, ack keeps the first), consume uses
// first-value-wins. Also the receipt handle ("<partition>:<offset>:<lease>"), and the plain
// unsigned numbers of the node-to-node routes. Pure functions.
#pragma once

#include <charconv>
#include <functional>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/ids.h"
#include "base/status.h"

namespace narad::api {

// A whole decimal number of type T (no sign, no spaces, in range); nullopt otherwise.
template <typename T>
std::optional<T> parse_unsigned(std::string_view text) {
    T value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

// Go's strconv.ParseBool, as Narad reads its boolean parameters (1 t T TRUE true True, and the
// same for false); nullopt otherwise.
std::optional<bool> parse_go_bool(std::string_view text);
// A boolean query parameter: false when absent (`value` is the parameter's text, if any);
// invalid_argument `<name> must be true or false, got "<text>"` when it does not parse.
Result<bool> bool_param(std::string_view name, std::optional<std::string_view> value);

struct ProduceParams {
    std::optional<std::string> key;
    std::optional<uint32_t> partition;
};
Result<ProduceParams> parse_produce_params(std::string_view raw_query);
// Refuses the single produce's `key` and `partition` on the batch route, where each message
// carries its own (one given for the whole batch would otherwise be silently ignored).
Status check_produce_batch_query(std::string_view raw_query);

enum class AckAction { ack, extend, nack };
struct AckParams {
    std::string receipt_handle;
    AckAction action = AckAction::ack;
    std::string reason;  // ours: a nack's reason, kept with the message's dead letter
};
Result<AckParams> parse_ack_params(std::string_view raw_query);
// Only the `extend` of an ack's query (a batch ack's handles are in its body).
Result<AckAction> parse_ack_extend(std::string_view raw_query);
// The meaning of an `extend` value: "", "false" ack; "true", "1" extend; "0" nack.
Result<AckAction> parse_extend(std::string_view value);

struct ReceiptHandle {
    PartitionId partition;
    Offset offset;
    LeaseId lease_id;
};
std::string format_receipt_handle(const ReceiptHandle& handle);
// Strict: three runs of ASCII digits separated by ':'; lease >= 1.
std::optional<ReceiptHandle> parse_receipt_handle(std::string_view text);

struct ConsumeParams {
    std::optional<uint32_t> partition;
    std::optional<uint64_t> offset;
    Millis wait{0};
    uint32_t max = 1;
    bool batch = false;         // `max` was given: answer {"messages":[...]}
    bool wait_clamped = false;  // `wait` asked for more than the ceiling, which it got instead
};
inline constexpr uint32_t kMaxConsumeBatch = 100;
// `first` gives the first value of a parameter; `max_wait` clamps `wait` (0 means 30 s, as Narad).
Result<ConsumeParams> parse_consume_params(
    const std::function<std::optional<std::string_view>(std::string_view)>& first, Millis max_wait);

// Go's url.QueryUnescape ('+' is a space); nullopt with the offending escape in `bad_escape`.
std::optional<std::string> query_unescape(std::string_view text, std::string* bad_escape = nullptr);

}  // namespace narad::api
