#include "api/params.h"

#include <charconv>
#include <limits>

#include "base/duration.h"
#include "queue/partition_queue.h"

namespace narad::api {

std::optional<bool> parse_go_bool(std::string_view text) {
    for (std::string_view yes : {"1", "t", "T", "TRUE", "true", "True"}) {
        if (text == yes) return true;
    }
    for (std::string_view no : {"0", "f", "F", "FALSE", "false", "False"}) {
        if (text == no) return false;
    }
    return std::nullopt;
}

Result<bool> bool_param(std::string_view name, std::optional<std::string_view> value) {
    if (!value) return false;
    if (auto parsed = parse_go_bool(*value)) return *parsed;
    return Status(Errc::invalid_argument, std::string(name) + " must be true or false, got \"" +
                                              std::string(*value) + "\"");
}
namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Splits a raw query into (name, value, has_equals) pieces, skipping empty pieces.
struct Piece {
    std::string_view name;
    std::string_view value;
};
std::vector<Piece> pieces(std::string_view query) {
    std::vector<Piece> out;
    size_t start = 0;
    while (start <= query.size()) {
        size_t end = query.find('&', start);
        if (end == std::string_view::npos) end = query.size();
        std::string_view piece = query.substr(start, end - start);
        if (!piece.empty()) {
            size_t eq = piece.find('=');
            if (eq == std::string_view::npos) {
                out.push_back({piece, {}});
            } else {
                out.push_back({piece.substr(0, eq), piece.substr(eq + 1)});
            }
        }
        start = end + 1;
    }
    return out;
}

Status escape_error(std::string_view prefix, const std::string& escape) {
    return Status(Errc::invalid_argument,
                  std::string(prefix) + "invalid URL escape \"" + escape + "\"");
}

// Decodes a name only when it could differ once decoded (it holds '%' or '+'), as Narad does.
Result<std::string> decode_name(std::string_view name, std::string_view error_prefix) {
    if (name.find_first_of("%+") == std::string_view::npos) return std::string(name);
    std::string bad;
    auto decoded = query_unescape(name, &bad);
    if (!decoded) return escape_error(error_prefix, bad);
    return *decoded;
}

// Go's strconv.Atoi error texts.
Result<int64_t> atoi(std::string_view text) {
    std::string_view digits = text;
    if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) digits.remove_prefix(1);
    bool syntax =
        !digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos;
    if (!syntax) {
        return Status(Errc::invalid_argument,
                      "strconv.Atoi: parsing \"" + std::string(text) + "\": invalid syntax");
    }
    int64_t value = 0;
    std::string_view parse_text = text[0] == '+' ? text.substr(1) : text;
    auto [ptr, error] =
        std::from_chars(parse_text.data(), parse_text.data() + parse_text.size(), value);
    if (error != std::errc() || ptr != parse_text.data() + parse_text.size()) {
        return Status(Errc::invalid_argument,
                      "strconv.Atoi: parsing \"" + std::string(text) + "\": value out of range");
    }
    return value;
}

}  // namespace

std::optional<std::string> query_unescape(std::string_view text, std::string* bad_escape) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '+') {
            out += ' ';
        } else if (c == '%') {
            int high = i + 1 < text.size() ? hex_value(text[i + 1]) : -1;
            int low = i + 2 < text.size() ? hex_value(text[i + 2]) : -1;
            if (high < 0 || low < 0) {
                if (bad_escape)
                    *bad_escape = std::string(text.substr(i, std::min<size_t>(3, text.size() - i)));
                return std::nullopt;
            }
            out += static_cast<char>(high * 16 + low);
            i += 2;
        } else {
            out += c;
        }
    }
    return out;
}

