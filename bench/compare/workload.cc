#include "compare/workload.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace narad::compare {
namespace {

constexpr uint64_t kWorkloadFileBytesMax = 1 << 20;

const std::set<std::string, std::less<>> kKnownKeys = {
    // OMB's keys
    "name", "topics", "partitionsPerTopic", "messageSize", "payloadFile", "subscriptionsPerTopic",
    "consumerPerSubscription", "producersPerTopic", "producerRate", "consumerBacklogSizeGB",
    "testDurationMinutes",
    // ours
    "testDurationSeconds", "batchSize", "count", "ratePercentOfMax", "rateReference", "warmupCount",
    "timeoutSeconds", "description"};

Status invalid(std::string_view key, std::string_view why) {
    return Status(Errc::invalid_argument, std::string(key) + ": " + std::string(why));
}

Result<std::string> scalar(const YAML::Node& node, std::string_view key) {
    if (!node.IsScalar()) return invalid(key, "must be a scalar");
    return node.Scalar();
}

Result<double> number(const YAML::Node& node, std::string_view key) {
    NARAD_ASSIGN_OR_RETURN(std::string text, scalar(node, key));
    double value = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end || !std::isfinite(value)) {
        return invalid(key, "\"" + text + "\" is not a number");
    }
    return value;
}

Result<uint64_t> integer(const YAML::Node& node, std::string_view key, uint64_t low,
                         uint64_t high) {
    NARAD_ASSIGN_OR_RETURN(std::string text, scalar(node, key));
    uint64_t value = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end) {
        return invalid(key, "\"" + text + "\" is not a whole number");
    }
    if (value < low || value > high) {
        return invalid(key,
                       "must be between " + std::to_string(low) + " and " + std::to_string(high));
    }
    return value;
}

Status check_consistency(const Workload& w) {
    if (w.name.empty()) return invalid("name", "required");
    if (w.count == 0 && w.duration_ns == 0) {
        return Status(Errc::invalid_argument,
                      "one of count, testDurationSeconds or testDurationMinutes is required");
    }
    if (w.count > 0 && w.duration_ns > 0) {
        return Status(Errc::invalid_argument,
                      "count and a test duration exclude each other: give one");
    }
    if (w.rate_percent_of_max > 0 && w.producer_rate > 0) {
        return Status(Errc::invalid_argument,
                      "producerRate and ratePercentOfMax exclude each other: give one");
    }
    if (w.rate_percent_of_max > 0 && w.rate_reference.empty()) {
        return invalid("ratePercentOfMax", "needs rateReference (the max-throughput workload)");
    }
    if (!w.rate_reference.empty() && w.rate_percent_of_max == 0) {
        return invalid("rateReference", "only meaningful with ratePercentOfMax");
    }
    if (w.rate_reference == w.name && !w.name.empty()) {
        return invalid("rateReference", "cannot refer to the workload itself");
    }
    return Status::ok();
}

Status apply(Workload& w, const std::string& key, const YAML::Node& value,
             const std::string& base_dir, bool& minutes_seen, bool& seconds_seen) {
    if (key == "name") {
        NARAD_ASSIGN_OR_RETURN(w.name, scalar(value, key));
        if (w.name.size() > 100) return invalid(key, "at most 100 characters");
    } else if (key == "description") {
        NARAD_ASSIGN_OR_RETURN(w.description, scalar(value, key));
    } else if (key == "topics") {
        NARAD_ASSIGN_OR_RETURN(uint64_t n, integer(value, key, 1, 1));
        w.topics = uint32_t(n);
    } else if (key == "subscriptionsPerTopic") {
        NARAD_ASSIGN_OR_RETURN(uint64_t n, integer(value, key, 1, 1));
        w.subscriptions = uint32_t(n);
    } else if (key == "partitionsPerTopic") {
        NARAD_ASSIGN_OR_RETURN(uint64_t n, integer(value, key, 1, kPartitionsMax));
        w.partitions = uint32_t(n);
    } else if (key == "messageSize") {
        NARAD_ASSIGN_OR_RETURN(w.message_bytes,
                               integer(value, key, kMessageBytesMin, kMessageBytesMax));
        w.message_bytes_set = true;
    } else if (key == "producersPerTopic") {
        NARAD_ASSIGN_OR_RETURN(uint64_t n, integer(value, key, 1, kClientsMax));
        w.producers = uint32_t(n);
    } else if (key == "consumerPerSubscription") {
        NARAD_ASSIGN_OR_RETURN(uint64_t n, integer(value, key, 1, kClientsMax));
        w.consumers = uint32_t(n);
    } else if (key == "batchSize") {
        NARAD_ASSIGN_OR_RETURN(uint64_t n, integer(value, key, 1, kBatchMax));
        w.batch = uint32_t(n);
    } else if (key == "producerRate") {
        NARAD_ASSIGN_OR_RETURN(std::string text, scalar(value, key));
        if (text == "max") {
            w.producer_rate = 0;
        } else {
            NARAD_ASSIGN_OR_RETURN(w.producer_rate, number(value, key));
            if (w.producer_rate < 0) return invalid(key, "must be \"max\", 0 (max) or positive");
        }
    } else if (key == "ratePercentOfMax") {
        NARAD_ASSIGN_OR_RETURN(w.rate_percent_of_max, number(value, key));
        if (w.rate_percent_of_max <= 0 || w.rate_percent_of_max > 100) {
            return invalid(key, "must be in (0, 100]");
        }
    } else if (key == "rateReference") {
        NARAD_ASSIGN_OR_RETURN(w.rate_reference, scalar(value, key));
    } else if (key == "count") {
        NARAD_ASSIGN_OR_RETURN(w.count, integer(value, key, 1, kCountMax));
    } else if (key == "testDurationSeconds" || key == "testDurationMinutes") {
        const bool minutes = key == "testDurationMinutes";
        (minutes ? minutes_seen : seconds_seen) = true;
        if (minutes_seen && seconds_seen) {
            return invalid(key, "give testDurationSeconds or testDurationMinutes, not both");
        }
        NARAD_ASSIGN_OR_RETURN(double amount, number(value, key));
        const double seconds = minutes ? amount * 60 : amount;
        if (seconds <= 0 || seconds > double(kDurationSecondsMax)) {
            return invalid(key, "must be more than 0 and at most " +
                                    std::to_string(kDurationSecondsMax) + " s");
        }
        w.duration_ns = int64_t(std::llround(seconds * 1e9));
    } else if (key == "warmupCount") {
        NARAD_ASSIGN_OR_RETURN(w.warmup_count, integer(value, key, 0, kWarmupCountMax));
    } else if (key == "timeoutSeconds") {
        NARAD_ASSIGN_OR_RETURN(uint64_t n, integer(value, key, 1, kTimeoutSecondsMax));
        w.timeout_ns = int64_t(n) * 1'000'000'000;
    } else if (key == "consumerBacklogSizeGB") {
        NARAD_ASSIGN_OR_RETURN(uint64_t n, integer(value, key, 0, 0));
        (void)n;  // backlog-drain tests are not part of this harness
    } else if (key == "payloadFile") {
        NARAD_ASSIGN_OR_RETURN(std::string path, scalar(value, key));
        if (path.empty()) return invalid(key, "must not be empty");
        const std::filesystem::path file(path);
        w.payload_file = file.is_relative() && !base_dir.empty()
                             ? (std::filesystem::path(base_dir) / file).lexically_normal().string()
                             : path;
    } else {
        return invalid(key, "unknown key");
    }
    return Status::ok();
}

}  // namespace

