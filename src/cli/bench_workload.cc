#include "cli/bench_workload.h"

#include <algorithm>
#include <thread>

#include "base/json_text.h"
#include "cli/api.h"
#include "cli/calls.h"
#include "cli/json_text.h"
#include "cli/text.h"

namespace narad::cli::bench {
namespace {

void sleep_until_mono(int64_t due_ns) {
    const int64_t now = mono_ns();
    if (due_ns > now) std::this_thread::sleep_for(std::chrono::nanoseconds(due_ns - now));
}

bool is_success(int status) { return status >= 200 && status < 300; }

// The Status `send` would have made of an ack answer, so AckRetryPolicy decides as in `sub`.
Status ack_status(int status) {
    if (status == 0) return Status(Errc::peer_error, "transport: failed");
    if (status < 400) return Status::ok();
    return Status(errc_for_http_status(status), "http " + std::to_string(status) + ":");
}

std::string raw_string(std::string_view raw) { return decode_json_string(raw).value_or(""); }

std::optional<Delivery> parse_delivery(std::string_view object) {
    auto members = object_members(object);
    if (!members) return std::nullopt;
    Delivery delivery;
    if (auto payload = find_member(*members, "payload")) delivery.payload = std::string(*payload);
    if (auto handle = find_member(*members, "receipt_handle")) {
        delivery.receipt_handle = raw_string(*handle);
    }
    return delivery;
}

}  // namespace

std::string message_key(uint64_t index, int64_t keys) {
    if (keys <= 0) return "";
    std::string key = "k";
    key += std::to_string(index % uint64_t(keys));
    return key;
}

std::string produce_target(std::string_view topic, std::string_view key, int64_t partition) {
    std::string target = topic_path(topic) + "/produce";
    if (!key.empty()) target += "?key=" + query_escape(key);
    if (partition >= 0)
        target += (key.empty() ? "?partition=" : "&partition=") + std::to_string(partition);
    return target;
}

std::string produce_batch_body(const std::vector<std::string>& payloads,
                               const std::vector<std::string>& keys, int64_t partition) {
    const std::string pin =
        partition >= 0 ? ",\"partition\":" + std::to_string(partition) : std::string();
    std::string body = "{\"messages\":[";
    for (size_t i = 0; i < payloads.size(); ++i) {
        if (i > 0) body += ',';
        body += "{\"payload\":" + payloads[i];
        if (i < keys.size() && !keys[i].empty()) body += ",\"key\":" + json_string(keys[i]);
        body += pin;
        body += '}';
    }
    body += "]}";
    return body;
}

std::optional<uint64_t> parse_accepted(std::string_view body) {
    auto members = object_members(body);
    if (!members) return std::nullopt;
    auto raw = find_member(*members, "accepted");
    if (!raw || raw->empty()) return std::nullopt;
    uint64_t value = 0;
    for (char c : *raw) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + uint64_t(c - '0');
    }
    return value;
}

std::string consume_target(std::string_view topic, uint32_t batch, std::string_view wait) {
    std::string target = topic_path(topic) + "/consume?wait=" + std::string(wait);
    // A batch consume takes at most 100 (Narad 3.1), whatever the produce batch size.
    if (batch > 1) target += "&max=" + std::to_string(std::min<uint32_t>(batch, 100));
    return target;
}

std::optional<std::vector<Delivery>> parse_deliveries(std::string_view body, Shape shape) {
    std::vector<Delivery> deliveries;
    if (shape == Shape::single) {
        auto delivery = parse_delivery(body);
        if (!delivery) return std::nullopt;
        deliveries.push_back(std::move(*delivery));
        return deliveries;
    }
    auto members = object_members(body);
    if (!members) return std::nullopt;
    auto messages = find_member(*members, "messages");
    if (!messages) return std::nullopt;
    auto elements = array_elements(*messages);
    if (!elements) return std::nullopt;
    for (std::string_view element : *elements) {
        auto delivery = parse_delivery(element);
        if (!delivery) return std::nullopt;
        deliveries.push_back(std::move(*delivery));
    }
    return deliveries;
}

std::string ack_target(std::string_view topic, std::string_view receipt_handle) {
    return topic_path(topic) + "/ack?receipt_handle=" + query_escape(receipt_handle);
}

std::string ack_batch_target(std::string_view topic) { return topic_path(topic) + "/ack/batch"; }

std::string ack_batch_body(const std::vector<std::string>& handles) {
    std::string body = "{\"receipt_handles\":[";
    for (size_t i = 0; i < handles.size(); ++i) {
        if (i > 0) body += ',';
        body += json_string(handles[i]);
    }
    body += "]}";
    return body;
}

