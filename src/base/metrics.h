// Prometheus metrics: counters, gauges and histograms, with or without labels, rendered in the text
// exposition format for GET /metrics. Families are created once (usually at start-up) and the
// returned references stay valid for the life of the process, so hot paths keep a pointer and only
// do an atomic add. Collectors run at scrape time to fill gauges that are cheaper to compute on
// demand (consumer lag, disk usage). All operations are thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"

namespace narad::metrics {

using Labels = std::vector<std::string>;  // label values, in the family's label-name order

class Counter {
  public:
    void inc(double delta = 1) {
        double current = value_.load(std::memory_order_relaxed);
        while (!value_.compare_exchange_weak(current, current + delta, std::memory_order_relaxed)) {
        }
    }
    double value() const { return value_.load(std::memory_order_relaxed); }

  private:
    std::atomic<double> value_{0};
};

class Gauge {
  public:
    void set(double v) { value_.store(v, std::memory_order_relaxed); }
    void add(double delta) {
        double current = value_.load(std::memory_order_relaxed);
        while (!value_.compare_exchange_weak(current, current + delta, std::memory_order_relaxed)) {
        }
    }
    double value() const { return value_.load(std::memory_order_relaxed); }

  private:
    std::atomic<double> value_{0};
};

class Histogram {
  public:
    explicit Histogram(std::vector<double> bounds);
    void observe(double v);
    // Snapshot for rendering: cumulative counts per bound (+Inf last), count and sum.
    struct Snapshot {
        std::vector<uint64_t> cumulative;
        uint64_t count = 0;
        double sum = 0;
    };
    Snapshot snapshot() const;
    const std::vector<double>& bounds() const { return bounds_; }

  private:
    std::vector<double> bounds_;
    std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // bounds_.size() + 1 (the +Inf bucket)
    std::atomic<double> sum_{0};
};

// Default histogram bounds, in seconds: 100 µs .. 10 s.
std::vector<double> latency_bounds();
// Exponential bounds for sizes: 1, 4, 16, ... up to `max`.
std::vector<double> size_bounds(double max);

template <typename Metric>
class Family;

class Registry {
  public:
    Registry();
    ~Registry();
    Registry(const Registry&) = delete;
    Registry& operator=(const Registry&) = delete;

    // The process-wide registry that /metrics renders.
    static Registry& global();

    Family<Counter>& counter(const std::string& name, const std::string& help,
                             std::vector<std::string> label_names = {});
    Family<Gauge>& gauge(const std::string& name, const std::string& help,
                         std::vector<std::string> label_names = {});
    Family<Histogram>& histogram(const std::string& name, const std::string& help,
                                 std::vector<double> bounds,
                                 std::vector<std::string> label_names = {});

    // Runs at every render(), before the families are written.
    using Collector = std::function<void()>;
    // Returns an id for remove_collector(); a component removes its collector when it stops.
    uint64_t add_collector(Collector collector);
    void remove_collector(uint64_t id);

    std::string render();

  private:
    struct FamilyBase;
    Mutex mutex_;
    std::map<std::string, std::unique_ptr<FamilyBase>> families_ GUARDED_BY(mutex_);
    std::map<uint64_t, Collector> collectors_ GUARDED_BY(mutex_);
    uint64_t next_collector_id_ GUARDED_BY(mutex_) = 1;
    Mutex render_mutex_;  // one render at a time: collectors are not reentrant

    template <typename Metric>
    Family<Metric>& get_or_create(const std::string& name, const std::string& help,
                                  const char* type, std::vector<std::string> label_names,
                                  std::vector<double> bounds);
};

// One metric name with its label names; with() finds or creates the child for a set of label
// values.
template <typename Metric>
class Family {
  public:
    Family(std::vector<std::string> label_names, std::vector<double> bounds)
        : label_names_(std::move(label_names)), bounds_(std::move(bounds)) {}

    Metric& with(const Labels& values);
    // The child without labels (for a family declared with none).
    Metric& get() { return with({}); }
    // Drops a child (a deleted topic's series).
    void remove(const Labels& values);
    // Drops every child whose label values start with `prefix`.
    void remove_prefix(const Labels& prefix);

    const std::vector<std::string>& label_names() const { return label_names_; }
    template <typename Fn>
    void for_each(Fn&& fn) const {
        MutexLock lock(mutex_);
        for (const auto& [labels, metric] : children_) fn(labels, *metric);
    }

  private:
    std::vector<std::string> label_names_;
    std::vector<double> bounds_;
    mutable Mutex mutex_;
    std::map<Labels, std::unique_ptr<Metric>> children_ GUARDED_BY(mutex_);
};

}  // namespace narad::metrics
