#include "cli/bench_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace narad::cli {
namespace {

// Rule: every value falls inside its bucket's [low, high] range, and buckets tile the line.
TEST(LatencyHistogram, BucketsTileTheValueRange) {
    for (int64_t v :
         {int64_t{0}, int64_t{1}, int64_t{127}, int64_t{128}, int64_t{129}, int64_t{255},
          int64_t{256}, int64_t{257}, int64_t{1'000'000}, int64_t{123'456'789}, INT64_MAX}) {
        const size_t b = LatencyHistogram::bucket_of(v);
        EXPECT_LE(LatencyHistogram::bucket_low(b), v) << v;
        EXPECT_GE(LatencyHistogram::bucket_high(b), v) << v;
        EXPECT_LT(b, LatencyHistogram::kBucketCount);
    }
    for (size_t b = 0; b + 1 < 3000; ++b) {
        EXPECT_EQ(LatencyHistogram::bucket_high(b) + 1, LatencyHistogram::bucket_low(b + 1)) << b;
    }
}

// Rule: small values (< 128) are exact, and percentiles follow Go's index rule int(p*(n-1)).
TEST(LatencyHistogram, SmallValuesAreExact) {
    LatencyHistogram h;
    for (int64_t v = 1; v <= 100; ++v) h.record(v);
    EXPECT_EQ(h.count(), 100u);
    EXPECT_EQ(h.min(), 1);
    EXPECT_EQ(h.max(), 100);
    EXPECT_DOUBLE_EQ(h.mean(), 50.5);
    EXPECT_EQ(h.percentile(0.50), 50);  // sorted[int(0.5*99)] = sorted[49] = 50
    EXPECT_EQ(h.percentile(0.95), 95);  // sorted[94]
    EXPECT_EQ(h.percentile(0.99), 99);  // sorted[98]
    EXPECT_EQ(h.percentile(1.0), 100);
    EXPECT_EQ(h.percentile(0.0), 1);
}

// Rule: large values are reported within 0.4% of the exact percentile.
TEST(LatencyHistogram, LargeValuesWithinRelativeError) {
    LatencyHistogram h;
    std::vector<int64_t> samples;
    std::mt19937_64 random(42);
    std::lognormal_distribution<double> latency(std::log(2e6), 1.0);  // ~2 ms median
    for (int i = 0; i < 200'000; ++i) {
        const int64_t v = int64_t(latency(random));
        samples.push_back(v);
        h.record(v);
    }
    std::sort(samples.begin(), samples.end());
    for (double p : {0.5, 0.9, 0.99, 0.999}) {
        const int64_t exact = samples[size_t(p * double(samples.size() - 1))];
        const double error = std::abs(double(h.percentile(p) - exact)) / double(exact);
        EXPECT_LT(error, 0.004) << "p" << p << " exact " << exact << " got " << h.percentile(p);
    }
    EXPECT_EQ(h.max(), samples.back());
    EXPECT_EQ(h.min(), samples.front());
}

// Rule: merging adds every sample; an empty histogram reports zeros; negatives count as 0.
TEST(LatencyHistogram, MergesAndHandlesEdges) {
    LatencyHistogram a;
    LatencyHistogram b;
    EXPECT_EQ(a.percentile(0.5), 0);
    EXPECT_EQ(a.max(), 0);
    EXPECT_EQ(a.mean(), 0);
    a.record(10);
    b.record(1'000'000);
    b.record(-5);
    a.merge(b);
    EXPECT_EQ(a.count(), 3u);
    EXPECT_EQ(a.min(), 0);
    EXPECT_EQ(a.percentile(1.0), 1'000'000);
    a.reset();
    EXPECT_EQ(a.count(), 0u);
    EXPECT_EQ(a.percentile(0.99), 0);
}

}  // namespace
}  // namespace narad::cli