std::optional<std::vector<AckResult>> parse_ack_results(std::string_view body) {
    auto members = object_members(body);
    if (!members) return std::nullopt;
    auto results = find_member(*members, "results");
    if (!results) return std::nullopt;
    auto elements = array_elements(*results);
    if (!elements) return std::nullopt;
    std::vector<AckResult> out;
    for (std::string_view element : *elements) {
        auto fields = object_members(element);
        if (!fields) return std::nullopt;
        AckResult result;
        if (auto handle = find_member(*fields, "receipt_handle")) {
            result.receipt_handle = raw_string(*handle);
        }
        if (auto status = find_member(*fields, "status")) {
            for (char c : *status) {
                if (c < '0' || c > '9') return std::nullopt;
                result.status = result.status * 10 + (c - '0');
            }
        }
        out.push_back(std::move(result));
    }
    return out;
}

bool should_stop_consuming(const DrainState& state) {
    if (!state.producers_done) return false;
    if (state.consumed_run >= state.produced_ok) return true;
    if (state.empty_polls >= 2) return true;
    return state.drain_timeout_ns > 0 &&
           state.now_ns - state.producers_done_at_ns >= state.drain_timeout_ns;
}

// ---- ProduceWorkload ----

ProduceWorkload::ProduceWorkload(const BenchConfig& config, const BenchPayload& payload,
                                 int64_t start_ns)
    : config_(config),
      payload_(payload),
      start_ns_(start_ns),
      pacer_(config.rate, config.batch),
      total_requests_(config.duration_ns > 0 || config.count <= 0
                          ? 0
                          : (uint64_t(config.count) + config.batch - 1) / config.batch) {}

std::optional<net::LoadRequest> ProduceWorkload::next(uint32_t /*connection*/) {
    const bool timed_run = config_.duration_ns > 0;
    const uint64_t index = next_request_.fetch_add(1);
    uint64_t messages = config_.batch;
    if (!timed_run) {
        if (index >= total_requests_) return std::nullopt;
        messages =
            std::min<uint64_t>(config_.batch, uint64_t(config_.count) - index * config_.batch);
    }
    const int64_t end_ns = start_ns_ + config_.duration_ns;
    if (pacer_.limited()) {
        const int64_t due = start_ns_ + pacer_.due_offset_ns(index);
        if (timed_run && due >= end_ns) return std::nullopt;
        sleep_until_mono(due);
    }
    if (timed_run && mono_ns() >= end_ns) return std::nullopt;

    net::LoadRequest request;
    request.method = "POST";
    const uint64_t first_message = index * config_.batch;
    const int64_t sent_wall_ns = wall_ns();
    const Shape shape = shape_of(config_.batch);
    if (shape == Shape::single) {
        request.target = produce_target(config_.topic, message_key(first_message, config_.keys),
                                        config_.partition);
        request.body = payload_.make(sent_wall_ns);
        request.content_type = "application/octet-stream";
    } else {
        std::vector<std::string> payloads;
        std::vector<std::string> keys;
        payloads.reserve(messages);
        for (uint64_t i = 0; i < messages; ++i) {
            payloads.push_back(payload_.make(sent_wall_ns));
            keys.push_back(message_key(first_message + i, config_.keys));
        }
        request.target = topic_path(config_.topic) + "/produce/batch";
        request.body = produce_batch_body(payloads, keys, config_.partition);
        request.content_type = "application/json";
    }
    const int64_t sent_ns = mono_ns();
    request.on_response = [this, sent_ns, messages, shape](const Result<net::HttpResponse>& r) {
        const int64_t now = mono_ns();
        if (!r.is_ok()) {
            stats_.failure(messages, "transport");
            return;
        }
        if (!is_success(r->status)) {
            stats_.failure(messages, std::to_string(r->status));
            return;
        }
        uint64_t accepted = messages;
        if (shape == Shape::batch)
            accepted = std::min(parse_accepted(r->body).value_or(messages), messages);
        stats_.success(accepted, now - sent_ns, now);
        if (accepted < messages) stats_.failure(messages - accepted, "not accepted");
    };
    return request;
}

// ---- ConsumeWorkload ----

ConsumeWorkload::ConsumeWorkload(const BenchConfig& config, const BenchPayload& payload,
                                 uint32_t connections)
    : config_(config), payload_(payload), connections_(connections) {}

void ConsumeWorkload::producers_finished(uint64_t produced_ok) {
    produced_ok_ = produced_ok;
    producers_done_at_ns_ = mono_ns();
    producers_done_ = true;
}

std::optional<net::LoadRequest> ConsumeWorkload::next(uint32_t connection) {
    Connection& state = connections_.at(connection);
    if (!state.acks.empty()) {
        PendingAck ack = std::move(state.acks.front());
        state.acks.pop_front();
        sleep_until_mono(ack.not_before_ns);  // only after a failed ack: the retry backoff
        return ack_request(state, std::move(ack));
    }
    DrainState drain;
    drain.producers_done = producers_done_.load();
    drain.produced_ok = produced_ok_.load();
    drain.consumed_run = payload_.timed() ? received_run_.load() : received_.load();
    drain.empty_polls = state.empty_polls;
    drain.now_ns = mono_ns();
    drain.producers_done_at_ns = producers_done_at_ns_.load();
    drain.drain_timeout_ns = config_.drain_timeout_ns;
    if (should_stop_consuming(drain)) return std::nullopt;
    return consume_request(state);
}