Result<Workload> parse_workload(std::string_view yaml_text, const std::string& base_dir) {
    YAML::Node root;
    try {
        root = YAML::Load(std::string(yaml_text));
    } catch (const YAML::Exception& e) {
        return Status(Errc::invalid_argument, std::string("invalid YAML: ") + e.what());
    }
    if (!root.IsMap()) return Status(Errc::invalid_argument, "a workload must be a YAML mapping");
    Workload workload;
    bool minutes_seen = false;
    bool seconds_seen = false;
    std::set<std::string> seen;
    try {
        for (const auto& entry : root) {
            if (!entry.first.IsScalar()) {
                return Status(Errc::invalid_argument, "keys must be scalars");
            }
            const std::string key = entry.first.Scalar();
            if (!seen.insert(key).second) return invalid(key, "given twice");
            if (!kKnownKeys.contains(key)) return invalid(key, "unknown key");
            NARAD_RETURN_IF_ERROR(
                apply(workload, key, entry.second, base_dir, minutes_seen, seconds_seen));
        }
    } catch (const YAML::Exception& e) {
        return Status(Errc::invalid_argument, std::string("invalid YAML: ") + e.what());
    }
    NARAD_RETURN_IF_ERROR(check_consistency(workload));
    return workload;
}

Result<Workload> load_workload(const std::string& path) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) return Status(Errc::not_found, path + ": " + ec.message());
    if (size > kWorkloadFileBytesMax) return Status(Errc::invalid_argument, path + ": too large");
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in && !in.eof()) return Status(Errc::io_error, path + ": cannot read");
    const std::string base_dir = std::filesystem::path(path).parent_path().string();
    auto parsed = parse_workload(text.str(), base_dir);
    if (!parsed.is_ok()) return parsed.status().with_context(path);
    Workload workload = std::move(parsed).value();
    workload.source_path = path;
    if (!workload.payload_file.empty()) {
        const auto payload_size = std::filesystem::file_size(workload.payload_file, ec);
        if (ec) {
            return Status(Errc::not_found,
                          path + ": payloadFile " + workload.payload_file + ": " + ec.message());
        }
        if (payload_size < kMessageBytesMin || payload_size > kMessageBytesMax) {
            return Status(Errc::invalid_argument, path + ": payloadFile must be " +
                                                      std::to_string(kMessageBytesMin) + " to " +
                                                      std::to_string(kMessageBytesMax) + " bytes");
        }
        if (!workload.message_bytes_set) workload.message_bytes = payload_size;
    }
    return workload;
}

std::string describe_amount(const Workload& workload) {
    if (workload.count > 0) return "count " + std::to_string(workload.count);
    std::ostringstream out;
    out << double(workload.duration_ns) / 1e9 << " s";
    return out.str();
}

std::string describe_rate(const Workload& workload) {
    std::ostringstream out;
    if (workload.rate_percent_of_max > 0) {
        out << workload.rate_percent_of_max << "% of " << workload.rate_reference;
    } else if (workload.producer_rate > 0) {
        out << workload.producer_rate << " msg/s";
    } else {
        out << "max";
    }
    return out.str();
}

}  // namespace narad::compare
