#include "storage/log_manager.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <thread>

#include "storage/storage_metrics.h"
#include "storage/test_util.h"

namespace narad::storage {
namespace {

using testing::LogTest;

class LogManagerTest : public LogTest {
  protected:
    void SetUp() override {
        LogTest::SetUp();
        data_ = io::join_path(root_, "data");
        manager_ = std::make_unique<LogManager>(fs_, clock_, data_, options_);
    }
    void TearDown() override {
        manager_.reset();
        LogTest::TearDown();
    }
    std::shared_ptr<PartitionLog> get(const char* topic, uint32_t partition) {
        auto log = manager_->get(topic, PartitionId(partition), CreateIfMissing::yes);
        EXPECT_TRUE(log.is_ok()) << log.status().to_string();
        return log.is_ok() ? *log : nullptr;
    }
    static void append_one(PartitionLog& log, const char* value) {
        std::vector<Record> records = {Record{"", value, 0, {}}};
        ASSERT_TRUE(log.append(records).is_ok());
    }

    std::string data_;
    std::unique_ptr<LogManager> manager_;
};

// Rule: logs live at <data>/topics/<topic>/p%05d/, are created on demand only when asked, and
// get_if_open never opens one.
TEST_F(LogManagerTest, OpensOnDemandInTheDocumentedLayout) {
    EXPECT_EQ(manager_->partition_directory("orders", PartitionId(3)),
              data_ + "/topics/orders/p00003");
    EXPECT_EQ(manager_->get("orders", PartitionId(0), CreateIfMissing::no).code(), Errc::not_found);
    EXPECT_EQ(manager_->get_if_open("orders", PartitionId(0)), nullptr);
    EXPECT_EQ(manager_->open_count(), 0u);
    auto log = get("orders", 0);
    ASSERT_NE(log, nullptr);
    EXPECT_EQ(log->directory(), data_ + "/topics/orders/p00000");
    EXPECT_TRUE(fs_.exists(data_ + "/topics/orders/p00000/00000000000000000000.log"));
    EXPECT_EQ(manager_->get_if_open("orders", PartitionId(0)), log);
    EXPECT_EQ(get("orders", 0), log);
    EXPECT_EQ(manager_->open_count(), 1u);
    EXPECT_EQ(manager_->get("../x", PartitionId(0), CreateIfMissing::yes).code(),
              Errc::invalid_argument);
}

// Rule: the cold retention walk deletes the expired segments of a closed log and closes it again;
// a closed log with nothing expired is not opened at all, and an open log is left to the regular
// pass.
TEST_F(LogManagerTest, SweepsClosedLogsWithExpiredSegmentsOnly) {
    options_.segment_bytes_max = 500;
    manager_ = std::make_unique<LogManager>(fs_, clock_, data_, options_);
    auto log = get("cold", 0);
    for (int i = 0; i < 40; ++i) append_one(*log, "0123456789012345678901234567890123456789");
    std::vector<SegmentInfo> segments = log->segments();
    ASSERT_GE(segments.size(), 3u);
    log.reset();
    manager_->close_all();
    ASSERT_EQ(manager_->open_count(), 0u);
    std::string directory = manager_->partition_directory("cold", PartitionId(0));
    auto segment_file = [&](const SegmentInfo& segment) {
        return io::join_path(directory, fmt::format("{:020}.log", segment.base.value()));
    };
    double swept_before = storage_metrics().cold_retention_swept.value();

    // Nothing expired: the log stays closed and unopened.
    auto nothing = manager_->sweep_closed("cold", PartitionId(0), std::chrono::hours(1));
    ASSERT_TRUE(nothing.is_ok());
    EXPECT_EQ(nothing->segments_deleted, 0u);
    EXPECT_EQ(storage_metrics().cold_retention_swept.value(), swept_before);

    ASSERT_TRUE(
        fs_.set_modified(segment_file(segments[0]), clock_.wall_now() - std::chrono::hours(2))
            .is_ok());
    auto swept = manager_->sweep_closed("cold", PartitionId(0), std::chrono::hours(1));
    ASSERT_TRUE(swept.is_ok()) << swept.status().to_string();
    EXPECT_EQ(swept->segments_deleted, 1u);
    EXPECT_FALSE(fs_.exists(segment_file(segments[0])));
    EXPECT_EQ(manager_->open_count(), 0u);
    EXPECT_EQ(storage_metrics().cold_retention_swept.value() - swept_before, 1.0);

    // An open log is the regular pass's, even with an expired segment.
    auto open = get("cold", 0);
    ASSERT_TRUE(
        fs_.set_modified(segment_file(segments[1]), clock_.wall_now() - std::chrono::hours(2))
            .is_ok());
    auto skipped = manager_->sweep_closed("cold", PartitionId(0), std::chrono::hours(1));
    ASSERT_TRUE(skipped.is_ok());
    EXPECT_EQ(skipped->segments_deleted, 0u);
    EXPECT_TRUE(fs_.exists(segment_file(segments[1])));
    EXPECT_EQ(
        manager_->sweep_closed("absent", PartitionId(0), std::chrono::hours(1))->segments_deleted,
        0u);
}

// Rule: an idle log is closed only when no caller holds it, counted, and reopened transparently
// with its data.
TEST_F(LogManagerTest, EvictsIdleLogsOnlyWhenUnheldAndReopensThem) {
    auto log = get("t", 1);
    append_one(*log, "kept");
    clock_.advance(std::chrono::seconds(10));
    EXPECT_EQ(manager_->evict_idle(std::chrono::seconds(5)), 0u);  // still held
    log.reset();
    EXPECT_EQ(manager_->evict_idle(std::chrono::seconds(20)), 0u);  // not idle long enough
    double evicted_before = storage_metrics().idle_logs_evicted.value();
    double open_before = storage_metrics().open_logs.value();
    EXPECT_EQ(manager_->evict_idle(std::chrono::seconds(5)), 1u);
    EXPECT_EQ(storage_metrics().idle_logs_evicted.value() - evicted_before, 1.0);
    EXPECT_EQ(storage_metrics().open_logs.value() - open_before, -1.0);
    EXPECT_EQ(manager_->open_count(), 0u);
    EXPECT_EQ(manager_->get_if_open("t", PartitionId(1)), nullptr);
    auto again = manager_->get("t", PartitionId(1), CreateIfMissing::no);
    ASSERT_TRUE(again.is_ok());
    EXPECT_EQ((*again)->high_watermark(), Offset(1));
    EXPECT_EQ((*again)->read(Offset(0), 1, 100)->records.at(0).value, "kept");
}

// Rule: close_partition waits for every holder of the log to let it go, and closes it as soon as
// the last one has, without the clock moving; a log still held after 5 s of the clock is left
// open and the close fails as unavailable.
TEST_F(LogManagerTest, ClosePartitionWaitsForTheLastHolderForFiveSeconds) {
    auto held = get("t", 0);
    auto also_held = held;
    std::atomic<bool> closed{false};
    std::thread closer([&] {
        EXPECT_TRUE(manager_->close_partition("t", PartitionId(0)).is_ok());
        closed = true;
    });
    ASSERT_TRUE(clock_.await_waiters(1));
    held.reset();
    ASSERT_TRUE(clock_.await_waiters(1));
    EXPECT_FALSE(closed.load()) << "closed while a holder still held the log";
    MonoTime released_at = clock_.now();
    also_held.reset();
    closer.join();
    EXPECT_EQ(clock_.now(), released_at);
    EXPECT_EQ(manager_->open_count(), 0u);

    auto kept = get("t", 0);
    Status gave_up;
    std::thread impatient([&] { gave_up = manager_->close_partition("t", PartitionId(0)); });
    ASSERT_TRUE(clock_.await_waiters(1));
    clock_.advance(Millis(4'999));
    ASSERT_TRUE(clock_.await_waiters(1));
    clock_.advance(Millis(1));
    impatient.join();
    EXPECT_EQ(gave_up.code(), Errc::unavailable);
    EXPECT_EQ(manager_->open_count(), 1u);
    append_one(*kept, "still open");
}

// Rule: on a real clock the last holder letting go of the log ends close_partition's wait at once
// (it is told, not left to find out at the 5 s limit).
TEST_F(LogManagerTest, ClosePartitionIsToldWhenTheLastHolderLetsGo) {
    SystemClock clock;
    LogManager manager(fs_, clock, io::join_path(root_, "real"), options_);
    auto held = manager.get("t", PartitionId(0), CreateIfMissing::yes).value();
    MonoTime asked_at = clock.now();
    std::thread closer([&] { EXPECT_TRUE(manager.close_partition("t", PartitionId(0)).is_ok()); });
    // Marked closing: the close has begun and waits for this holder.
    while (manager.get_if_open("t", PartitionId(0)) != nullptr) std::this_thread::yield();
    held.reset();
    closer.join();
    EXPECT_LT(clock.now() - asked_at, Millis(5'000)) << "the close waited out its limit";
    EXPECT_EQ(manager.open_count(), 0u);
}

// Rule: concurrent gets of one partition share one instance.
TEST_F(LogManagerTest, ConcurrentGetsShareOneInstance) {
    std::vector<std::shared_ptr<PartitionLog>> logs(6);
    std::vector<std::thread> threads;
    for (int i = 0; i < 6; ++i) {
        threads.emplace_back([&, i] { logs[i] = get("shared", 0); });
    }
    for (auto& thread : threads) thread.join();
    for (const auto& log : logs) EXPECT_EQ(log, logs[0]);
    EXPECT_EQ(manager_->open_count(), 1u);
}

// Rule: removing a topic closes its logs (held ones refuse further work) and deletes its data,
// leaving other topics alone.
TEST_F(LogManagerTest, RemoveTopicClosesAndDeletes) {
    auto doomed = get("doomed", 0);
    get("doomed", 1);
    auto other = get("other", 0);
    append_one(*doomed, "x");
    ASSERT_TRUE(manager_->remove_topic("doomed").is_ok());
    EXPECT_FALSE(fs_.exists(manager_->topic_directory("doomed")));
    EXPECT_EQ(manager_->open_count(), 1u);
    std::vector<Record> records = {Record{"", "late", 0, {}}};
    EXPECT_EQ(doomed->append(records).code(), Errc::shutting_down);
    EXPECT_EQ(manager_->get("doomed", PartitionId(0), CreateIfMissing::no).code(), Errc::not_found);
    append_one(*other, "fine");
}

// Rule: the manager's append listener hears every log's appends, also logs opened before it was
// set.
TEST_F(LogManagerTest, AppendListenerHearsEveryLog) {
    auto early = get("a", 0);
    std::vector<std::string> heard;
    manager_->set_append_listener([&](const std::string& topic, PartitionId partition, Offset hwm) {
        heard.push_back(topic + "/" + std::to_string(partition.value()) + "@" +
                        std::to_string(hwm.value()));
    });
    auto late = get("b", 2);
    append_one(*early, "1");
    append_one(*late, "2");
    append_one(*late, "3");
    EXPECT_EQ(heard, (std::vector<std::string>{"a/0@1", "b/2@1", "b/2@2"}));
}

}  // namespace
}  // namespace narad::storage
