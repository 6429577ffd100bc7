#include "cli/dev_cluster.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace narad::cli {
namespace {

// Settings a node takes from its flags; inherited values would make every node the same one.
constexpr std::array<std::string_view, 8> kPerNodeVariables = {
    "NARAD_NODE_ID", "NARAD_DATA_DIR", "NARAD_HTTP_ADDR", "NARAD_CLUSTER_ADDR",
    "NARAD_CLUSTER_PEERS", "NARAD_CLUSTER_INITIAL_MEMBERS",
    // Replaced below.
    "NARAD_SECURITY_ENABLED", "NARAD_CLUSTER_SECRET"};

std::string pad(std::string text, size_t width) {
    if (text.size() < width) text.append(width - text.size(), ' ');
    return text;
}

}  // namespace

Result<std::vector<DevNodePlan>> plan_dev_cluster(
    const DevClusterOptions& options, const std::function<bool(const std::string&)>& has_data) {
    if (options.nodes < 1 || options.nodes > kDevClusterMaxNodes) {
        return Status(Errc::invalid_argument,
                      "--nodes must be between 1 and " + std::to_string(kDevClusterMaxNodes));
    }
    const int64_t last_port = options.base_port + kDevClusterPortStride * (options.nodes - 1) + 3;
    if (options.base_port < 1024 || last_port > 65535) {
        return Status(Errc::invalid_argument,
                      "--base-port must leave every node's ports within 1024..65535 (" +
                          std::to_string(options.nodes) + " nodes use " +
                          std::to_string(options.base_port) + ".." + std::to_string(last_port) +
                          ")");
    }
    if (options.data_dir.empty()) {
        return Status(Errc::invalid_argument, "--data-dir must not be empty");
    }
    std::string root = options.data_dir;
    while (root.size() > 1 && root.back() == '/') root.pop_back();

    std::vector<DevNodePlan> nodes;
    for (int64_t i = 0; i < options.nodes; ++i) {
        DevNodePlan node;
        node.id = "n" + std::to_string(i + 1);
        const auto base = static_cast<uint16_t>(options.base_port + kDevClusterPortStride * i);
        node.api_port = base;
        node.cluster_port = static_cast<uint16_t>(base + 1);
        node.etcd_client_port = static_cast<uint16_t>(base + 2);
        node.etcd_peer_port = static_cast<uint16_t>(base + 3);
        node.data_dir = root + "/" + node.id;
        node.log_path = root + "/" + node.id + ".log";
        node.has_data = has_data(node.data_dir);
        node.hosts_etcd = i < kDevClusterVoters;
        nodes.push_back(std::move(node));
    }
    const bool any_data = std::any_of(nodes.begin(), nodes.end(),
                                      [](const DevNodePlan& node) { return node.has_data; });
    if (any_data && !nodes.front().has_data) {
        return Status(Errc::invalid_argument,
                      nodes.front().data_dir +
                          " is empty but other nodes have data: a new n1 would start a second "
                          "cluster; remove " +
                          root + " to start afresh");
    }
    for (DevNodePlan& node : nodes) {
        // A node with data finds its cluster in <data>/cluster.json; only new nodes join, and
        // they join through n1, which is up (bootstrapped or restarted) before them.
        if (!node.has_data && node.id != nodes.front().id) {
            node.join = nodes.front().cluster_address();
        }
        node.args = {"--node-id",
                     node.id,
                     "--data-dir",
                     node.data_dir,
                     "--addr",
                     node.api_address(),
                     "--cluster-port",
                     std::to_string(node.cluster_port),
                     "--etcd-client-port",
                     std::to_string(node.etcd_client_port),
                     "--etcd-peer-port",
                     std::to_string(node.etcd_peer_port),
                     "--log-format",
                     "text"};
        if (!node.join.empty()) {
            node.args.push_back("--join");
            node.args.push_back(node.join);
        }
    }
    return nodes;
}

std::vector<std::string> dev_node_environment(const std::vector<std::string>& inherited,
                                              const std::string& secret) {
    std::vector<std::string> environment;
    for (const std::string& entry : inherited) {
        const std::string_view name = std::string_view(entry).substr(0, entry.find('='));
        if (std::find(kPerNodeVariables.begin(), kPerNodeVariables.end(), name) !=
            kPerNodeVariables.end()) {
            continue;
        }
        environment.push_back(entry);
    }
    // A playground, as `server start --dev`: auth off; the nodes are bound to loopback.
    environment.push_back("NARAD_SECURITY_ENABLED=false");
    environment.push_back("NARAD_CLUSTER_SECRET=" + secret);
    return environment;
}

std::string make_cluster_secret(const std::function<uint32_t()>& random) {
    std::string secret;
    for (int i = 0; i < 4; ++i) {
        char word[9];
        std::snprintf(word, sizeof word, "%08x", random());
        secret += word;
    }
    return secret;
}

std::string format_dev_cluster_table(const std::vector<DevNodePlan>& nodes) {
    const std::array<std::string, 6> header = {"NODE",        "API",       "CLUSTER",
                                               "ETCD CLIENT", "ETCD PEER", "LOG"};
    std::vector<std::array<std::string, 6>> rows = {header};
    for (const DevNodePlan& node : nodes) {
        const std::string loopback = "127.0.0.1:";
        rows.push_back({node.id, "http://" + node.api_address(), node.cluster_address(),
                        node.hosts_etcd ? loopback + std::to_string(node.etcd_client_port) : "-",
                        node.hosts_etcd ? loopback + std::to_string(node.etcd_peer_port) : "-",
                        node.log_path});
    }
    std::array<size_t, 6> widths{};
    for (const auto& row : rows) {
        for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
    }
    std::string out;
    for (const auto& row : rows) {
        std::string line;
        for (size_t c = 0; c < row.size(); ++c) {
            line += c + 1 == row.size() ? row[c] : pad(row[c], widths[c] + 2);
        }
        out += line + "\n";
    }
    return out;
}

}  // namespace narad::cli