net::LoadRequest ConsumeWorkload::consume_request(Connection& state) {
    net::LoadRequest request;
    request.method = "GET";
    request.target = consume_target(config_.topic, config_.batch, config_.consume_wait);
    request.content_type = "";
    const int64_t sent_ns = mono_ns();
    const Shape shape = shape_of(config_.batch);
    request.on_response = [this, &state, sent_ns, shape](const Result<net::HttpResponse>& r) {
        const int64_t now = mono_ns();
        if (!r.is_ok()) {
            consume_stats_.failure(0, "transport");
            return;
        }
        if (r->status == 204) {
            consume_stats_.empty(now - sent_ns);
            if (producers_done_.load()) ++state.empty_polls;
            return;
        }
        if (!is_success(r->status)) {
            consume_stats_.failure(0, std::to_string(r->status));
            return;
        }
        auto deliveries = parse_deliveries(r->body, shape);
        if (!deliveries) {
            consume_stats_.failure(0, "unparsable");
            return;
        }
        state.empty_polls = 0;
        const int64_t wall = wall_ns();
        PendingAck ack;
        for (Delivery& delivery : *deliveries) {
            ++received_;
            if (auto sent = payload_.sent_at(delivery.payload)) {
                ++received_run_;
                end_to_end_.record(wall - *sent);
            }
            if (!delivery.receipt_handle.empty()) {
                ack.handles.push_back(std::move(delivery.receipt_handle));
            }
        }
        consume_stats_.success(deliveries->size(), now - sent_ns, now);
        if (!ack.handles.empty()) state.acks.push_back(std::move(ack));
    };
    return request;
}

net::LoadRequest ConsumeWorkload::ack_request(Connection& state, PendingAck ack) {
    net::LoadRequest request;
    request.method = "POST";
    const Shape shape = shape_of(config_.batch);
    if (shape == Shape::single) {
        request.target = ack_target(config_.topic, ack.handles.front());
        request.content_type = "";
    } else {
        request.target = ack_batch_target(config_.topic);
        request.body = ack_batch_body(ack.handles);
        request.content_type = "application/json";
    }
    const int64_t sent_ns = mono_ns();
    request.on_response = [this, &state, sent_ns, shape,
                           ack = std::move(ack)](const Result<net::HttpResponse>& r) {
        const size_t n = ack.handles.size();
        std::vector<int> statuses(n, 0);
        std::vector<std::string> reasons(n, "transport");
        if (r.is_ok()) {
            if (shape == Shape::batch && r->status == 200) {
                auto results = parse_ack_results(r->body);
                for (size_t i = 0; i < n; ++i) {
                    reasons[i] = "unparsable";
                    if (!results) continue;
                    for (const AckResult& result : *results) {
                        if (result.receipt_handle == ack.handles[i]) {
                            statuses[i] = result.status;
                            reasons[i] = std::to_string(result.status);
                        }
                    }
                }
            } else {
                for (size_t i = 0; i < n; ++i) {
                    statuses[i] = r->status;
                    reasons[i] = std::to_string(r->status);
                }
            }
        }
        const int64_t now = mono_ns();
        uint64_t acked = 0;
        for (int status : statuses) acked += is_success(status) ? 1 : 0;
        if (acked > 0) ack_stats_.success(acked, now - sent_ns, now);
        settle(state, ack, statuses, reasons);
    };
    return request;
}

void ConsumeWorkload::settle(Connection& state, PendingAck ack, const std::vector<int>& statuses,
                             const std::vector<std::string>& reasons) {
    PendingAck retry;
    retry.attempt = ack.attempt + 1;
    retry.not_before_ns =
        mono_ns() + std::chrono::nanoseconds(config_.ack_policy.backoff(ack.attempt)).count();
    for (size_t i = 0; i < ack.handles.size(); ++i) {
        switch (config_.ack_policy.after(ack.attempt, ack_status(statuses[i]))) {
            case AckRetryPolicy::Next::done:
                break;
            case AckRetryPolicy::Next::lapsed:
                ++lapsed_;
                ack_stats_.failure(1, "410");
                break;
            case AckRetryPolicy::Next::retry:
                retry.handles.push_back(ack.handles[i]);
                break;
            case AckRetryPolicy::Next::give_up:
                ++ack_failed_;
                ack_stats_.failure(1, reasons[i]);
                break;
        }
    }
    if (!retry.handles.empty()) state.acks.push_back(std::move(retry));
}

}  // namespace narad::cli::bench
