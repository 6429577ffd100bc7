#include "storage/retention_service.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "storage/test_util.h"

namespace narad::storage {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using testing::LogTest;

class RetentionServiceTest : public LogTest {
  protected:
    void SetUp() override {
        LogTest::SetUp();
        options_.segment_bytes_max = 500;
        manager_ =
            std::make_unique<LogManager>(fs_, clock_, io::join_path(root_, "data"), options_);
    }
    void TearDown() override {
        manager_.reset();
        LogTest::TearDown();
    }

    std::unique_ptr<RetentionService> service(RetentionOptions options) {
        return std::make_unique<RetentionService>(
            clock_, *manager_, [this] { return topics_; }, options);
    }

    // Writes enough to seal a few segments of the partition; returns its segments, all young.
    std::vector<SegmentInfo> fill(const char* topic, uint32_t partition) {
        auto log = manager_->get(topic, PartitionId(partition), CreateIfMissing::yes);
        EXPECT_TRUE(log.is_ok()) << log.status().to_string();
        if (!log.is_ok()) return {};
        for (int i = 0; i < 40; ++i) {
            std::vector<Record> records = {
                Record{"", "0123456789012345678901234567890123456789", 0, {}}};
            EXPECT_TRUE((*log)->append(records).is_ok());
        }
        std::vector<SegmentInfo> segments = (*log)->segments();
        EXPECT_GE(segments.size(), 3u);
        return segments;
    }
    std::string segment_file(const char* topic, uint32_t partition, const SegmentInfo& segment) {
        return io::join_path(manager_->partition_directory(topic, PartitionId(partition)),
                             fmt::format("{:020}.log", segment.base.value()));
    }
    // Makes the segment look last written `age` ago.
    void age(const char* topic, uint32_t partition, const SegmentInfo& segment,
             std::chrono::nanoseconds by) {
        ASSERT_TRUE(
            fs_.set_modified(segment_file(topic, partition, segment), clock_.wall_now() - by)
                .is_ok());
    }
    bool exists(const char* topic, uint32_t partition, const SegmentInfo& segment) {
        return fs_.exists(segment_file(topic, partition, segment));
    }

    std::unique_ptr<LogManager> manager_;
    std::vector<TopicRetention> topics_;
};

// Rule: each pass deletes the expired sealed segments of every open log and nothing younger,
// leaves the log open, and never touches a topic that keeps its records forever (retention 0).
TEST_F(RetentionServiceTest, DeletesOnlyExpiredSegmentsOfOpenLogs) {
    topics_ = {{"hot", 1, hours(1)}, {"forever", 1, Millis(0)}};
    std::vector<SegmentInfo> hot = fill("hot", 0);
    std::vector<SegmentInfo> forever = fill("forever", 0);
    age("hot", 0, hot[0], hours(2));
    age("hot", 0, hot[1], minutes(10));
    for (const SegmentInfo& segment : forever) age("forever", 0, segment, hours(100));

    service({})->run_once();

    EXPECT_FALSE(exists("hot", 0, hot[0]));
    EXPECT_TRUE(exists("hot", 0, hot[1]));
    for (const SegmentInfo& segment : forever) EXPECT_TRUE(exists("forever", 0, segment));
    EXPECT_EQ(manager_->open_count(), 2u);
}

// Rule: closed logs are walked by the first pass and then only by a pass at least
// cold_walk_interval after the last walk; a walk deletes their expired segments and leaves them
// closed.
TEST_F(RetentionServiceTest, ColdWalkRunsEveryWalkIntervalAndLeavesLogsClosed) {
    topics_ = {{"cold", 1, hours(1)}};
    std::vector<SegmentInfo> segments = fill("cold", 0);
    manager_->close_all();
    auto retention = service({.cold_walk_interval = minutes(5)});

    age("cold", 0, segments[0], hours(2));
    retention->run_once();
    EXPECT_FALSE(exists("cold", 0, segments[0]));
    EXPECT_EQ(manager_->open_count(), 0u);

    age("cold", 0, segments[1], hours(2));
    clock_.advance(minutes(4));
    retention->run_once();
    EXPECT_TRUE(exists("cold", 0, segments[1])) << "walked again before the interval was over";

    clock_.advance(minutes(1));
    retention->run_once();
    EXPECT_FALSE(exists("cold", 0, segments[1]));
    EXPECT_EQ(manager_->open_count(), 0u);
}

// Rule: with the cold walk off, a pass never opens a closed log, however old its segments.
TEST_F(RetentionServiceTest, WithoutTheColdWalkClosedLogsStayUntouched) {
    topics_ = {{"cold", 1, hours(1)}};
    std::vector<SegmentInfo> segments = fill("cold", 0);
    manager_->close_all();
    age("cold", 0, segments[0], hours(2));

    service({.cold_walk_interval = Millis(0)})->run_once();

    EXPECT_TRUE(exists("cold", 0, segments[0]));
    EXPECT_EQ(manager_->open_count(), 0u);
}

// Rule: a pass closes the logs untouched for idle_eviction; with eviction off they stay open.
TEST_F(RetentionServiceTest, ClosesIdleLogsOnlyWhenEvictionIsOn) {
    topics_ = {{"idle", 1, Millis(0)}};
    fill("idle", 0);
    clock_.advance(minutes(2));

    service({.idle_eviction = Millis(0)})->run_once();
    EXPECT_EQ(manager_->open_count(), 1u);

    service({.idle_eviction = minutes(3)})->run_once();
    EXPECT_EQ(manager_->open_count(), 1u) << "closed before it was idle long enough";

    service({.idle_eviction = minutes(1)})->run_once();
    EXPECT_EQ(manager_->open_count(), 0u);
}

}  // namespace
}  // namespace narad::storage
