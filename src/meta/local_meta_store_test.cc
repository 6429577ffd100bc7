#include "meta/local_meta_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "io/fault_injection_fs.h"
#include "meta/codec.h"

namespace narad::meta {
namespace {

class LocalMetaStoreTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char pattern[] = "/tmp/narad-meta-XXXXXX";
        dir_ = ::mkdtemp(pattern);
    }
    void TearDown() override { (void)io::posix_file_system().remove_all(dir_); }

    Topic topic(std::string name, uint32_t partitions = 3) {
        Topic t;
        t.name = std::move(name);
        t.partitions = partitions;
        t.incarnation = IncarnationId("inc-" + t.name);
        return t;
    }

    std::string dir_;
    io::FaultInjectionFileSystem fs_;
    NodeId node_{"n1"};
};

// Rule: an acknowledged topic change survives a crash: it is durable before create returns.
TEST_F(LocalMetaStoreTest, CreatedTopicSurvivesACrash) {
    {
        auto store = LocalMetaStore::open(fs_, dir_).value();
        ASSERT_TRUE(store->create_topic_on(topic("orders", 4), node_).is_ok());
    }
    ASSERT_TRUE(fs_.drop_unsynced_data().is_ok());
    auto store = LocalMetaStore::open(fs_, dir_).value();
    const Topic* found = store->snapshot()->find_topic("orders");
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(found->partitions, 4u);
    EXPECT_EQ(store->snapshot()->assignments.size(), 4u);
    EXPECT_EQ(store->snapshot()->find_assignment("orders", PartitionId(3))->owner, node_);
}

// Rule: a failed write changes nothing, neither on disk nor in the published snapshot.
TEST_F(LocalMetaStoreTest, FailedWriteChangesNothing) {
    auto store = LocalMetaStore::open(fs_, dir_).value();
    uint64_t revision = store->snapshot()->revision;
    fs_.fail(io::FsOp::sync, "state");
    EXPECT_FALSE(store->create_topic_on(topic("orders"), node_).is_ok());
    EXPECT_EQ(store->snapshot()->find_topic("orders"), nullptr);
    EXPECT_EQ(store->snapshot()->revision, revision);
    auto reopened = LocalMetaStore::open(fs_, dir_).value();
    EXPECT_EQ(reopened->snapshot()->find_topic("orders"), nullptr);
}

// Rule: a state file that fails its checksum stops the node instead of forgetting topics.
TEST_F(LocalMetaStoreTest, CorruptStateFileIsRefused) {
    {
        auto store = LocalMetaStore::open(fs_, dir_).value();
        ASSERT_TRUE(store->create_topic_on(topic("orders"), node_).is_ok());
    }
    std::string path = io::join_path(dir_, "state");
    std::string contents = io::read_file(fs_, path).value();
    contents[contents.find("orders")] = 'O';
    auto file = fs_.open(path, io::kReadWrite).value();
    ASSERT_TRUE(file->write_at(0, contents).is_ok());
    auto reopened = LocalMetaStore::open(fs_, dir_);
    ASSERT_FALSE(reopened.is_ok());
    EXPECT_EQ(reopened.code(), Errc::corrupt);
}

// Rule: names are unique; delete removes the topic and its assignments; watchers see each change.
TEST_F(LocalMetaStoreTest, CreateDeleteAndWatch) {
    auto store = LocalMetaStore::in_memory();
    std::vector<uint64_t> revisions;
    store->watch([&](const MetaSnapshot& s) { revisions.push_back(s->revision); });
    ASSERT_TRUE(store->create_topic_on(topic("a"), node_).is_ok());
    EXPECT_EQ(store->create_topic_on(topic("a"), node_).code(), Errc::already_exists);
    ASSERT_TRUE(store->delete_topic("a").is_ok());
    EXPECT_EQ(store->delete_topic("a").code(), Errc::not_found);
    EXPECT_TRUE(store->snapshot()->assignments.empty());
    EXPECT_EQ(revisions, (std::vector<uint64_t>{1, 2}));
}

// Rule: an update applies only to the incarnation it names, and growing adds assignments.
TEST_F(LocalMetaStoreTest, UpdateIsBoundToTheIncarnation) {
    auto store = LocalMetaStore::in_memory();
    ASSERT_TRUE(store->create_topic_on(topic("a"), node_).is_ok());
    Topic grown = topic("a", 5);
    ASSERT_TRUE(store->update_topic_on(grown, node_).is_ok());
    EXPECT_EQ(store->snapshot()->assignments.size(), 5u);
    Topic stale = grown;
    stale.incarnation = IncarnationId("other");
    EXPECT_EQ(store->update_topic_on(stale, node_).code(), Errc::not_found);
}

// Rule: a topic record keeps its whole schema history; a record written before histories were
// kept (a lone "schema") reads as version 1 of it.
TEST(TopicCodecTest, SchemaHistoryRoundTrips) {
    Topic topic;
    topic.name = "t";
    topic.incarnation = IncarnationId("0123456789abcdef");
    topic.add_schema_version(R"({"type":"integer"})");
    topic.add_schema_version(R"({"type":"number"})");
    Topic read = decode_topic(encode_topic(topic)).value();
    EXPECT_EQ(read.schema_versions, topic.schema_versions);
    EXPECT_EQ(read.schema(), R"({"type":"number"})");
    EXPECT_EQ(read.schema_version(), 2u);

    std::string older =
        R"({"name":"t","incarnation":"0123456789abcdef","partitions":3,"retention_ms":0,)"
        R"("visibility_timeout_ms":30000,"max_in_flight_per_partition":1,)"
        R"("max_acked_ahead_per_partition":1,"created_at":1,"schema":"{\"type\":\"string\"}"})";
    Topic old = decode_topic(older).value();
    EXPECT_EQ(old.schema_version(), 1u);
    EXPECT_EQ(old.schema(), R"({"type":"string"})");
    EXPECT_EQ(old.schema_versions.front(), R"({"type":"string"})");
}

}  // namespace
}  // namespace narad::meta
