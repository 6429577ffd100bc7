#include "cli/bench_payload.h"

#include <random>

namespace narad::cli::bench {
namespace {

constexpr size_t kTimeDigits = 19;
constexpr std::string_view kPrefix = "{\"bench\":\"";
constexpr std::string_view kTimeKey = "\",\"t\":";

}  // namespace

BenchPayload::BenchPayload(int64_t size, std::string run_id)
    : run_id_(std::move(run_id)), timed_(size >= int64_t(kMinTimedSize)) {
    if (!timed_) {
        // Go's payload, exactly size bytes from 13 up.
        const size_t filler = size - 12 > 1 ? size_t(size - 12) : 1;
        template_ = std::string(kPrefix) + std::string(filler, 'x') + "\"}";
        return;
    }
    const size_t filler = size_t(size) - kTimedOverhead;
    template_ = std::string(kPrefix) + run_id_ + std::string(filler - run_id_.size(), 'x') +
                std::string(kTimeKey);
    time_position_ = template_.size();
    template_ += std::string(kTimeDigits, '0') + "}";
}

std::string BenchPayload::make(int64_t sent_wall_ns) const {
    std::string payload = template_;
    if (!timed_) return payload;
    // Fixed width: every wall time from 2001 to 2286 has 19 digits, so the size never changes.
    uint64_t value = sent_wall_ns < 0 ? 0 : uint64_t(sent_wall_ns);
    for (size_t i = 0; i < kTimeDigits; ++i) {
        payload[time_position_ + kTimeDigits - 1 - i] = char('0' + value % 10);
        value /= 10;
    }
    return payload;
}

std::optional<int64_t> BenchPayload::sent_at(std::string_view payload) const {
    if (!timed_) return std::nullopt;
    if (!payload.starts_with(kPrefix)) return std::nullopt;
    if (payload.substr(kPrefix.size(), run_id_.size()) != run_id_) return std::nullopt;
    const size_t key = payload.rfind(kTimeKey);
    if (key == std::string_view::npos) return std::nullopt;
    size_t i = key + kTimeKey.size();
    // Skip whitespace a re-encoding peer might have left.
    while (i < payload.size() && payload[i] == ' ') ++i;
    int64_t value = 0;
    size_t digits = 0;
    for (; i < payload.size() && payload[i] >= '0' && payload[i] <= '9' && digits < 19; ++i) {
        value = value * 10 + (payload[i] - '0');
        ++digits;
    }
    if (digits == 0) return std::nullopt;
    return value;
}

std::string new_run_id() {
    std::random_device device;
    std::mt19937_64 engine((uint64_t(device()) << 32) ^ device());
    static constexpr char kHex[] = "0123456789abcdef";
    std::string id;
    for (size_t i = 0; i < BenchPayload::kRunIdLength; ++i) id += kHex[engine() % 16];
    return id;
}

}  // namespace narad::cli::bench