Result<ProduceParams> parse_produce_params(std::string_view raw_query) {
    ProduceParams params;
    bool seen_key = false;
    bool seen_partition = false;
    for (const Piece& piece : pieces(raw_query)) {
        NARAD_ASSIGN_OR_RETURN(std::string name,
                               decode_name(piece.name, "invalid query parameter: "));
        if (name == "key") {
            if (seen_key) return Status(Errc::invalid_argument, "duplicate key query parameter");
            seen_key = true;
            if (piece.value.empty()) continue;
            std::string bad;
            auto value = query_unescape(piece.value, &bad);
            if (!value) return escape_error("invalid key: ", bad);
            params.key = std::move(*value);
        } else if (name == "partition") {
            if (seen_partition) {
                return Status(Errc::invalid_argument, "duplicate partition query parameter");
            }
            seen_partition = true;
            if (piece.value.empty())
                return Status(Errc::invalid_argument, "invalid partition: empty");
            std::string bad;
            auto value = query_unescape(piece.value, &bad);
            if (!value) return escape_error("invalid partition: ", bad);
            auto number = atoi(*value);
            if (!number.is_ok()) {
                return Status(Errc::invalid_argument,
                              "invalid partition: " + number.status().message());
            }
            if (*number < 0)
                return Status(Errc::invalid_argument, "invalid partition: must be >= 0");
            if (*number > std::numeric_limits<uint32_t>::max()) {
                return Status(Errc::invalid_argument, "invalid argument: partition out of range");
            }
            params.partition = static_cast<uint32_t>(*number);
        }
    }
    return params;
}

Status check_produce_batch_query(std::string_view raw_query) {
    for (const Piece& piece : pieces(raw_query)) {
        std::string name = query_unescape(piece.name).value_or(std::string(piece.name));
        if (name == "key" || name == "partition") {
            return Status(
                Errc::invalid_argument,
                name + " is set per message in a batch produce, not as a query parameter");
        }
    }
    return Status::ok();
}

Result<AckAction> parse_extend(std::string_view value) {
    if (value.empty() || value == "false") return AckAction::ack;
    if (value == "true" || value == "1") return AckAction::extend;
    if (value == "0") return AckAction::nack;
    return Status(Errc::invalid_argument,
                  "invalid extend: want \"true\" (renew lease) or \"0\" (release for redelivery)");
}

namespace {

// Walks an ack's query: the first receipt_handle and the first extend (Narad keeps the first).
struct AckQuery {
    std::optional<std::string> handle;
    std::optional<std::string> extend;
    bool extend_invalid = false;
    std::optional<std::string> reason;
};

Result<AckQuery> scan_ack_query(std::string_view raw_query) {
    AckQuery query;
    for (const Piece& piece : pieces(raw_query)) {
        NARAD_ASSIGN_OR_RETURN(std::string name,
                               decode_name(piece.name, "invalid receipt_handle: "));
        if (name == "receipt_handle" && !query.handle) {
            std::string bad;
            auto value = query_unescape(piece.value, &bad);
            if (!value) return escape_error("invalid receipt_handle: ", bad);
            query.handle = std::move(*value);
        } else if (name == "extend" && !query.extend) {
            auto value = piece.value.find_first_of("%+") == std::string_view::npos
                             ? std::optional<std::string>(std::string(piece.value))
                             : query_unescape(piece.value);
            if (!value) query.extend_invalid = true;
            query.extend = value.value_or("");
        } else if (name == "reason" && !query.reason) {
            std::string bad;
            auto value = query_unescape(piece.value, &bad);
            if (!value) return escape_error("invalid reason: ", bad);
            query.reason = std::move(*value);
        }
    }
    return query;
}

Result<AckAction> ack_action(const AckQuery& query) {
    if (query.extend_invalid) return parse_extend("invalid").status();
    return parse_extend(query.extend.value_or(""));
}

}  // namespace

Result<AckParams> parse_ack_params(std::string_view raw_query) {
    NARAD_ASSIGN_OR_RETURN(AckQuery query, scan_ack_query(raw_query));
    if (!query.handle || query.handle->empty())
        return Status(Errc::invalid_argument, "receipt_handle required");
    AckParams params;
    params.receipt_handle = std::move(*query.handle);
    NARAD_ASSIGN_OR_RETURN(params.action, ack_action(query));
    if (query.reason && params.action != AckAction::nack) {
        return Status(Errc::invalid_argument, "reason requires extend=0 (a nack)");
    }
    if (query.reason && query.reason->size() > queue::kMaxNackReasonBytes) {
        return Status(Errc::invalid_argument, "reason is longer than 256 bytes");
    }
    params.reason = query.reason.value_or("");
    return params;
}

