#include "cli/dev_cluster.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace narad::cli {
namespace {

auto no_data = [](const std::string&) { return false; };

std::vector<DevNodePlan> plan(const DevClusterOptions& options,
                              const std::function<bool(const std::string&)>& has_data = no_data) {
    auto nodes = plan_dev_cluster(options, has_data);
    EXPECT_TRUE(nodes.is_ok()) << nodes.status().to_string();
    return nodes.is_ok() ? *nodes : std::vector<DevNodePlan>{};
}

// The value after `flag` in `args`, or "" when the flag is absent.
std::string flag_value(const std::vector<std::string>& args, const std::string& flag) {
    auto it = std::find(args.begin(), args.end(), flag);
    return it == args.end() || it + 1 == args.end() ? "" : *(it + 1);
}

// Rule: node i (from 0) gets API base+10i, cluster +1, etcd client +2, etcd peer +3, with data in
// D/n<i+1> and its log beside it; no two ports collide.
TEST(DevClusterPlan, PortLayoutStepsByTenFromTheBasePort) {
    auto nodes = plan({5, 7950, "/tmp/dc"});
    ASSERT_EQ(nodes.size(), 5u);
    std::set<uint16_t> ports;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const DevNodePlan& node = nodes[i];
        const auto base = static_cast<uint16_t>(7950 + 10 * i);
        EXPECT_EQ(node.id, "n" + std::to_string(i + 1));
        EXPECT_EQ(node.api_port, base);
        EXPECT_EQ(node.cluster_port, base + 1);
        EXPECT_EQ(node.etcd_client_port, base + 2);
        EXPECT_EQ(node.etcd_peer_port, base + 3);
        EXPECT_EQ(node.data_dir, "/tmp/dc/" + node.id);
        EXPECT_EQ(node.log_path, "/tmp/dc/" + node.id + ".log");
        for (uint16_t port :
             {node.api_port, node.cluster_port, node.etcd_client_port, node.etcd_peer_port}) {
            EXPECT_TRUE(ports.insert(port).second) << "port " << port << " used twice";
        }
    }
}

// Rule: n1 bootstraps (no --join); every other new node joins through n1's cluster port; each gets
// the contract's serve flags with its own values; only the first 3 host etcd.
TEST(DevClusterPlan, NewNodesJoinThroughNodeOne) {
    auto nodes = plan({4, 8000, "data/"});
    ASSERT_EQ(nodes.size(), 4u);
    EXPECT_EQ(flag_value(nodes[0].args, "--join"), "");
    EXPECT_TRUE(nodes[0].join.empty());
    for (size_t i = 1; i < nodes.size(); ++i) {
        EXPECT_EQ(nodes[i].join, "127.0.0.1:8001");
        EXPECT_EQ(flag_value(nodes[i].args, "--join"), "127.0.0.1:8001");
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
        const auto& args = nodes[i].args;
        EXPECT_EQ(flag_value(args, "--node-id"), nodes[i].id);
        EXPECT_EQ(flag_value(args, "--data-dir"), "data/" + nodes[i].id);
        EXPECT_EQ(flag_value(args, "--addr"), "127.0.0.1:" + std::to_string(8000 + 10 * i));
        EXPECT_EQ(flag_value(args, "--cluster-port"), std::to_string(8001 + 10 * i));
        EXPECT_EQ(flag_value(args, "--etcd-client-port"), std::to_string(8002 + 10 * i));
        EXPECT_EQ(flag_value(args, "--etcd-peer-port"), std::to_string(8003 + 10 * i));
        EXPECT_EQ(nodes[i].hosts_etcd, i < 3);
    }
}

// Rule: a node whose data directory holds data restarts into its cluster without --join; a new
// node beside them still joins through n1.
TEST(DevClusterPlan, NodesWithDataRestartWithoutJoin) {
    auto nodes = plan({4, 7950, "/d"}, [](const std::string& dir) { return dir != "/d/n4"; });
    ASSERT_EQ(nodes.size(), 4u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_TRUE(nodes[i].has_data);
        EXPECT_EQ(flag_value(nodes[i].args, "--join"), "") << nodes[i].id;
    }
    EXPECT_FALSE(nodes[3].has_data);
    EXPECT_EQ(flag_value(nodes[3].args, "--join"), "127.0.0.1:7951");
}

