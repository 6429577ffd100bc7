#include "node/topic_backend.h"

#include <gtest/gtest.h>

#include "meta/etcd_test_support.h"
#include "meta/fake_meta_store.h"
#include "queue/offset_committer.h"

namespace narad::node {
namespace {

meta::Topic topic_of(std::string name, std::string incarnation) {
    meta::Topic topic;
    topic.name = std::move(name);
    topic.incarnation = IncarnationId(std::move(incarnation));
    topic.partitions = 1;
    return topic;
}

// Rule: a change of the metastore leaves behind the data of the topics it deleted and of those it
// deleted and recreated (another incarnation), and of no other; a change that did not touch the
// topics leaves nothing.
TEST(TopicsDropped, AreTheDeletedAndTheRecreated) {
    meta::MetaState before;
    before.topics_version = 1;
    for (const char* name : {"kept", "deleted", "recreated"}) {
        before.topics[name] = topic_of(name, "inc-1");
    }
    meta::MetaState after = before;
    after.topics_version = 2;
    after.topics.erase("deleted");
    after.topics["recreated"].incarnation = IncarnationId("inc-2");
    after.topics["created"] = topic_of("created", "inc-1");
    EXPECT_EQ(topics_dropped(before, after), (std::vector<std::string>{"deleted", "recreated"}));

    meta::MetaState unchanged = before;
    unchanged.revision = before.revision + 5;
    EXPECT_TRUE(topics_dropped(before, unchanged).empty());
}

class DeletedTopicPurgerTest : public ::testing::Test {
  protected:
    void SetUp() override {
        data_ = dir_.path();
        logs_ = std::make_unique<storage::LogManager>(fs_, clock_, data_, storage::LogOptions{});
        offsets_ = std::make_unique<queue::OffsetCommitter>(fs_, clock_, Millis(1'000));
        consume_ = std::make_unique<queue::ConsumeService>(fs_, clock_, store_, *logs_, guards_,
                                                           *offsets_);
        backend_ = std::make_unique<TopicBackend>(fs_, data_, store_, *logs_, guards_, *consume_);
    }
    void TearDown() override {
        if (watch_id_ != 0) store_.unwatch(watch_id_);
    }

    // Creates the topic in the metastore and writes a record into its partition 0 here.
    void create_with_data(const std::string& name, const std::string& incarnation) {
        ASSERT_TRUE(store_.create_topic_owned_by(name, {"n"}, incarnation).is_ok());
        ASSERT_TRUE(storage::prepare_topic_directory(fs_, logs_->topic_directory(name),
                                                     IncarnationId(incarnation))
                        .is_ok());
        auto log = logs_->get(name, PartitionId(0), storage::CreateIfMissing::yes);
        ASSERT_TRUE(log.is_ok()) << log.status().to_string();
        std::vector<storage::Record> records = {storage::Record{"", "value", 0, {}}};
        ASSERT_TRUE((*log)->append(records).is_ok());
    }
    bool has_data(const std::string& name) { return fs_.exists(logs_->topic_directory(name)); }

    meta::testing::TempDir dir_;
    std::string data_;
    io::FileSystem& fs_ = io::posix_file_system();
    FakeClock clock_;
    meta::FakeMetaStore store_;
    storage::TopicGuards guards_;
    std::unique_ptr<storage::LogManager> logs_;
    std::unique_ptr<queue::OffsetCommitter> offsets_;
    std::unique_ptr<queue::ConsumeService> consume_;
    std::unique_ptr<TopicBackend> backend_;
    uint64_t watch_id_ = 0;
};

// Rule: when the metastore (changed through another node) deletes a topic, or deletes and
// recreates it, this node's data of the old incarnation is purged on the pool; the data of a topic
// the change did not drop stays.
TEST_F(DeletedTopicPurgerTest, PurgesOnlyTheOldIncarnationsData) {
    create_with_data("kept", "inc-1");
    create_with_data("deleted", "inc-1");
    create_with_data("recreated", "inc-1");
    ThreadPool pool("test-purge", 1);
    DeletedTopicPurger purger(
        [this](std::string_view topic) { return backend_->purge_if_deleted(topic); }, pool,
        store_.snapshot());
    watch_id_ = store_.watch([&purger](const meta::MetaSnapshot& s) { purger.on_snapshot(s); });

    ASSERT_TRUE(store_.delete_topic("deleted").is_ok());
    // Deleted and recreated between two snapshots this node saw: the name is still there.
    store_.update([](meta::MetaState& state) {
        state.topics["recreated"].incarnation = IncarnationId("inc-2");
        ++state.topics_version;
    });
    pool.stop();  // runs what was queued

    EXPECT_TRUE(has_data("kept"));
    EXPECT_FALSE(has_data("deleted"));
    EXPECT_FALSE(has_data("recreated"));
    auto kept = logs_->get("kept", PartitionId(0), storage::CreateIfMissing::no);
    ASSERT_TRUE(kept.is_ok()) << kept.status().to_string();
    EXPECT_EQ((*kept)->high_watermark(), Offset(1));
}

// Rule: a topic deleted after the snapshot the purger starts from, but before the first snapshot it
// is shown (the node registers its watcher late in start-up), is still purged.
TEST_F(DeletedTopicPurgerTest, ADeleteBeforeTheFirstSnapshotIsPurged) {
    create_with_data("deleted", "inc-1");
    ThreadPool pool("test-purge", 1);
    DeletedTopicPurger purger(
        [this](std::string_view topic) { return backend_->purge_if_deleted(topic); }, pool,
        store_.snapshot());
    ASSERT_TRUE(store_.delete_topic("deleted").is_ok());
    purger.on_snapshot(store_.snapshot());
    pool.stop();  // runs what was queued
    EXPECT_FALSE(has_data("deleted"));
}

}  // namespace
}  // namespace narad::node
