#include "node/data_dir_metrics.h"

#include <gtest/gtest.h>

#include "meta/etcd_test_support.h"
#include "meta/fake_meta_store.h"

namespace narad::node {
namespace {

class DataDirMetricsTest : public ::testing::Test {
  protected:
    void SetUp() override {
        data_ = dir_.path();
        logs_ = std::make_unique<storage::LogManager>(fs_, clock_, data_, storage::LogOptions{});
        metrics_ = std::make_unique<DataDirMetrics>(fs_, clock_, data_, store_, *logs_, registry_);
    }

    // The value of a gauge without labels after a scrape.
    double scraped(const char* name) {
        registry_.render();
        return registry_.gauge(name, "").get().value();
    }
    // Whether a labelled gauge has a series whose first label is `topic`.
    bool has_series_of(const char* name, const std::string& topic) {
        bool found = false;
        registry_.gauge(name, "").for_each([&](const metrics::Labels& labels, auto&) {
            if (!labels.empty() && labels[0] == topic) found = true;
        });
        return found;
    }
    void write(const std::string& relative, size_t bytes) {
        std::string path = io::join_path(data_, relative);
        ASSERT_TRUE(fs_.create_directories(io::parent_path(path)).is_ok());
        ASSERT_TRUE(io::write_file_atomically(fs_, path, std::string(bytes, 'x')).is_ok());
    }

    meta::testing::TempDir dir_;
    std::string data_;
    io::FileSystem& fs_ = io::posix_file_system();
    FakeClock clock_;
    meta::FakeMetaStore store_;
    metrics::Registry registry_;
    std::unique_ptr<storage::LogManager> logs_;
    std::unique_ptr<DataDirMetrics> metrics_;
};

// Rule: the data directory's size counts the bytes of every regular file under it, nested ones
// too, but not temporary `.tmp` files; the free bytes are its disk's.
TEST_F(DataDirMetricsTest, SizeCountsRegularFilesButNotTemporaryOnes) {
    write("audit.log", 100);
    write("ingress/000.wal", 50);
    write("topics/t/p00000/x.tmp", 1000);
    // Measured here; the measuring thread's first pass finds the same files.
    metrics_->measure();
    metrics_->start();
    EXPECT_EQ(scraped("narad_data_dir_size_bytes"), 150.0);
    EXPECT_GT(scraped("narad_data_dir_available_bytes"), 0.0);
    metrics_->stop();
}

// Rule: each scrape reports the metastore's topics and, per partition with an open log here, its
// bytes and segments; a topic deleted since the last scrape loses its series, and after stop()
// scrapes no longer run the collector.
TEST_F(DataDirMetricsTest, ReportsOpenPartitionsAndDropsDeletedTopics) {
    ASSERT_TRUE(store_.create_topic_owned_by("kept", {"n", "n"}).is_ok());
    ASSERT_TRUE(store_.create_topic_owned_by("dropped", {"n"}).is_ok());
    for (const char* topic : {"kept", "dropped"}) {
        auto log = logs_->get(topic, PartitionId(0), storage::CreateIfMissing::yes);
        ASSERT_TRUE(log.is_ok()) << log.status().to_string();
        std::vector<storage::Record> records = {storage::Record{"", "value", 0, {}}};
        ASSERT_TRUE((*log)->append(records).is_ok());
    }
    metrics_->start();
    EXPECT_EQ(scraped("narad_topics_total"), 2.0);
    EXPECT_EQ(scraped("narad_partitions_total"), 2.0);  // kept's partition 1 has no open log
    double kept_bytes =
        static_cast<double>(logs_->get_if_open("kept", PartitionId(0))->stats().size_bytes);
    EXPECT_GT(kept_bytes, 0.0);
    EXPECT_EQ(registry_.gauge("narad_partition_size_bytes", "", {"topic", "partition"})
                  .with({"kept", "0"})
                  .value(),
              kept_bytes);
    EXPECT_EQ(registry_.gauge("narad_topic_bytes", "", {"topic"}).with({"kept"}).value(),
              kept_bytes);
    EXPECT_TRUE(has_series_of("narad_segments", "dropped"));

    store_.update([](meta::MetaState& state) { state.topics.erase("dropped"); });
    EXPECT_EQ(scraped("narad_topics_total"), 1.0);
    for (const char* family :
         {"narad_topic_bytes", "narad_partition_size_bytes", "narad_segments"}) {
        EXPECT_FALSE(has_series_of(family, "dropped")) << family;
        EXPECT_TRUE(has_series_of(family, "kept")) << family;
    }

    metrics_->stop();
    ASSERT_TRUE(store_.create_topic_owned_by("later", {"n"}).is_ok());
    EXPECT_EQ(scraped("narad_topics_total"), 1.0) << "the collector still runs after stop()";
}

}  // namespace
}  // namespace narad::node
