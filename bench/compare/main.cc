// narad-compare: runs the same workloads against Narad (single-message and batch routes), NATS
// JetStream and Redis Streams on this machine, in one run, and reports them side by side (see
// README.md and docs/benchmarks.md).
//
//   narad-compare --workloads bench/workloads [--systems narad-batch,nats,...]
//                 [--narad build/bench/narad] [--markdown docs/benchmarks.md]
//                 [--csv docs/benchmarks.csv] [--scale 0.1] [--no-limits]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "compare/limits_probe.h"
#include "compare/machine.h"
#include "compare/markers.h"
#include "compare/report.h"
#include "compare/runner.h"
#include "compare/server_process.h"
#include "compare/workload.h"

namespace narad::compare {
namespace {

struct Flags {
    std::vector<std::string> workloads;
    std::string systems;
    std::string narad;
    std::string nats_server = "nats-server";
    std::string redis_server = "redis-server";
    std::string data_root;
    std::string markdown;
    std::string csv;
    std::string command;
    std::string commit;
    double scale = 1.0;
    double sync_seconds = 3.0;
    double loopback_seconds = 2.0;
    bool no_limits = false;
    bool keep_data = false;
};

std::string shell_quote(const std::string& arg) {
    if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789-_./=,:@%+") == std::string::npos) {
        return arg;
    }
    std::string out = "'";
    for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    std::tm parts{};
    ::gmtime_r(&now, &parts);
    char text[64];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &parts);
    return text;
}

Result<std::vector<Workload>> load_workloads(const std::vector<std::string>& paths) {
    std::vector<std::string> files;
    for (const std::string& path : paths) {
        std::error_code ec;
        if (std::filesystem::is_directory(path, ec)) {
            std::vector<std::string> found;
            for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
                const std::string ext = entry.path().extension().string();
                if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) {
                    found.push_back(entry.path().string());
                }
            }
            std::sort(found.begin(), found.end());
            files.insert(files.end(), found.begin(), found.end());
        } else {
            files.push_back(path);
        }
    }
    if (files.empty()) return Status(Errc::invalid_argument, "no workload files found");
    std::vector<Workload> workloads;
    for (const std::string& file : files) {
        NARAD_ASSIGN_OR_RETURN(Workload workload, load_workload(file));
        for (const Workload& other : workloads) {
            if (other.name == workload.name) {
                return Status(Errc::invalid_argument,
                              file + ": workload name \"" + workload.name + "\" used twice");
            }
        }
        workloads.push_back(std::move(workload));
    }
    for (const Workload& workload : workloads) {
        if (workload.rate_reference.empty()) continue;
        auto it = std::find_if(workloads.begin(), workloads.end(), [&](const Workload& w) {
            return w.name == workload.rate_reference;
        });
        if (it == workloads.end()) {
            return Status(Errc::invalid_argument, workload.source_path + ": rateReference \"" +
                                                      workload.rate_reference +
                                                      "\" is not among the workloads run");
        }
        if (it->rate_limited()) {
            return Status(Errc::invalid_argument, workload.source_path + ": rateReference \"" +
                                                      workload.rate_reference +
                                                      "\" must be a max-rate workload");
        }
    }
    return workloads;
}

void apply_scale(std::vector<Workload>& workloads, double scale) {
    if (scale == 1.0) return;
    for (Workload& w : workloads) {
        if (w.count > 0) w.count = std::max<uint64_t>(1, uint64_t(double(w.count) * scale));
        if (w.duration_ns > 0) {
            w.duration_ns = std::max<int64_t>(100'000'000, int64_t(double(w.duration_ns) * scale));
        }
        w.warmup_count = uint64_t(double(w.warmup_count) * scale);
    }
}

Result<std::vector<std::string>> parse_systems(const std::string& text) {
    if (text.empty()) return all_systems();
    std::vector<std::string> systems;
    std::istringstream in(text);
    std::string name;
    while (std::getline(in, name, ',')) {
        if (name.empty()) continue;
        if (std::find(all_systems().begin(), all_systems().end(), name) == all_systems().end()) {
            std::string known;
            for (const std::string& s : all_systems()) known += (known.empty() ? "" : ", ") + s;
            return Status(Errc::invalid_argument,
                          "unknown system \"" + name + "\" (known: " + known + ")");
        }
        systems.push_back(name);
    }
    if (systems.empty()) return Status(Errc::invalid_argument, "--systems names no system");
    return systems;
}

std::string default_narad_path(const char* argv0) {
    const std::filesystem::path self = std::filesystem::absolute(argv0);
    return (self.parent_path() / "narad").string();
}

