#include "compare/report.h"

#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

namespace narad::compare {
namespace {

constexpr const char* kNaradBatch = "narad-batch";
constexpr const char* kNaradSingle = "narad-single";

std::string fixed(double value, int decimals) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(decimals) << value;
    return out.str();
}

std::string mib(std::optional<uint64_t> bytes) {
    if (!bytes) return "–";
    return format_count(double(*bytes) / double(1 << 20));
}

// A cell of the ratio columns: "msgs/s ratio · p99 ratio".
std::string ratio_cell(const std::vector<RunRow>& rows, const RunRow& row,
                       const std::string& narad_system) {
    if (row.system == narad_system) return "–";
    const RunRow* narad = find_row(rows, row.workload, narad_system);
    if (narad == nullptr) return "–";
    const Ratio ratio = compute_ratio(*narad, row);
    if (!ratio.throughput && !ratio.p99) return "–";
    return format_ratio(ratio.throughput) + " · " + format_ratio(ratio.p99);
}

std::string csv_ratio(std::optional<double> ratio) { return ratio ? fixed(*ratio, 4) : ""; }

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (i > 0) out += separator;
        out += parts[i];
    }
    return out;
}

// Table cells must not break the table.
std::string cell(std::string text) {
    for (char& c : text) {
        if (c == '|' || c == '\n') c = ' ';
    }
    return text;
}

}  // namespace

std::string format_count(double value) {
    if (!std::isfinite(value)) return "–";
    const bool negative = value < 0;
    uint64_t whole = uint64_t(std::llround(std::fabs(value)));
    std::string digits = std::to_string(whole);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return negative ? "-" + out : out;
}

std::string format_ms(int64_t ns) {
    const double ms = double(ns) / 1e6;
    if (ms < 10) return fixed(ms, 2);
    if (ms < 100) return fixed(ms, 1);
    return format_count(ms);
}

std::string format_ratio(std::optional<double> ratio) {
    if (!ratio || !std::isfinite(*ratio)) return "–";
    return fixed(*ratio, *ratio < 10 ? 2 : 1) + "×";
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

Ratio compute_ratio(const RunRow& narad, const RunRow& peer) {
    Ratio ratio;
    if (!narad.ok() || !peer.ok()) return ratio;
    if (peer.consume_msgs_per_s > 0) {
        ratio.throughput = narad.consume_msgs_per_s / peer.consume_msgs_per_s;
    }
    if (peer.e2e_p99_ns > 0 && narad.e2e_count > 0 && peer.e2e_count > 0) {
        ratio.p99 = double(narad.e2e_p99_ns) / double(peer.e2e_p99_ns);
    }
    return ratio;
}

const RunRow* find_row(const std::vector<RunRow>& rows, const std::string& workload,
                       const std::string& system) {
    for (const RunRow& row : rows) {
        if (row.workload == workload && row.system == system) return &row;
    }
    return nullptr;
}

std::string durability_label(const std::string& system) {
    static const std::map<std::string, std::string> kLabels = {
        {kNaradSingle, "fsync per produce"},   {kNaradBatch, "fsync per produce"},
        {"nats", "no fsync (every 2 min)"},    {"redis-always", "fsync per write cycle"},
        {"redis-everysec", "fsync every 1 s"},
    };
    auto it = kLabels.find(system);
    return it == kLabels.end() ? system : it->second;
}

std::string render_results_table(const std::vector<RunRow>& rows) {
    std::ostringstream out;
    out << "| workload | system | durability | produce msg/s | produce MB/s "
           "| e2e p50 / p99 / p999 ms | consume+ack msg/s | lost | server peak RSS MiB "
           "| client CPU (cores) | narad-batch ÷ this: msg/s · p99 "
           "| narad-single ÷ this: msg/s · p99 |\n";
    out << "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for (const RunRow& row : rows) {
        out << "| " << cell(row.workload) << " | " << cell(row.system) << " | "
            << durability_label(row.system) << " | ";
        if (!row.ok()) {
            out << (row.outcome == RunRow::Outcome::failed ? "**failed**" : "skipped")
                << " | – | – | – | – | " << mib(row.server_peak_rss_bytes) << " | – | – | – |\n";
            continue;
        }
        out << format_count(row.produce_msgs_per_s) << " | " << fixed(row.produce_mb_per_s, 1)
            << " | ";
        if (row.e2e_count > 0) {
            out << format_ms(row.e2e_p50_ns) << " / " << format_ms(row.e2e_p99_ns) << " / "
                << format_ms(row.e2e_p999_ns);
        } else {
            out << "–";
        }
        out << " | " << format_count(row.consume_msgs_per_s) << " | "
            << format_count(double(row.lost)) << " | " << mib(row.server_peak_rss_bytes) << " | "
            << (row.elapsed_s > 0 ? fixed(row.client_cpu_s / row.elapsed_s, 2) : "–") << " | "
            << ratio_cell(rows, row, kNaradBatch) << " | " << ratio_cell(rows, row, kNaradSingle)
            << " |\n";
    }
    return out.str();
}

