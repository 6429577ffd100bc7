// narad-meta-scale: how the etcd metastore's cost grows with the cluster's size. Starts one etcd
// member, opens several replicas of the metastore on it (one per simulated node, in this process),
// creates topics through the first, and prints a markdown table: create time, the replicas'
// catch-up, memory per replica, the cost of one watch event at a small and at the full size, a
// fresh read of the whole prefix, and the move planner's time over every partition.
//
//   narad-meta-scale [--topics 1000] [--partitions 100] [--replicas 3] [--nodes 3] [--events 200]
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "base/log.h"
#include "base/loopback_ports.h"
#include "cluster/planner.h"
#include "meta/etcd_meta_store.h"
#include "meta/etcd_supervisor.h"
#include "net/etcd_transport.h"

namespace narad {
namespace {

using Steady = std::chrono::steady_clock;

double ms_since(Steady::time_point start) {
    return std::chrono::duration<double, std::milli>(Steady::now() - start).count();
}

double percentile(std::vector<double> values, double p) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    size_t index = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
    return values[std::min(index, values.size() - 1)];
}

// Resident memory of this process in MiB, after returning freed heap pages to the system.
double rss_mib() {
    ::malloc_trim(0);
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
    }
    return 0;
}

[[noreturn]] void fail(const std::string& what, const Status& status) {
    std::fprintf(stderr, "narad-meta-scale: %s: %s\n", what.c_str(), status.to_string().c_str());
    std::exit(1);
}

struct Replica {
    Replica(net::HttpEtcdTransport& transport, const std::string& endpoint)
        : client(transport, meta::EtcdClientOptions{.endpoints = {endpoint}}) {
        auto opened = meta::EtcdMetaStore::open(client, SystemClock::instance(), {});
        if (!opened.is_ok()) fail("opening a replica", opened.status());
        store = std::move(*opened);
    }
    meta::EtcdClient client;
    std::unique_ptr<meta::EtcdMetaStore> store;
};

NodeId node_name(size_t i) { return NodeId("n" + std::to_string(i + 1)); }