int run(const Flags& flags, const std::string& invocation) {
    const auto started = std::chrono::steady_clock::now();
    auto workloads = load_workloads(flags.workloads);
    if (!workloads.is_ok()) {
        std::cerr << "narad-compare: " << workloads.status().message() << "\n";
        return 2;
    }
    apply_scale(*workloads, flags.scale);
    auto systems = parse_systems(flags.systems);
    if (!systems.is_ok()) {
        std::cerr << "narad-compare: " << systems.status().message() << "\n";
        return 2;
    }
    std::string data_root = flags.data_root;
    if (data_root.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        data_root = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(data_root, ec)) {
        std::cerr << "narad-compare: --data-root " << data_root << " is not a directory\n";
        return 2;
    }

    ReportInput report;
    report.date = utc_now();
    report.command = flags.command;
    report.commit = flags.commit;
    report.invocation = invocation;
    report.machine = describe(read_machine_info());
    report.workloads = order_workloads(*workloads);
    const double client_cpu_start = self_cpu_seconds();

    if (!flags.no_limits) {
        std::cerr << "limits: fdatasync in " << data_root << ", loopback TCP ...\n";
        report.limits = probe_limits(data_root, flags.sync_seconds, flags.loopback_seconds);
        std::cout << render_limits_table(*report.limits) << "\n" << std::flush;
    }

    RunnerOptions options;
    options.systems = *systems;
    options.env.narad_path = flags.narad;
    options.env.nats_server_path = flags.nats_server;
    options.env.redis_server_path = flags.redis_server;
    options.data_root = data_root;
    options.keep_data = flags.keep_data;
    options.progress = [](const std::string& line) { std::cerr << line << "\n" << std::flush; };
    Runner runner(options);
    report.rows = runner.run(*workloads);
    report.client_cpu_s = self_cpu_seconds() - client_cpu_start;
    report.total_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

    std::cout << render_results_table(report.rows) << std::flush;
    int exit_code = 0;
    if (!flags.csv.empty()) {
        const Status status = write_file_atomically(flags.csv, render_csv(report.rows));
        if (!status.is_ok()) {
            std::cerr << "narad-compare: " << status.message() << "\n";
            exit_code = 1;
        }
    }
    if (!flags.markdown.empty()) {
        const Status status = update_markdown_file(flags.markdown, render_markdown(report));
        if (!status.is_ok()) {
            std::cerr << "narad-compare: " << status.message() << "\n";
            exit_code = 1;
        } else {
            std::cerr << "wrote " << flags.markdown
                      << (flags.csv.empty() ? "" : " and " + flags.csv) << "\n";
        }
    }
    return exit_code;
}

}  // namespace
}  // namespace narad::compare

int main(int argc, char** argv) {
    using narad::compare::Flags;
    Flags flags;
    CLI::App app{"narad-compare: Narad, NATS JetStream and Redis Streams side by side, same run"};
    app.add_option("--workloads", flags.workloads,
                   "workload files (OMB-style YAML) or directories of them")
        ->required();
    app.add_option("--systems", flags.systems,
                   "comma-separated: narad-single,narad-batch,nats,redis-always,redis-everysec "
                   "(default all)");
    app.add_option("--narad", flags.narad, "the narad binary (default: beside narad-compare)");
    app.add_option("--nats-server", flags.nats_server, "the nats-server binary");
    app.add_option("--redis-server", flags.redis_server, "the redis-server binary");
    app.add_option("--data-root", flags.data_root,
                   "where data directories are made, and where fdatasync is probed (default "
                   "$TMPDIR or /tmp)");
    app.add_option("--markdown", flags.markdown,
                   "a markdown file whose <!-- compare:begin/end --> section is replaced");
    app.add_option("--csv", flags.csv, "write the rows as CSV here");
    app.add_option("--commit", flags.commit, "the commit of the code measured, for the report");
    app.add_option("--command", flags.command,
                   "how to describe this run in the report (default: the command line)");
    app.add_option("--scale", flags.scale, "multiply every count, duration and warm-up")
        ->check(CLI::Range(0.001, 100.0));
    app.add_option("--sync-seconds", flags.sync_seconds, "seconds per fdatasync probe")
        ->check(CLI::Range(0.1, 60.0));
    app.add_option("--loopback-seconds", flags.loopback_seconds, "seconds of the loopback probe")
        ->check(CLI::Range(0.1, 60.0));
    app.add_flag("--no-limits", flags.no_limits, "skip the limits probe");
    app.add_flag("--keep-data", flags.keep_data, "keep the servers' data directories");
    CLI11_PARSE(app, argc, argv);
    if (flags.narad.empty()) flags.narad = narad::compare::default_narad_path(argv[0]);

    std::string invocation;
    for (int i = 0; i < argc; ++i) {
        invocation += (i > 0 ? " " : "") + narad::compare::shell_quote(argv[i]);
    }
    return narad::compare::run(flags, invocation);
}