std::string render_limits_table(const LimitsResult& limits) {
    std::ostringstream out;
    out << "| probe | rate | MB/s |\n| --- | ---: | ---: |\n";
    for (const SyncProbe& probe : limits.syncs) {
        out << "| write + fdatasync, " << probe.write_bytes / 1024 << " KiB each | ";
        if (!probe.error.empty()) {
            out << cell(probe.error) << " | – |\n";
            continue;
        }
        out << format_count(probe.syncs_per_second()) << " syncs/s | "
            << format_count(probe.megabytes_per_second()) << " |\n";
    }
    out << "| loopback TCP, one connection, 1 MiB writes | ";
    if (!limits.loopback.error.empty()) {
        out << cell(limits.loopback.error) << " | – |\n";
    } else {
        out << fixed(limits.loopback.megabytes_per_second() * 8 / 1000, 1) << " Gbit/s | "
            << format_count(limits.loopback.megabytes_per_second()) << " |\n";
    }
    return out.str();
}

std::string render_workloads_table(const std::vector<Workload>& workloads) {
    std::ostringstream out;
    out << "| workload | message | partitions | producers | consumers | batch | rate | amount "
           "| warm-up |\n";
    out << "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: |\n";
    for (const Workload& w : workloads) {
        const std::string size = w.message_bytes % 1024 == 0
                                     ? std::to_string(w.message_bytes / 1024) + " KiB"
                                     : std::to_string(w.message_bytes) + " B";
        out << "| " << cell(w.name) << " | " << size << " | " << w.partitions << " | "
            << w.producers << " | " << w.consumers << " | " << w.batch << " | "
            << cell(describe_rate(w)) << " | " << describe_amount(w) << " | "
            << format_count(double(w.warmup_count)) << " |\n";
    }
    return out.str();
}

std::string render_markdown(const ReportInput& input) {
    std::ostringstream out;
    out << "Generated by `narad-compare` (bench/compare/) on " << input.date << ", "
        << fixed(input.total_seconds / 60, 1) << " min in all. Command: ";
    if (!input.command.empty()) {
        out << "`" << input.command << "`, which runs `" << input.invocation << "`.\n\n";
    } else {
        out << "`" << input.invocation << "`.\n\n";
    }
    if (!input.commit.empty()) out << "Code measured: commit `" << input.commit << "`.\n\n";
    out << "Machine: " << input.machine << ". Servers and client share it; the client used "
        << fixed(input.client_cpu_s, 1) << " CPU-seconds over the whole run (per row below).\n\n";
    out << "Each system runs on loopback from a fresh data directory, started by the runner, "
           "with the same work: the same messages (size, count or duration, rate) from the same "
           "number of producer connections, consumed and acked by the same number of consumer "
           "connections. A message counts as consumed once its ack succeeded; every payload "
           "carries a run id, a message id and its send time, and the runner counts unique ids "
           "(\"lost\" = produced and acknowledged but never consumed+acked). End-to-end latency "
           "is from send to receipt by a consumer. A warm-up (see the table) runs first and is "
           "discarded. A server's peak RSS and CPU count the processes it started as well "
           "(Narad's supervised etcd member, Redis's rewrite forks): its peak RSS is the sum of "
           "each one's peak.\n\n";
    out << render_workloads_table(input.workloads) << "\n";
    if (input.limits) {
        out << "What the machine allows, measured in the same run (data directory "
            << "file system, `" << input.limits->directory << "`):\n\n"
            << render_limits_table(*input.limits) << "\n";
    }
    out << render_results_table(input.rows) << "\n";
    out << "- **Ratios** are Narad's figure over the row's: `msg/s` compares consume+ack msg/s "
           "(above 1: Narad completes more messages per second), `p99` compares end-to-end p99 "
           "latency (below 1: Narad's is lower). **narad-batch** (produce/batch, "
           "consume?max=N, ack/batch) against the peers' pipelined/async clients is the "
           "like-for-like comparison; narad-single (one message per request, as users call "
           "Narad today) is shown too. In the fixed-rate workload every system runs at a share "
           "of its own max, so there the msg/s ratio only restates the max ratio and p99 is the "
           "figure to compare.\n";
    out << "- **MB/s** are 10^6 bytes of payload per second; **lost** counts messages a system "
           "acknowledged to the producer but that were never consumed and acked.\n";
    out << "- **client CPU (cores)**: CPU-seconds of the benchmark process (all its threads) per "
           "second of the measured phase; the machine has "
        << "the cores given above, shared with the server.\n\n";

    std::map<std::string, std::string> durability;
    for (const RunRow& row : input.rows) {
        if (!row.durability.empty()) durability.emplace(row.system, row.durability);
    }
    out << "Durability as configured:\n\n";
    for (const auto& [system, text] : durability) out << "- **" << system << "**: " << text << "\n";

    std::vector<std::string> notes;
    for (const RunRow& row : input.rows) {
        std::vector<std::string> parts;
        if (!row.error.empty()) parts.push_back(row.error);
        if (row.produce_failed > 0) {
            parts.push_back(format_count(double(row.produce_failed)) + " produce errors");
        }
        if (row.duplicates > 0) {
            parts.push_back(format_count(double(row.duplicates)) + " redelivered duplicates");
        }
        parts.insert(parts.end(), row.notes.begin(), row.notes.end());
        if (!parts.empty())
            notes.push_back(row.workload + " / " + row.system + ": " + join(parts, "; "));
    }
    if (!notes.empty()) {
        out << "\nNotes from this run:\n\n";
        for (const std::string& note : notes) out << "- " << note << "\n";
    }
    return out.str();
}

