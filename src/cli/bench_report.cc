#include "cli/bench_report.h"

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "cli/text.h"

namespace narad::cli::bench {
namespace {

constexpr int64_t kHundredMicros = 100'000;
constexpr std::string_view kDash = "\xe2\x80\x94";  // —

std::string latency(int64_t ns) { return format_duration(round_duration(ns, kHundredMicros)); }
std::string elapsed(int64_t ns) { return format_duration(round_duration(ns, kNanosPerMilli)); }

std::string errors_text(const std::map<std::string, uint64_t>& errors) {
    if (errors.empty()) return "none";
    std::string out;
    for (const auto& [reason, count] : errors) {
        if (!out.empty()) out += ' ';
        out += reason + "=" + std::to_string(count);
    }
    return out;
}

std::string format_2(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.2f", value);
    return buffer;
}

nlohmann::ordered_json latency_json(const LatencySummary& s) {
    return {{"count", s.count},
            {"p50_us", double(s.p50_ns) / 1e3},
            {"p95_us", double(s.p95_ns) / 1e3},
            {"p99_us", double(s.p99_ns) / 1e3},
            {"p999_us", double(s.p999_ns) / 1e3},
            {"max_us", double(s.max_ns) / 1e3},
            {"mean_us", s.mean_ns / 1e3}};
}

nlohmann::ordered_json op_json(const OpResult& r, uint64_t message_bytes) {
    nlohmann::ordered_json errors = nlohmann::ordered_json::object();
    for (const auto& [reason, count] : r.errors) errors[reason] = count;
    return {{"messages_ok", r.ok},
            {"messages_failed", r.failed},
            {"requests", r.requests},
            {"elapsed_ms", double(r.elapsed_ns) / 1e6},
            {"msgs_per_s", r.messages_per_second()},
            {"mb_per_s", r.megabytes_per_second(message_bytes)},
            {"latency", latency_json(r.latency)},
            {"errors", errors}};
}

}  // namespace

std::string format_start(const BenchConfig& config, uint64_t payload_bytes) {
    std::string out = "producing ";
    out += config.duration_ns > 0 ? "for " + format_duration(config.duration_ns)
                                  : std::to_string(config.count);
    out += " \xc3\x97 " + std::to_string(payload_bytes) + "B with " +
           std::to_string(config.connections) + " workers...\n";
    if (config.batch > 1 || config.rate > 0 || config.keys > 0) {
        out += "  batch=" + std::to_string(config.batch) +
               " rate=" + (config.rate > 0 ? format_float0(config.rate) + "/s" : "max") +
               " keys=" + std::to_string(config.keys) + "\n";
    }
    if (config.consume) {
        out += "consuming+acking " +
               (config.duration_ns > 0 ? std::string("everything produced")
                                       : std::to_string(config.count)) +
               " with " + std::to_string(config.consumers) + " workers...\n";
    }
    return out;
}

std::string format_result(const BenchReport& report) {
    const OpResult& p = report.produce;
    std::string out = "produce: " + std::to_string(p.ok) + " ok, " + std::to_string(p.failed) +
                      " failed in " + elapsed(p.elapsed_ns) + " " + std::string(kDash) + " " +
                      format_float0(p.messages_per_second()) +
                      " msg/s; latency p50=" + latency(p.latency.p50_ns) +
                      " p95=" + latency(p.latency.p95_ns) + " p99=" + latency(p.latency.p99_ns) +
                      "\n";
    out += "produce: " + format_2(p.megabytes_per_second(report.payload_bytes)) +
           " MB/s; latency p999=" + latency(p.latency.p999_ns) +
           " max=" + latency(p.latency.max_ns) + "; errors: " + errors_text(p.errors) + "\n";
    if (!report.consumed) return out;
    const OpResult& c = report.consume;
    out += "consume: " + std::to_string(c.ok) + " msgs in " + elapsed(c.elapsed_ns) + " (" +
           format_float0(c.messages_per_second()) + " msg/s)\n";
    std::map<std::string, uint64_t> errors = c.errors;
    for (const auto& [reason, count] : report.ack.errors) errors["ack " + reason] += count;
    out += "consume: " + std::to_string(report.ack.ok) + " acked, " +
           std::to_string(report.lapsed) + " lapsed (410), " + std::to_string(report.ack_failed) +
           " ack failures; ack latency p50=" + latency(report.ack.latency.p50_ns) +
           " p99=" + latency(report.ack.latency.p99_ns) + "; errors: " + errors_text(errors) + "\n";
    if (!report.timed_payload) {
        out += "end-to-end: n/a (payloads under 44 bytes carry no send time)\n";
    } else if (report.end_to_end.count == 0) {
        out += "end-to-end: n/a (none of this run's messages were consumed)\n";
    } else {
        const LatencySummary& e = report.end_to_end;
        out += "end-to-end: p50=" + latency(e.p50_ns) + " p95=" + latency(e.p95_ns) +
               " p99=" + latency(e.p99_ns) + " p999=" + latency(e.p999_ns) +
               " max=" + latency(e.max_ns) + " (" + std::to_string(e.count) + " msgs)\n";
    }
    return out;
}

std::string format_json(const BenchReport& report) {
    const BenchConfig& c = report.config;
    nlohmann::ordered_json doc;
    doc["topic"] = c.topic;
    doc["config"] = {{"count", c.duration_ns > 0 ? 0 : c.count},
                     {"duration_ms", double(c.duration_ns) / 1e6},
                     {"size", report.payload_bytes},
                     {"connections", c.connections},
                     {"consumers", c.consume ? c.consumers : 0},
                     {"batch", c.batch},
                     {"rate", c.rate},
                     {"keys", c.keys},
                     {"consume", c.consume}};
    doc["produce"] = op_json(report.produce, report.payload_bytes);
    if (report.consumed) {
        nlohmann::ordered_json consume = op_json(report.consume, report.payload_bytes);
        consume["received_this_run"] = report.received_run;
        consume["acked"] = report.ack.ok;
        consume["ack_lapsed"] = report.lapsed;
        consume["ack_failed"] = report.ack_failed;
        consume["ack_latency"] = latency_json(report.ack.latency);
        nlohmann::ordered_json ack_errors = nlohmann::ordered_json::object();
        for (const auto& [reason, count] : report.ack.errors) ack_errors[reason] = count;
        consume["ack_errors"] = ack_errors;
        doc["consume"] = consume;
        doc["end_to_end"] = report.timed_payload && report.end_to_end.count > 0
                                ? latency_json(report.end_to_end)
                                : nlohmann::ordered_json();
    }
    return doc.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace narad::cli::bench