// Rule: a new n1 beside nodes with data is refused: it would bootstrap a second cluster.
TEST(DevClusterPlan, EmptyNodeOneBesideOldNodesIsRefused) {
    auto nodes =
        plan_dev_cluster({3, 7950, "/d"}, [](const std::string& dir) { return dir == "/d/n2"; });
    ASSERT_FALSE(nodes.is_ok());
    EXPECT_EQ(nodes.code(), Errc::invalid_argument);
    EXPECT_NE(nodes.status().message().find("/d/n1"), std::string::npos);
}

// Rule: node counts outside 1..9, ports that leave 1024..65535 and an empty data dir are
// invalid arguments; the edges are accepted.
TEST(DevClusterPlan, RefusesBadCountsAndPorts) {
    for (const DevClusterOptions& bad :
         {DevClusterOptions{0, 7950, "d"}, DevClusterOptions{10, 7950, "d"},
          DevClusterOptions{3, 1023, "d"}, DevClusterOptions{3, 65513, "d"},
          DevClusterOptions{3, 7950, ""}}) {
        auto nodes = plan_dev_cluster(bad, no_data);
        ASSERT_FALSE(nodes.is_ok()) << bad.nodes << " nodes from " << bad.base_port;
        EXPECT_EQ(nodes.code(), Errc::invalid_argument);
    }
    EXPECT_EQ(plan({1, 1024, "d"}).size(), 1u);
    auto last = plan({3, 65512, "d"});  // n3's etcd peer port is 65535
    ASSERT_EQ(last.size(), 3u);
    EXPECT_EQ(last[2].etcd_peer_port, 65535);
}

// Rule: every node gets auth off and the shared secret, and no inherited per-node setting (id,
// addresses, data dir, peers) or old secret; other variables pass through.
TEST(DevClusterEnvironment, SharedSecretAuthOffAndNoPerNodeSettings) {
    auto environment = dev_node_environment(
        {"PATH=/bin", "NARAD_NODE_ID=x", "NARAD_DATA_DIR=/x", "NARAD_HTTP_ADDR=:1",
         "NARAD_CLUSTER_ADDR=:2", "NARAD_CLUSTER_PEERS=a@b:1", "NARAD_CLUSTER_INITIAL_MEMBERS=a",
         "NARAD_SECURITY_ENABLED=true", "NARAD_CLUSTER_SECRET=old", "NARAD_LOG_LEVEL=debug",
         "NARAD_CLUSTER_DEAD_AFTER=5s"},
        "s3cret");
    std::vector<std::string> expected = {
        "PATH=/bin", "NARAD_LOG_LEVEL=debug", "NARAD_CLUSTER_DEAD_AFTER=5s",
        "NARAD_SECURITY_ENABLED=false", "NARAD_CLUSTER_SECRET=s3cret"};
    EXPECT_EQ(environment, expected);
}

// Rule: a secret is 32 lowercase hex digits built from four random words.
TEST(DevClusterEnvironment, SecretIsThirtyTwoHexDigits) {
    uint32_t next = 0xdeadbeef;
    std::string secret = make_cluster_secret([&] { return next++; });
    EXPECT_EQ(secret, "deadbeefdeadbef0deadbef1deadbef2");
}

// Rule: the table lists every node's API URL, cluster address and log, and etcd ports only for
// the nodes that host etcd.
TEST(DevClusterTable, ListsAddressesAndMarksEtcdClients) {
    auto nodes = plan({4, 7950, "/d"});
    std::string table = format_dev_cluster_table(nodes);
    EXPECT_EQ(table,
              "NODE  API                    CLUSTER         ETCD CLIENT     ETCD PEER       LOG\n"
              "n1    http://127.0.0.1:7950  127.0.0.1:7951  127.0.0.1:7952  127.0.0.1:7953  "
              "/d/n1.log\n"
              "n2    http://127.0.0.1:7960  127.0.0.1:7961  127.0.0.1:7962  127.0.0.1:7963  "
              "/d/n2.log\n"
              "n3    http://127.0.0.1:7970  127.0.0.1:7971  127.0.0.1:7972  127.0.0.1:7973  "
              "/d/n3.log\n"
              "n4    http://127.0.0.1:7980  127.0.0.1:7981  -               -               "
              "/d/n4.log\n");
}

}  // namespace
}  // namespace narad::cli