std::string render_csv(const std::vector<RunRow>& rows) {
    std::ostringstream out;
    out << "workload,system,outcome,error,durability,target_rate_msgs_per_s,produced,"
           "produce_failed,acked,duplicates,lost,produce_msgs_per_s,produce_mb_per_s,"
           "consume_ack_msgs_per_s,e2e_count,e2e_p50_ms,e2e_p99_ms,e2e_p999_ms,e2e_max_ms,"
           "server_peak_rss_mib,server_cpu_s,client_cpu_s,elapsed_s,"
           "narad_batch_msgs_ratio,narad_batch_p99_ratio,narad_single_msgs_ratio,"
           "narad_single_p99_ratio,notes\n";
    for (const RunRow& row : rows) {
        const char* outcome = row.outcome == RunRow::Outcome::ok       ? "ok"
                              : row.outcome == RunRow::Outcome::failed ? "failed"
                                                                       : "skipped";
        auto ratio_to = [&](const char* system) {
            const RunRow* narad = find_row(rows, row.workload, system);
            if (narad == nullptr || row.system == system) return Ratio{};
            return compute_ratio(*narad, row);
        };
        const Ratio batch = ratio_to(kNaradBatch);
        const Ratio single = ratio_to(kNaradSingle);
        out << csv_field(row.workload) << ',' << csv_field(row.system) << ',' << outcome << ','
            << csv_field(row.error) << ',' << csv_field(row.durability) << ','
            << fixed(row.target_rate, 0) << ',' << row.produced << ',' << row.produce_failed << ','
            << row.acked << ',' << row.duplicates << ',' << row.lost << ','
            << fixed(row.produce_msgs_per_s, 1) << ',' << fixed(row.produce_mb_per_s, 2) << ','
            << fixed(row.consume_msgs_per_s, 1) << ',' << row.e2e_count << ','
            << fixed(double(row.e2e_p50_ns) / 1e6, 3) << ','
            << fixed(double(row.e2e_p99_ns) / 1e6, 3) << ','
            << fixed(double(row.e2e_p999_ns) / 1e6, 3) << ','
            << fixed(double(row.e2e_max_ns) / 1e6, 3) << ','
            << (row.server_peak_rss_bytes
                    ? fixed(double(*row.server_peak_rss_bytes) / double(1 << 20), 1)
                    : "")
            << ',' << fixed(row.server_cpu_s, 2) << ',' << fixed(row.client_cpu_s, 2) << ','
            << fixed(row.elapsed_s, 3) << ',' << csv_ratio(batch.throughput) << ','
            << csv_ratio(batch.p99) << ',' << csv_ratio(single.throughput) << ','
            << csv_ratio(single.p99) << ',' << csv_field(join(row.notes, "; ")) << '\n';
    }
    return out.str();
}

}  // namespace narad::compare
