// `narad dev-cluster` planning, as pure functions: the port layout and `narad serve` arguments of
// each node of a local cluster on 127.0.0.1, the environment they share (a generated cluster
// secret, auth off), the order they start in, and the table printed once they are up. The process
// side (spawn, wait for readiness, stop) is dev_cluster_runner.h. Pure; any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace narad::cli {

inline constexpr int64_t kDevClusterBasePort = 7950;
// Node i (from 0) uses base + 10 i for its API, + 1 cluster, + 2 etcd client, + 3 etcd peer.
inline constexpr int64_t kDevClusterPortStride = 10;
inline constexpr int64_t kDevClusterMaxNodes = 9;
// The nodes that host etcd members (the node's cluster.voters default); the rest are clients.
inline constexpr int64_t kDevClusterVoters = 3;
inline constexpr const char* kDevClusterDataDir = "dev-cluster";

struct DevClusterOptions {
    int64_t nodes = 3;
    int64_t base_port = kDevClusterBasePort;
    std::string data_dir = kDevClusterDataDir;
};

struct DevNodePlan {
    std::string id;  // "n1"
    uint16_t api_port = 0;
    uint16_t cluster_port = 0;
    uint16_t etcd_client_port = 0;
    uint16_t etcd_peer_port = 0;
    std::string data_dir;  // <D>/n1
    std::string log_path;  // <D>/n1.log
    // The node already has data: it restarts into its cluster (no --join) and starts together
    // with the other such nodes, since its etcd member needs a quorum before it is ready.
    bool has_data = false;
    bool hosts_etcd = false;        // one of the first kDevClusterVoters nodes
    std::string join;               // "127.0.0.1:<n1's cluster port>" for a new node after n1
    std::vector<std::string> args;  // the `narad serve` arguments, after "serve"

    std::string api_address() const { return "127.0.0.1:" + std::to_string(api_port); }
    std::string cluster_address() const { return "127.0.0.1:" + std::to_string(cluster_port); }
};

// Lays out `options.nodes` nodes. `has_data(dir)` says whether a node's data directory already
// holds a node (a restart). Refuses a node count outside 1..9, ports outside 1024..65535 and a
// new n1 beside existing nodes (it would bootstrap a second cluster).
Result<std::vector<DevNodePlan>> plan_dev_cluster(
    const DevClusterOptions& options, const std::function<bool(const std::string&)>& has_data);

// The environment of every node: `inherited` ("KEY=VALUE" entries) without the per-node NARAD_*
// settings that the flags decide (ids, addresses, data dir, peers), plus auth off and `secret`.
std::vector<std::string> dev_node_environment(const std::vector<std::string>& inherited,
                                              const std::string& secret);

// A cluster secret: 32 hex digits from `random` (called 4 times).
std::string make_cluster_secret(const std::function<uint32_t()>& random);

// The table printed once every node is ready.
std::string format_dev_cluster_table(const std::vector<DevNodePlan>& nodes);

}  // namespace narad::cli