Result<AckAction> parse_ack_extend(std::string_view raw_query) {
    NARAD_ASSIGN_OR_RETURN(AckQuery query, scan_ack_query(raw_query));
    if (query.reason) {
        return Status(Errc::invalid_argument, "reason is taken by a single nack only");
    }
    return ack_action(query);
}

std::string format_receipt_handle(const ReceiptHandle& handle) {
    return std::to_string(handle.partition.value()) + ":" + std::to_string(handle.offset.value()) +
           ":" + std::to_string(handle.lease_id.value());
}

std::optional<ReceiptHandle> parse_receipt_handle(std::string_view text) {
    uint64_t parts[3];
    size_t start = 0;
    for (int i = 0; i < 3; ++i) {
        size_t end = i < 2 ? text.find(':', start) : text.size();
        if (end == std::string_view::npos) return std::nullopt;
        std::string_view digits = text.substr(start, end - start);
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) {
            return std::nullopt;
        }
        auto [ptr, error] = std::from_chars(digits.data(), digits.data() + digits.size(), parts[i]);
        if (error != std::errc()) return std::nullopt;
        start = end + 1;
    }
    if (parts[0] > std::numeric_limits<uint32_t>::max() ||
        parts[1] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) || parts[2] == 0) {
        return std::nullopt;
    }
    return ReceiptHandle{PartitionId(static_cast<uint32_t>(parts[0])), Offset(parts[1]),
                         LeaseId(parts[2])};
}

Result<ConsumeParams> parse_consume_params(
    const std::function<std::optional<std::string_view>(std::string_view)>& first,
    Millis max_wait) {
    ConsumeParams params;
    if (auto value = first("partition"); value && !value->empty()) {
        auto number = atoi(*value);
        if (!number.is_ok()) {
            return Status(Errc::invalid_argument,
                          "invalid partition: " + number.status().message());
        }
        if (*number < 0 || *number > std::numeric_limits<uint32_t>::max()) {
            return Status(Errc::invalid_argument, "invalid argument: partition out of range");
        }
        params.partition = static_cast<uint32_t>(*number);
    }
    if (auto value = first("offset"); value && !value->empty()) {
        auto number = atoi(*value);
        if (!number.is_ok()) {
            std::string message = number.status().message();
            message.replace(0, std::string_view("strconv.Atoi").size(), "strconv.ParseInt");
            return Status(Errc::invalid_argument, "invalid offset: " + message);
        }
        if (*number < 0) return Status(Errc::invalid_argument, "invalid offset: must be >= 0");
        params.offset = static_cast<uint64_t>(*number);
    }
    if (auto value = first("wait"); value && !value->empty()) {
        auto parsed = parse_duration(*value);
        if (!parsed.is_ok()) {
            return Status(Errc::invalid_argument, "invalid wait: " + parsed.status().message());
        }
        Millis wait = std::chrono::duration_cast<Millis>(*parsed);
        if (wait.count() < 0) wait = Millis(0);
        Millis ceiling = max_wait.count() == 0 ? Millis(30'000) : max_wait;
        params.wait = std::min(wait, ceiling);
        params.wait_clamped = wait > ceiling;
    }
    if (auto value = first("max"); value && !value->empty()) {
        auto number = atoi(*value);
        if (!number.is_ok() || *number < 1 || *number > kMaxConsumeBatch) {
            return Status(Errc::invalid_argument, "invalid max: want an integer from 1 to " +
                                                      std::to_string(kMaxConsumeBatch));
        }
        params.max = static_cast<uint32_t>(*number);
        params.batch = true;
    }
    return params;
}

}  // namespace narad::api
