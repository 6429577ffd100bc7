#include "node/cluster_runtime.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "io/file_system.h"
#include "meta/etcd_test_support.h"
#include "meta/local_meta_store.h"

namespace narad::node {
namespace {

ClusterRuntimeOptions runtime_options(const std::string& data_dir) {
    auto ports = meta::testing::free_ports(2);
    ClusterRuntimeOptions options;
    options.node_id = NodeId("solo");
    options.data_dir = data_dir;
    options.api_addr = "127.0.0.1:1";
    options.cluster_addr = "127.0.0.1:2";
    options.etcd_client_port = ports[0];
    options.etcd_peer_port = ports[1];
    return options;
}

// Rule: the first start of a new cluster on a data directory of the single-node release moves its
// topics into etcd, every partition owned by this node, and does so once.
TEST(ClusterRuntimeTest, ImportsTheSingleNodeMetastoreOnce) {
    meta::testing::TempDir dir;
    std::string meta_dir = dir.path() + "/meta";
    {
        auto local = meta::LocalMetaStore::open(io::posix_file_system(), meta_dir).value();
        meta::Topic topic;
        topic.name = "orders";
        topic.partitions = 4;
        topic.incarnation = IncarnationId("00000000000000ab");
        ASSERT_TRUE(local->create_topic_on(topic, NodeId("old-host-name")).is_ok());
    }
    auto runtime = ClusterRuntime::start(runtime_options(dir.path()), SystemClock::instance());
    ASSERT_TRUE(runtime.is_ok()) << runtime.status().to_string();
    meta::MetaSnapshot state = (*runtime)->store().snapshot();
    const meta::Topic* orders = state->find_topic("orders");
    ASSERT_NE(orders, nullptr);
    EXPECT_EQ(orders->incarnation, IncarnationId("00000000000000ab"));
    for (uint32_t p = 0; p < 4; ++p) {
        const meta::Assignment* assignment = state->find_assignment("orders", PartitionId(p));
        ASSERT_NE(assignment, nullptr);
        EXPECT_EQ(assignment->owner, NodeId("solo"));
    }
    EXPECT_FALSE(std::filesystem::exists(meta_dir + "/state"));
    EXPECT_TRUE(std::filesystem::exists(meta_dir + "/state.imported"));
    (*runtime)->stop();
}

// Rule: a data directory that belongs to another cluster is refused, and nothing is started.
TEST(ClusterRuntimeTest, RefusesAnotherClustersDataDirectory) {
    meta::testing::TempDir dir;
    {
        auto runtime = ClusterRuntime::start(runtime_options(dir.path()), SystemClock::instance());
        ASSERT_TRUE(runtime.is_ok()) << runtime.status().to_string();
        (*runtime)->stop();
    }
    ClusterRuntimeOptions other = runtime_options(dir.path());
    other.cluster_name = "elsewhere";
    auto refused = ClusterRuntime::start(other, SystemClock::instance());
    ASSERT_FALSE(refused.is_ok());
    EXPECT_EQ(refused.code(), Errc::invalid_argument);
    EXPECT_NE(refused.status().message().find("belongs to cluster 'narad'"), std::string::npos)
        << refused.status().message();
}

}  // namespace
}  // namespace narad::node
