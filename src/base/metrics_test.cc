#include "base/metrics.h"

#include <gtest/gtest.h>

namespace narad::metrics {
namespace {

// Rule: counters, labelled gauges and histograms render in the Prometheus text format.
TEST(MetricsTest, RendersPrometheusTextFormat) {
    Registry registry;
    registry.counter("narad_test_total", "a counter").get().inc(3);
    registry.gauge("narad_test_lag", "a gauge", {"topic"}).with({"orders"}).set(7);
    auto& h = registry.histogram("narad_test_seconds", "a histogram", {0.1, 1}).get();
    h.observe(0.05);
    h.observe(0.5);
    h.observe(5);
    std::string text = registry.render();
    EXPECT_NE(text.find("# TYPE narad_test_total counter\nnarad_test_total 3\n"),
              std::string::npos);
    EXPECT_NE(text.find("narad_test_lag{topic=\"orders\"} 7\n"), std::string::npos);
    EXPECT_NE(text.find("narad_test_seconds_bucket{le=\"0.1\"} 1\n"), std::string::npos);
    EXPECT_NE(text.find("narad_test_seconds_bucket{le=\"1\"} 2\n"), std::string::npos);
    EXPECT_NE(text.find("narad_test_seconds_bucket{le=\"+Inf\"} 3\n"), std::string::npos);
    EXPECT_NE(text.find("narad_test_seconds_count 3\n"), std::string::npos);
}

// Rule: collectors run before rendering, and a removed child disappears from the output.
TEST(MetricsTest, CollectorsRunAtScrapeAndRemovedSeriesVanish) {
    Registry registry;
    auto& family = registry.gauge("narad_test_size", "size", {"topic"});
    int runs = 0;
    uint64_t id = registry.add_collector([&] {
        ++runs;
        family.with({"a"}).set(runs);
    });
    EXPECT_NE(registry.render().find("narad_test_size{topic=\"a\"} 1"), std::string::npos);
    registry.remove_collector(id);
    family.remove({"a"});
    EXPECT_EQ(registry.render().find("topic=\"a\""), std::string::npos);
    EXPECT_EQ(runs, 1);
}

}  // namespace
}  // namespace narad::metrics
