// `narad bench <topic>`: Go's produce benchmark (--count --size --workers --consume, same lines)
// grown into the project's whole-system load tool: many async connections, batches, a target
// rate, a fixed duration, keys, concurrent consume→ack with end-to-end latency, and --json.
#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/bench_engine.h"
#include "cli/bench_payload.h"
#include "cli/bench_report.h"
#include "cli/bench_workload.h"
#include "cli/calls.h"
#include "cli/command.h"
#include "cli/http_api.h"

namespace narad::cli {
namespace {

// Limits on what one bench process will try to do.
constexpr int64_t kMaxConnections = 4096;
constexpr int64_t kMaxBatch = 10'000;
constexpr int64_t kMaxSize = 1 << 20;  // the server's body cap
constexpr int64_t kMaxThreads = 256;

struct BenchFlags {
    std::vector<std::string> args;
    int64_t count = 10'000;
    int64_t size = 256;
    int64_t workers = 8;
    int64_t connections = 0;
    int64_t consumers = 0;
    int64_t batch = 1;
    int64_t duration_ns = 0;
    int64_t rate = 0;
    int64_t keys = 0;
    int64_t partition = -1;
    int64_t partitions = 0;
    int64_t threads = 1;
    int64_t drain_timeout_ns = 30'000'000'000;
    bool consume = false;
    bool create = false;
    bool json = false;
    std::vector<std::string> servers;  // spread connections over these nodes
};

// The nodes to drive: --servers (each "host:port" or a URL), else the connection's server. Each
// gets an equal share of the connections (the first ones one more when they do not divide).
Result<std::vector<net::ClientOptions>> bench_targets(const BenchFlags& f,
                                                      const net::ClientOptions& base) {
    if (f.servers.empty()) return std::vector<net::ClientOptions>{base};
    std::vector<net::ClientOptions> targets;
    for (const std::string& server : f.servers) {
        NARAD_ASSIGN_OR_RETURN(ServerAddress address, parse_server_url(server));
        if (address.https) {
            return Status(Errc::invalid_argument,
                          "narad bench drives plain http only; \"" + server + "\" is https");
        }
        net::ClientOptions options = base;
        options.tls.reset();
        options.host = address.host;
        options.port = address.port;
        targets.push_back(std::move(options));
    }
    return targets;
}

uint32_t share(uint32_t total, size_t parts, size_t index) {
    return uint32_t(total / parts + (index < total % parts ? 1 : 0));
}

Status check_range(const char* flag, int64_t value, int64_t low, int64_t high) {
    if (value < low || value > high) {
        return Status(Errc::invalid_argument, std::string(flag) + " must be between " +
                                                  std::to_string(low) + " and " +
                                                  std::to_string(high));
    }
    return Status::ok();
}

Result<bench::BenchConfig> make_config(const BenchFlags& f, const std::string& topic) {
    bench::BenchConfig config;
    config.topic = topic;
    const int64_t connections = f.connections > 0 ? f.connections : f.workers;
    const int64_t consumers = f.consumers > 0 ? f.consumers : connections;
    NARAD_RETURN_IF_ERROR(check_range("--workers/--connections", connections, 1, kMaxConnections));
    NARAD_RETURN_IF_ERROR(check_range("--consumers", consumers, 1, kMaxConnections));
    NARAD_RETURN_IF_ERROR(check_range("--batch", f.batch, 1, kMaxBatch));
    NARAD_RETURN_IF_ERROR(check_range("--size", f.size, 1, kMaxSize));
    NARAD_RETURN_IF_ERROR(check_range("--threads", f.threads, 1, kMaxThreads));
    if (f.rate < 0) return Status(Errc::invalid_argument, "--rate must be >= 0");
    if (f.keys < 0) return Status(Errc::invalid_argument, "--keys must be >= 0");
    if (f.partition < -1) return Status(Errc::invalid_argument, "--partition must be >= 0");
    if (f.partition >= 0 && f.keys > 0) {
        return Status(Errc::invalid_argument, "--partition and --keys exclude each other");
    }
    if (f.duration_ns < 0) return Status(Errc::invalid_argument, "--duration must be >= 0");
    config.count = f.count;
    config.duration_ns = f.duration_ns;
    config.size = f.size;
    config.connections = uint32_t(connections);
    config.consumers = uint32_t(consumers);
    config.batch = uint32_t(f.batch);
    config.rate = double(f.rate);
    config.keys = f.keys;
    config.partition = f.partition;
    config.consume = f.consume;
    config.threads = uint32_t(f.threads);
    config.drain_timeout_ns = f.drain_timeout_ns;
    return config;
}

// --create: make the topic unless it exists (409 is fine).
Status create_topic(CommandEnv& env, const std::string& topic, int64_t partitions) {
    NARAD_ASSIGN_OR_RETURN(auto api, env.api());
    nlohmann::json body = {{"name", topic}};
    if (partitions > 0) body["partitions"] = partitions;
    auto response = send_json(*api, "POST", "/v1/topics", body);
    if (response.is_ok()) {
        env.output.err << "created topic " << topic << "\n";
        return Status::ok();
    }
    if (is_http_error(response.status(), 409)) return Status::ok();
    return response.status();
}

Status run_bench(const BenchFlags& f, CommandEnv& env) {
    const std::string& topic = f.args[0];
    NARAD_ASSIGN_OR_RETURN(bench::BenchConfig config, make_config(f, topic));
    NARAD_ASSIGN_OR_RETURN(CliContext connection, env.connection());
    NARAD_ASSIGN_OR_RETURN(net::ClientOptions client, client_options(connection));
    if (client.tls && f.servers.empty()) {
        return Status(Errc::invalid_argument,
                      "narad bench drives plain http only; \"" + connection.server + "\" is https");
    }
    NARAD_ASSIGN_OR_RETURN(std::vector<net::ClientOptions> targets, bench_targets(f, client));
    if (targets.size() > config.connections ||
        (config.consume && targets.size() > config.consumers)) {
        return Status(Errc::invalid_argument,
                      "--servers lists more nodes than there are connections to spread");
    }
    if (f.create) NARAD_RETURN_IF_ERROR(create_topic(env, topic, f.partitions));

    const bench::BenchPayload payload(config.size, bench::new_run_id());
    env.output.err << bench::format_start(config, payload.size()) << std::flush;

    const int64_t start_ns = bench::mono_ns();
    bench::ProduceWorkload producers(config, payload, start_ns);
    bench::ConsumeWorkload consumers(config, payload, config.consumers);
    std::atomic<int64_t> produce_end_ns{0};

    std::vector<bench::Stage> stages;
    // Produce ends when every node's producers have finished.
    std::atomic<size_t> producing{targets.size()};
    uint32_t produce_offset = 0;
    uint32_t consume_offset = 0;
    for (size_t i = 0; i < targets.size(); ++i) {
        std::string suffix =
            targets.size() > 1 ? " " + targets[i].host + ":" + std::to_string(targets[i].port) : "";
        bench::Stage produce;
        produce.name = "produce" + suffix;
        produce.options.client = targets[i];
        produce.options.connections = share(config.connections, targets.size(), i);
        // A paced generator sleeps on its client thread until its slot; a thread per connection
        // keeps one sleeper from delaying the others' answers (and their latency numbers).
        produce.options.threads =
            config.rate > 0 ? uint32_t(std::min<int64_t>(produce.options.connections, kMaxThreads))
                            : config.threads;
        produce.generator = [&producers, offset = produce_offset](uint32_t index) {
            return producers.next(offset + index);
        };
        produce.on_finished = [&] {
            if (--producing > 0) return;
            produce_end_ns = bench::mono_ns();
            consumers.producers_finished(producers.stats().ok());
        };
        produce_offset += produce.options.connections;
        stages.push_back(std::move(produce));
        if (config.consume) {
            bench::Stage consume;
            consume.name = "consume" + suffix;
            consume.options.client = targets[i];
            consume.options.connections = share(config.consumers, targets.size(), i);
            consume.options.threads = config.threads;
            consume.generator = [&consumers, offset = consume_offset](uint32_t index) {
                return consumers.next(offset + index);
            };
            consume_offset += consume.options.connections;
            stages.push_back(std::move(consume));
        }
    }
    NARAD_RETURN_IF_ERROR(bench::run_stages(std::move(stages)));

    bench::BenchReport report;
    report.config = config;
    report.payload_bytes = payload.size();
    report.timed_payload = payload.timed();
    report.produce = bench::summarize(producers.stats(), start_ns, produce_end_ns.load());
    if (config.consume) {
        report.consumed = true;
        const int64_t consume_end = std::max(consumers.consume_stats().last_success_ns(),
                                             consumers.ack_stats().last_success_ns());
        report.consume = bench::summarize(consumers.consume_stats(), start_ns, consume_end);
        report.ack = bench::summarize(consumers.ack_stats(), start_ns, consume_end);
        report.received_run = consumers.received_run();
        report.lapsed = consumers.lapsed();
        report.ack_failed = consumers.ack_failed();
        report.end_to_end = bench::LatencySummary::of(consumers.end_to_end());
    }
    env.output.err << bench::format_result(report) << std::flush;
    if (f.json) env.output.out << bench::format_json(report) << std::flush;
    return Status::ok();
}

}  // namespace

void register_bench_command(CommandTree& tree) {
    auto f = std::make_shared<BenchFlags>();
    CLI::App* cmd = tree.add(
        nullptr, "bench",
        "measure produce (and optionally consume+ack) throughput and latency from this machine");
    tree.add_int(cmd, "count", &f->count, "messages to produce");
    tree.add_int(cmd, "size", &f->size, "payload bytes");
    tree.add_int(cmd, "workers", &f->workers, "concurrent producer connections");
    cmd->add_flag(
        "--consume", f->consume,
        "consume+ack concurrently on separate connections and measure end-to-end latency");
    tree.add_int(cmd, "connections", &f->connections, "producer connections (0 = --workers)");
    tree.add_int(cmd, "consumers", &f->consumers, "consumer connections (0 = --connections)");
    tree.add_int(cmd, "batch", &f->batch,
                 "messages per request; > 1 uses the batch produce/consume/ack routes");
    tree.add_duration(cmd, "duration", &f->duration_ns,
                      "produce for this long instead of --count messages, e.g. 30s");
    tree.add_int(cmd, "rate", &f->rate, "target messages/s over all producers (0 = max)");
    tree.add_int(cmd, "keys", &f->keys, "distinct message keys, round robin (0 = no key)");
    tree.add_int(cmd, "partition", &f->partition,
                 "pin every message to this partition (default: keys or round robin)");
    cmd->add_flag("--create", f->create, "create the topic first if it does not exist");
    tree.add_int(cmd, "partitions", &f->partitions,
                 "with --create: partition count (0 = server default)");
    cmd->add_flag("--json", f->json, "print a machine-readable result on stdout");
    cmd->add_option("--servers", f->servers,
                    "spread the connections over these nodes (host:port or URL, comma-separated); "
                    "default: the selected server")
        ->delimiter(',');
    tree.add_int(cmd, "threads", &f->threads,
                 "client threads per connection group when not rate-limited");
    tree.add_duration(cmd, "drain-timeout", &f->drain_timeout_ns,
                      "with --consume: stop draining this long after producing ends (default 30s)");
    CommandEnv& env = tree.env();
    tree.set_action(cmd, f, ArgRule::exact(1), [f, &env] { return run_bench(*f, env); });
}

}  // namespace narad::cli
