#include "compare/runner.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <thread>

#include "base/mutex.h"
#include "cli/bench_engine.h"
#include "cli/bench_payload.h"
#include "compare/flow.h"
#include "compare/server_process.h"

namespace narad::compare {
namespace {

using cli::bench::mono_ns;

// Runs driver.run(flow) with a watchdog: past `limit_ns` from now it aborts the flow, and
// `grace_ns` later it kills the server so that client calls blocked on it return.
Status run_watched(Driver& driver, const Workload& workload, Flow& flow, int64_t limit_ns,
                   int64_t grace_ns) {
    Mutex mutex;
    CondVar done_changed;
    bool done = false;  // under mutex
    std::thread watchdog([&] {
        MutexLock lock(mutex);
        const auto abort_at = std::chrono::steady_clock::now() + std::chrono::nanoseconds(limit_ns);
        if (done_changed.wait_until(lock, abort_at, [&] { return done; })) return;
        flow.abort("watchdog: phase still running " + std::to_string(limit_ns / 1'000'000'000) +
                   " s after it started");
        const auto kill_at = abort_at + std::chrono::nanoseconds(grace_ns);
        if (done_changed.wait_until(lock, kill_at, [&] { return done; })) return;
        driver.server().kill();
    });
    Status status = driver.run(workload, flow);
    {
        MutexLock lock(mutex);
        done = true;
    }
    done_changed.notify_all();
    watchdog.join();
    return status;
}

std::string format_seconds(double seconds) {
    std::ostringstream out;
    out.precision(1);
    out << std::fixed << seconds << " s";
    return out.str();
}

}  // namespace

std::vector<Workload> order_workloads(std::vector<Workload> workloads) {
    std::stable_partition(workloads.begin(), workloads.end(),
                          [](const Workload& w) { return w.rate_percent_of_max == 0; });
    return workloads;
}

std::optional<double> reference_rate(const std::vector<RunRow>& rows, const Workload& workload,
                                     const std::string& system) {
    const RunRow* row = find_row(rows, workload.rate_reference, system);
    if (row == nullptr || !row->ok()) return std::nullopt;
    const double rate = std::min(row->produce_msgs_per_s, row->consume_msgs_per_s);
    if (rate <= 0) return std::nullopt;
    return rate;
}

void Runner::progress(const std::string& line) const {
    if (options_.progress) options_.progress(line);
}

std::vector<RunRow> Runner::run(const std::vector<Workload>& workloads) {
    std::vector<RunRow> rows;
    const std::vector<Workload> ordered = order_workloads(workloads);
    const size_t total = ordered.size() * options_.systems.size();
    for (const Workload& workload : ordered) {
        for (const std::string& system : options_.systems) {
            std::ostringstream head;
            head << "[" << rows.size() + 1 << "/" << total << "] " << workload.name << " / "
                 << system << " ...";
            progress(head.str());
            const int64_t started = mono_ns();
            RunRow row = run_one(workload, system, rows);
            std::ostringstream line;
            line << "    " << (row.ok() ? "" : "FAILED: " + row.error + "; ") << "produce "
                 << format_count(row.produce_msgs_per_s) << " msg/s, consume+ack "
                 << format_count(row.consume_msgs_per_s) << " msg/s, e2e p99 "
                 << format_ms(row.e2e_p99_ns) << " ms, lost " << row.lost << ", client CPU "
                 << format_seconds(row.client_cpu_s) << " (" << format_seconds(row.elapsed_s)
                 << " measured, " << format_seconds(double(mono_ns() - started) / 1e9)
                 << " with start and warm-up)";
            progress(line.str());
            rows.push_back(std::move(row));
        }
    }
    return rows;
}

RunRow Runner::run_one(const Workload& workload, const std::string& system,
                       const std::vector<RunRow>& done) {
    RunRow row;
    row.workload = workload.name;
    row.system = system;
    auto fail = [&row](RunRow::Outcome outcome, std::string error) {
        row.outcome = outcome;
        row.error = std::move(error);
        return row;
    };

    double rate = workload.producer_rate;
    if (workload.rate_percent_of_max > 0) {
        auto base = reference_rate(done, workload, system);
        if (!base) {
            return fail(RunRow::Outcome::skipped,
                        "no max from " + workload.rate_reference + " for " + system);
        }
        rate = *base * workload.rate_percent_of_max / 100;
    }
    row.target_rate = rate;

    auto made = make_driver(system);
    if (!made.is_ok()) return fail(RunRow::Outcome::failed, made.status().message());
    std::unique_ptr<Driver> driver = std::move(made).value();
    row.durability = driver->durability();

    std::string data_dir = options_.data_root + "/narad-compare-XXXXXX";
    if (::mkdtemp(data_dir.data()) == nullptr) {
        return fail(RunRow::Outcome::failed, "mkdtemp under " + options_.data_root);
    }
    DriverEnv env = options_.env;
    env.data_dir = data_dir;
    auto cleanup = [&] {
        driver->disconnect();
        driver->stop();
        if (!options_.keep_data) {
            std::error_code ec;
            std::filesystem::remove_all(data_dir, ec);
        }
    };

    auto step = [&](Status status, std::string_view what) {
        if (status.is_ok()) return true;
        row.server_peak_rss_bytes = driver->server().peak_rss_bytes();
        fail(RunRow::Outcome::failed, std::string(what) + ": " + status.message());
        return false;
    };
    if (!step(driver->start(env), "start") || !step(driver->prepare(workload), "prepare") ||
        !step(driver->connect(workload), "connect")) {
        cleanup();
        return row;
    }

    if (workload.warmup_count > 0) {
        const IdPayload payload(workload.message_bytes, cli::bench::new_run_id());
        FlowPlan plan;
        plan.count = workload.warmup_count;
        plan.drain_timeout_ns = options_.drain_timeout_ns;
        plan.timeout_ns = options_.warmup_timeout_ns;
        Flow flow(plan, payload);
        const Status status =
            run_watched(*driver, workload, flow, plan.timeout_ns + plan.drain_timeout_ns,
                        options_.watchdog_grace_ns);
        if (!step(status, "warm-up")) {
            cleanup();
            return row;
        }
        if (flow.aborted() || flow.acked_unique() < workload.warmup_count) {
            row.notes.push_back("warm-up incomplete: " + std::to_string(flow.acked_unique()) +
                                " of " + std::to_string(workload.warmup_count) + " acked" +
                                (flow.aborted() ? " (" + flow.abort_reason() + ")" : ""));
        }
    }

    const IdPayload payload(workload.message_bytes, cli::bench::new_run_id());
    FlowPlan plan;
    plan.count = workload.count;
    plan.duration_ns = workload.duration_ns;
    plan.rate = rate;
    plan.drain_timeout_ns = options_.drain_timeout_ns;
    plan.timeout_ns = workload.timeout_ns;
    Flow flow(plan, payload);
    const std::optional<double> server_cpu_before = driver->server().cpu_seconds();
    const double client_cpu_before = self_cpu_seconds();
    const Status status =
        run_watched(*driver, workload, flow, plan.timeout_ns + plan.drain_timeout_ns,
                    options_.watchdog_grace_ns);
    const double client_cpu_after = self_cpu_seconds();
    const std::optional<double> server_cpu_after = driver->server().cpu_seconds();
    row.server_peak_rss_bytes = driver->server().peak_rss_bytes();

    row.client_cpu_s = client_cpu_after - client_cpu_before;
    if (server_cpu_before && server_cpu_after) {
        row.server_cpu_s = *server_cpu_after - *server_cpu_before;
    }
    row.produced = flow.produced_ok();
    row.produce_failed = flow.produce_stats().failed();
    row.acked = flow.acked_unique();
    row.duplicates = flow.duplicates();
    row.lost = row.produced > row.acked ? row.produced - row.acked : 0;
    const int64_t start = flow.start_ns();
    const int64_t produce_end = flow.produce_stats().last_success_ns();
    const int64_t ack_end = flow.last_ack_ns();
    if (produce_end > start) {
        row.produce_msgs_per_s = double(row.produced) / (double(produce_end - start) / 1e9);
        row.produce_mb_per_s = row.produce_msgs_per_s * double(payload.size()) / 1e6;
    }
    if (ack_end > start) {
        row.consume_msgs_per_s = double(row.acked) / (double(ack_end - start) / 1e9);
    }
    row.elapsed_s = double(std::max(produce_end, ack_end) - start) / 1e9;
    if (row.elapsed_s < 0) row.elapsed_s = 0;
    const auto e2e = cli::bench::LatencySummary::of(flow.end_to_end());
    row.e2e_count = e2e.count;
    row.e2e_p50_ns = e2e.p50_ns;
    row.e2e_p99_ns = e2e.p99_ns;
    row.e2e_p999_ns = e2e.p999_ns;
    row.e2e_max_ns = e2e.max_ns;

    for (const std::string& note : driver->notes()) row.notes.push_back(note);
    for (const auto& [reason, count] : flow.produce_stats().errors()) {
        row.notes.push_back("produce error \"" + reason + "\" × " + std::to_string(count));
    }
    for (const auto& [reason, count] : flow.ack_stats().errors()) {
        row.notes.push_back("ack error \"" + reason + "\" × " + std::to_string(count));
    }
    for (const auto& [reason, count] : flow.consume_errors()) {
        row.notes.push_back("consume error \"" + reason + "\" × " + std::to_string(count));
    }
    if (flow.foreign() > 0) {
        row.notes.push_back(std::to_string(flow.foreign()) +
                            " messages from other runs consumed (and acked)");
    }
    if (!status.is_ok()) {
        fail(RunRow::Outcome::failed, "run: " + status.message());
    } else if (flow.aborted()) {
        fail(RunRow::Outcome::failed, flow.abort_reason());
    } else if (mono_ns() >= flow.deadline_ns()) {
        fail(RunRow::Outcome::failed,
             "timed out after " + std::to_string(plan.timeout_ns / 1'000'000'000) + " s");
    }
    if (!driver->server().running()) {
        row.notes.push_back("server ended during the run (" + driver->server().exit_description() +
                            ")");
    }
    cleanup();
    return row;
}

}  // namespace narad::compare