// Times `events` single-assignment changes made through `writer`, each until every follower's
// replica shows it: a target set on `partition`, then cleared, and so on.
std::vector<double> event_latencies(std::vector<std::unique_ptr<Replica>>& replicas,
                                    const meta::PartitionKey& partition, size_t events) {
    meta::EtcdMetaStore& writer = *replicas[0]->store;
    std::vector<double> out;
    for (size_t i = 0; i < events; ++i) {
        const meta::Assignment* now =
            writer.snapshot()->find_assignment(partition.topic, partition.partition);
        if (now == nullptr) fail("event phase", Status(Errc::not_found, "no such partition"));
        meta::Assignment expected = *now;
        NodeId target = expected.target.value().empty() ? node_name(1) : NodeId();
        auto start = Steady::now();
        auto applied = writer.set_targets({{partition, expected, target}});
        if (!applied.is_ok()) fail("setting a target", applied.status());
        int64_t revision = static_cast<int64_t>(writer.snapshot()->revision);
        for (size_t r = 1; r < replicas.size(); ++r) {
            Status reached = replicas[r]->store->wait_for_revision(revision, Millis(30'000));
            if (!reached.is_ok()) fail("waiting for a replica", reached);
        }
        out.push_back(ms_since(start));
    }
    return out;
}

meta::Topic make_topic(const std::string& name, uint32_t partitions, size_t index) {
    meta::Topic topic;
    topic.name = name;
    topic.partitions = partitions;
    char incarnation[17];
    std::snprintf(incarnation, sizeof incarnation, "%016zx", index + 1);
    topic.incarnation = IncarnationId(incarnation);
    return topic;
}

int run(size_t topics, uint32_t partitions, size_t replica_count, size_t nodes, size_t events) {
    std::string dir = (std::filesystem::temp_directory_path() / "narad-meta-scale-XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) fail("mkdtemp", Status(Errc::io_error, dir));
    meta::EtcdSupervisorOptions options;
    options.data_dir = dir + "/etcd";
    options.log_path = dir + "/etcd.log";
    auto ports = unused_loopback_ports(2);
    options.client_port = ports[0];
    options.peer_port = ports[1];
    options.extra_args = {"--quota-backend-bytes=8589934592"};
    meta::EtcdSupervisor etcd(options);
    if (Status started = etcd.start(); !started.is_ok()) fail("starting etcd", started);
    net::HttpEtcdTransport transport;

    double rss_empty = rss_mib();
    std::vector<std::unique_ptr<Replica>> replicas;
    for (size_t r = 0; r < replica_count; ++r) {
        replicas.push_back(std::make_unique<Replica>(transport, etcd.client_url()));
    }
    meta::EtcdMetaStore& writer = *replicas[0]->store;
    double rss_replicas = rss_mib();

    // One small topic first: the cost of an event while the metastore is nearly empty.
    if (auto made = writer.create_topic(make_topic("probe", 1, topics), {node_name(0)});
        !made.is_ok()) {
        fail("creating the probe topic", made.status());
    }
    meta::PartitionKey probe{"probe", PartitionId(0)};
    std::vector<double> small = event_latencies(replicas, probe, events);

    std::vector<double> creates;
    auto all_start = Steady::now();
    for (size_t t = 0; t < topics; ++t) {
        char name[32];
        std::snprintf(name, sizeof name, "topic-%05zu", t);
        std::vector<NodeId> owners;
        for (uint32_t p = 0; p < partitions; ++p) owners.push_back(node_name((t + p) % nodes));
        auto start = Steady::now();
        auto made = writer.create_topic(make_topic(name, partitions, t), owners);
        if (!made.is_ok()) fail(std::string("creating ") + name, made.status());
        creates.push_back(ms_since(start));
    }
    double create_s = ms_since(all_start) / 1000.0;
    int64_t last = static_cast<int64_t>(writer.snapshot()->revision);
    for (size_t r = 1; r < replica_count; ++r) {
        if (Status s = replicas[r]->store->wait_for_revision(last, Millis(300'000)); !s.is_ok()) {
            fail("waiting for the replicas to catch up", s);
        }
    }
    double caught_up_s = ms_since(all_start) / 1000.0;
    double rss_full = rss_mib();
    size_t assignments = writer.snapshot()->assignments.size();

    std::vector<double> large = event_latencies(replicas, probe, events);

    auto read_start = Steady::now();
    Replica fresh(transport, etcd.client_url());
    double fresh_read_ms = ms_since(read_start);

    cluster::PlannerInput input;
    input.assignments = writer.snapshot()->assignments;
    for (size_t n = 0; n <= nodes; ++n) input.receivers.insert(node_name(n));  // one node joins
    std::vector<double> plans;
    size_t planned = 0;
    for (int i = 0; i < 5; ++i) {
        auto start = Steady::now();
        planned = cluster::plan_moves(input).size();
        plans.push_back(ms_since(start));
    }

    std::printf("| measure | value |\n| --- | --- |\n");
    std::printf(
        "| metastore | %zu topics x %u partitions = %zu assignments, %zu replicas on one "
        "etcd member |\n",
        topics, partitions, assignments, replica_count);
    std::printf(
        "| create every topic through one replica | %.1f s (per topic p50 %.1f ms, p99 "
        "%.1f ms) |\n",
        create_s, percentile(creates, 0.5), percentile(creates, 0.99));
    std::printf("| every replica caught up | %.1f s after the first create |\n", caught_up_s);
    std::printf(
        "| memory per replica (process RSS growth / replicas) | %.1f MiB (%.0f B per "
        "assignment; the replicas' own baseline %.1f MiB) |\n",
        (rss_full - rss_replicas) / static_cast<double>(replica_count),
        (rss_full - rss_replicas) * 1048576.0 /
            static_cast<double>(replica_count * std::max<size_t>(assignments, 1)),
        (rss_replicas - rss_empty) / static_cast<double>(replica_count));
    std::printf(
        "| one event, written until every other replica shows it: nearly empty | p50 "
        "%.2f ms, p99 %.2f ms (%zu events) |\n",
        percentile(small, 0.5), percentile(small, 0.99), events);
    std::printf("| the same at full size | p50 %.2f ms, p99 %.2f ms (%zu events) |\n",
                percentile(large, 0.5), percentile(large, 0.99), events);
    std::printf("| a fresh replica reading the whole prefix (pages of %lld keys) | %.0f ms |\n",
                static_cast<long long>(meta::EtcdClient::kRangePageKeys), fresh_read_ms);
    std::printf(
        "| move planner over every partition, %zu nodes to %zu | p50 %.0f ms (%zu moves "
        "planned, 8 in flight at most) |\n",
        nodes, nodes + 1, percentile(plans, 0.5), planned);

    replicas.clear();
    etcd.stop();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    return 0;
}

}  // namespace
}  // namespace narad

int main(int argc, char** argv) {
    CLI::App app{"How the etcd metastore's cost grows with the number of partitions"};
    size_t topics = 1000, replicas = 3, nodes = 3, events = 200;
    uint32_t partitions = 100;
    app.add_option("--topics", topics, "topics to create")->check(CLI::Range(1, 100000));
    app.add_option("--partitions", partitions, "partitions per topic")->check(CLI::Range(1, 120));
    app.add_option("--replicas", replicas, "metastore replicas (simulated nodes)")
        ->check(CLI::Range(1, 16));
    app.add_option("--nodes", nodes, "owners the partitions are spread over")
        ->check(CLI::Range(1, 64));
    app.add_option("--events", events, "single-key changes timed per size")
        ->check(CLI::Range(1, 100000));
    CLI11_PARSE(app, argc, argv);
    narad::log::init("warn", narad::log::Format::text);  // on stderr: stdout is the table
    return narad::run(topics, partitions, replicas, nodes, events);
}
