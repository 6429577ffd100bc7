#include "cli/bench_engine.h"

#include <limits>
#include <thread>

#include "base/mutex.h"

namespace narad::cli::bench {

int64_t mono_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

int64_t wall_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

RatePacer::RatePacer(double messages_per_second, uint32_t batch)
    : rate_(messages_per_second > 0 ? messages_per_second : 0), batch_(batch == 0 ? 1 : batch) {}

int64_t RatePacer::due_offset_ns(uint64_t index) const {
    if (rate_ <= 0) return 0;
    return int64_t(double(index) * double(batch_) * 1e9 / rate_);
}

void OpStats::success(uint64_t messages, int64_t latency_ns, int64_t at_ns) {
    ok_.fetch_add(messages);
    requests_.fetch_add(1);
    latency_.record(latency_ns);
    int64_t last = last_success_ns_.load();
    while (at_ns > last && !last_success_ns_.compare_exchange_weak(last, at_ns)) {
    }
}

void OpStats::failure(uint64_t messages, std::string_view reason) {
    failed_.fetch_add(messages);
    requests_.fetch_add(1);
    MutexLock lock(mutex_);
    ++errors_[std::string(reason)];
}

void OpStats::empty(int64_t latency_ns) {
    requests_.fetch_add(1);
    (void)latency_ns;  // empty long-polls measure the wait, not the server; keep them out
}

std::map<std::string, uint64_t> OpStats::errors() const {
    MutexLock lock(mutex_);
    return errors_;
}

LatencySummary LatencySummary::of(const LatencyHistogram& histogram) {
    LatencySummary summary;
    summary.count = histogram.count();
    summary.p50_ns = histogram.percentile(0.50);
    summary.p95_ns = histogram.percentile(0.95);
    summary.p99_ns = histogram.percentile(0.99);
    summary.p999_ns = histogram.percentile(0.999);
    summary.max_ns = histogram.max();
    summary.mean_ns = histogram.mean();
    return summary;
}

double OpResult::messages_per_second() const {
    if (elapsed_ns <= 0) return ok == 0 ? 0 : std::numeric_limits<double>::infinity();
    return double(ok) / (double(elapsed_ns) / 1e9);
}

double OpResult::megabytes_per_second(uint64_t message_bytes) const {
    return messages_per_second() * double(message_bytes) / 1e6;
}

OpResult summarize(const OpStats& stats, int64_t start_ns, int64_t end_ns) {
    OpResult result;
    result.ok = stats.ok();
    result.failed = stats.failed();
    result.requests = stats.requests();
    result.elapsed_ns = end_ns > start_ns ? end_ns - start_ns : 0;
    result.latency = LatencySummary::of(stats.latency());
    result.errors = stats.errors();
    return result;
}

Status run_stages(std::vector<Stage> stages) {
    std::vector<Status> statuses(stages.size());
    std::vector<std::thread> threads;
    threads.reserve(stages.size());
    for (size_t i = 0; i < stages.size(); ++i) {
        threads.emplace_back([&stages, &statuses, i] {
            Stage& stage = stages[i];
            net::LoadClient client(stage.options);
            statuses[i] = client.run(stage.generator);
            if (stage.on_finished) stage.on_finished();
        });
    }
    for (std::thread& thread : threads) thread.join();
    for (size_t i = 0; i < stages.size(); ++i) {
        if (!statuses[i].is_ok()) return statuses[i].with_context(stages[i].name);
    }
    return Status::ok();
}

}  // namespace narad::cli::bench
