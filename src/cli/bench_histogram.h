// A latency histogram in the HDR style for `narad bench`: logarithmic buckets (powers of two)
// each split into 128 linear sub-buckets, so any value from 1 ns to 2^63 ns lands in one of
// ~7300 counters with under 0.4% relative error, in constant memory however many samples a
// run records. Recording is lock-free (relaxed atomics) and may happen from any thread; reading
// (percentiles, merge) should happen once recording has stopped.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace narad::cli {

class LatencyHistogram {
  public:
    static constexpr int kSubBucketBits = 7;  // 128 sub-buckets per power of two
    static constexpr size_t kBucketCount = size_t(64 - kSubBucketBits + 1) << kSubBucketBits;

    LatencyHistogram();
    LatencyHistogram(const LatencyHistogram&) = delete;
    LatencyHistogram& operator=(const LatencyHistogram&) = delete;

    // Records one value (negative values count as 0).
    void record(int64_t value);
    // Adds every sample of `other`.
    void merge(const LatencyHistogram& other);
    void reset();

    uint64_t count() const { return count_.load(std::memory_order_relaxed); }
    int64_t min() const;  // 0 when empty
    int64_t max() const;  // 0 when empty
    double mean() const;  // 0 when empty

    // The value at 1-based rank `rank` (1 = smallest), as its bucket's midpoint clamped to
    // [min, max]; exact below 128.
    int64_t value_at_rank(uint64_t rank) const;
    // Go's `narad bench` percentile: the element at index int(p*(n-1)) of the sorted samples.
    int64_t percentile(double p) const;

    // Bucket arithmetic, exposed for tests.
    static size_t bucket_of(int64_t value);
    static int64_t bucket_low(size_t bucket);   // smallest value in the bucket
    static int64_t bucket_high(size_t bucket);  // largest value in the bucket

  private:
    std::unique_ptr<std::atomic<uint64_t>[]> counts_;
    std::atomic<uint64_t> count_{0};
    std::atomic<int64_t> min_;
    std::atomic<int64_t> max_;
    std::atomic<uint64_t> sum_high_{0};  // Σ (value >> 32)
    std::atomic<uint64_t> sum_low_{0};   // Σ (value & 0xffffffff)
};

}  // namespace narad::cli
