#include "cli/bench_histogram.h"

#include <bit>
#include <limits>

namespace narad::cli {
namespace {

constexpr uint64_t kSubBuckets = uint64_t{1} << LatencyHistogram::kSubBucketBits;
constexpr uint64_t kLowMask = (uint64_t{1} << 32) - 1;

void atomic_min(std::atomic<int64_t>& target, int64_t value) {
    int64_t current = target.load(std::memory_order_relaxed);
    while (value < current &&
           !target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
    }
}

void atomic_max(std::atomic<int64_t>& target, int64_t value) {
    int64_t current = target.load(std::memory_order_relaxed);
    while (value > current &&
           !target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
    }
}

}  // namespace

LatencyHistogram::LatencyHistogram()
    : counts_(new std::atomic<uint64_t>[kBucketCount]),
      min_(std::numeric_limits<int64_t>::max()),
      max_(std::numeric_limits<int64_t>::min()) {
    for (size_t i = 0; i < kBucketCount; ++i) counts_[i].store(0, std::memory_order_relaxed);
}

size_t LatencyHistogram::bucket_of(int64_t value) {
    const uint64_t v = value < 0 ? 0 : uint64_t(value);
    if (v < kSubBuckets) return size_t(v);
    const int top_bit = 63 - std::countl_zero(v);  // >= kSubBucketBits
    const int shift = top_bit - kSubBucketBits;
    const uint64_t mantissa = v >> shift;  // in [kSubBuckets, 2 * kSubBuckets)
    return size_t(uint64_t(shift + 1) * kSubBuckets + (mantissa - kSubBuckets));
}

int64_t LatencyHistogram::bucket_low(size_t bucket) {
    if (bucket < kSubBuckets) return int64_t(bucket);
    const uint64_t shift = bucket / kSubBuckets - 1;
    const uint64_t mantissa = kSubBuckets + bucket % kSubBuckets;
    return int64_t(mantissa << shift);
}

int64_t LatencyHistogram::bucket_high(size_t bucket) {
    if (bucket < kSubBuckets) return int64_t(bucket);
    const uint64_t shift = bucket / kSubBuckets - 1;
    const uint64_t low = uint64_t(bucket_low(bucket));
    return int64_t(low + ((uint64_t{1} << shift) - 1));
}

void LatencyHistogram::record(int64_t value) {
    if (value < 0) value = 0;
    counts_[bucket_of(value)].fetch_add(1, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
    atomic_min(min_, value);
    atomic_max(max_, value);
    // The sum in two words (high bits and low 32 bits) so billions of samples cannot overflow.
    sum_low_.fetch_add(uint64_t(value) & kLowMask, std::memory_order_relaxed);
    sum_high_.fetch_add(uint64_t(value) >> 32, std::memory_order_relaxed);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
    for (size_t i = 0; i < kBucketCount; ++i) {
        const uint64_t n = other.counts_[i].load(std::memory_order_relaxed);
        if (n != 0) counts_[i].fetch_add(n, std::memory_order_relaxed);
    }
    count_.fetch_add(other.count(), std::memory_order_relaxed);
    if (other.count() > 0) {
        atomic_min(min_, other.min());
        atomic_max(max_, other.max());
    }
    sum_low_.fetch_add(other.sum_low_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    sum_high_.fetch_add(other.sum_high_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void LatencyHistogram::reset() {
    for (size_t i = 0; i < kBucketCount; ++i) counts_[i].store(0, std::memory_order_relaxed);
    count_ = 0;
    min_ = std::numeric_limits<int64_t>::max();
    max_ = std::numeric_limits<int64_t>::min();
    sum_low_ = 0;
    sum_high_ = 0;
}

int64_t LatencyHistogram::min() const { return count() == 0 ? 0 : min_.load(); }
int64_t LatencyHistogram::max() const { return count() == 0 ? 0 : max_.load(); }

double LatencyHistogram::mean() const {
    const uint64_t n = count();
    if (n == 0) return 0;
    const double sum = double(sum_high_.load()) * 4294967296.0 + double(sum_low_.load());
    return sum / double(n);
}

int64_t LatencyHistogram::value_at_rank(uint64_t rank) const {
    const uint64_t n = count();
    if (n == 0) return 0;
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    uint64_t seen = 0;
    for (size_t i = 0; i < kBucketCount; ++i) {
        seen += counts_[i].load(std::memory_order_relaxed);
        if (seen >= rank) {
            const int64_t low = bucket_low(i);
            const int64_t high = bucket_high(i);
            int64_t value = low + (high - low) / 2;
            if (value < min()) value = min();
            if (value > max()) value = max();
            return value;
        }
    }
    return max();
}

int64_t LatencyHistogram::percentile(double p) const {
    const uint64_t n = count();
    if (n == 0) return 0;
    if (p < 0) p = 0;
    if (p > 1) p = 1;
    return value_at_rank(uint64_t(p * double(n - 1)) + 1);
}

}  // namespace narad::cli
