#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "base/mutex.h"
#include "storage/test_util.h"

namespace narad::storage {
namespace {

using testing::LogTest;

class GroupCommitTest : public LogTest {
  protected:
    // Holds the first leader after its write until `appenders` appends have queued, so the rest
    // are certain to form one group behind it. `on_later_write` runs at every later write.
    void hold_first_leader(int appenders, std::function<void()> on_later_write = {}) {
        failpoint::set_hook("storage.append.enqueued", [this] {
            {
                MutexLock lock(mutex_);
                ++enqueued_;
            }
            changed_.notify_all();
            return Status::ok();
        });
        failpoint::set_hook("storage.append.after_write", [this, appenders, on_later_write] {
            if (!held_.exchange(true)) {
                MutexLock lock(mutex_);
                changed_.wait(lock, [&]() REQUIRES(mutex_) { return enqueued_ == appenders; });
            } else if (on_later_write) {
                on_later_write();
            }
            return Status::ok();
        });
    }

    Mutex mutex_;
    CondVar changed_;
    int enqueued_ GUARDED_BY(mutex_) = 0;
    std::atomic<bool> held_{false};
};

// Rule: concurrent appenders share fdatasyncs (fewer syncs than appends), and every record is
// readable exactly once, with dense offsets, each append's records contiguous and in order.
TEST_F(GroupCommitTest, ConcurrentAppendersShareSyncs) {
    constexpr int kThreads = 8;
    constexpr int kRecordsEach = 5;
    open_log();
    hold_first_leader(kThreads);
    int syncs_before = fs_.count(io::FsOp::sync);
    std::vector<AppendResult> results(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            std::vector<std::string> values;
            for (int j = 0; j < kRecordsEach; ++j) {
                values.push_back("t" + std::to_string(t) + "-" + std::to_string(j));
            }
            std::vector<Record> records;
            for (const auto& value : values) records.push_back(Record{"", value, 0, {}});
            auto result = log_->append(records);
            ASSERT_TRUE(result.is_ok()) << result.status().to_string();
            results[t] = *result;
        });
    }
    for (auto& thread : threads) thread.join();
    int syncs = fs_.count(io::FsOp::sync) - syncs_before;
    EXPECT_EQ(syncs, 2);  // the held leader alone, then everyone queued behind it
    EXPECT_LT(syncs, kThreads);

    ReadResult all = read_all();
    ASSERT_EQ(all.records.size(), size_t{kThreads * kRecordsEach});
    std::set<std::string> seen;
    for (uint64_t i = 0; i < all.records.size(); ++i) {
        EXPECT_EQ(all.records[i].offset, Offset(i));
        EXPECT_TRUE(seen.insert(all.records[i].value).second) << all.records[i].value;
    }
    for (int t = 0; t < kThreads; ++t) {
        EXPECT_EQ(results[t].appended, uint32_t{kRecordsEach});
        for (int j = 0; j < kRecordsEach; ++j) {
            EXPECT_EQ(all.records[results[t].first.value() + j].value,
                      "t" + std::to_string(t) + "-" + std::to_string(j));
        }
    }
}

// Rule: when a group's sync fails, every appender in that group gets the error and none of their
// records become visible; the earlier group is unaffected.
TEST_F(GroupCommitTest, EveryAppenderOfAFailedGroupGetsTheError) {
    constexpr int kThreads = 4;
    open_log();
    hold_first_leader(kThreads, [this] { fs_.fail(io::FsOp::sync, ".log"); });
    std::vector<Status> statuses(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            std::string value = "v" + std::to_string(t);
            std::vector<Record> records = {Record{"", value, 0, {}}};
            auto result = log_->append(records);
            statuses[t] = result.is_ok() ? Status::ok() : result.status();
        });
    }
    for (auto& thread : threads) thread.join();
    int failed = 0;
    for (const Status& status : statuses) {
        if (!status.is_ok()) {
            EXPECT_EQ(status.code(), Errc::io_error);
            ++failed;
        }
    }
    EXPECT_EQ(failed, kThreads - 1);
    EXPECT_EQ(log_->high_watermark(), Offset(1));
    EXPECT_EQ(read_all().records.size(), 1u);
    failpoint::clear_all();
    crash_and_reopen();
    EXPECT_EQ(report_.high_watermark, Offset(1));
}

// Rule: under free-running concurrent appends (with segment rolls) and a concurrent reader, the
// reader never sees a gap, a duplicate or a record past the HWM it observed after reading.
TEST_F(GroupCommitTest, ConcurrentAppendsAndReadsStayConsistent) {
    constexpr int kThreads = 4;
    constexpr int kAppendsEach = 40;
    options_.segment_bytes_max = 2048;
    open_log();
    std::atomic<bool> done{false};
    std::atomic<int> reader_checks{0};
    std::thread reader([&] {
        Offset next(0);
        while (!done.load() || next < log_->high_watermark()) {
            auto part = log_->read(next, 50, 1 << 20);
            ASSERT_TRUE(part.is_ok()) << part.status().to_string();
            Offset hwm_after = log_->high_watermark();
            ASSERT_TRUE(part->corrupt.empty());
            for (const auto& record : part->records) {
                ASSERT_EQ(record.offset, next);
                ASSERT_LT(record.offset, hwm_after);
                next = next.next();
            }
            ++reader_checks;
        }
    });
    std::vector<std::thread> writers;
    for (int t = 0; t < kThreads; ++t) {
        writers.emplace_back([&, t] {
            for (int a = 0; a < kAppendsEach; ++a) {
                std::string value = std::to_string(t) + ":" + std::to_string(a);
                std::vector<Record> records = {Record{"", value, 0, {}}, Record{"", value, 0, {}}};
                ASSERT_TRUE(log_->append(records).is_ok());
            }
        });
    }
    for (auto& writer : writers) writer.join();
    done = true;
    reader.join();
    EXPECT_GT(reader_checks.load(), 0);
    ReadResult all = read_all();
    ASSERT_EQ(all.records.size(), size_t{kThreads * kAppendsEach * 2});
    std::map<std::string, int> counts;
    for (size_t i = 0; i < all.records.size(); i += 2) {
        EXPECT_EQ(all.records[i].value, all.records[i + 1].value);  // an append stays together
        ++counts[all.records[i].value];
    }
    for (const auto& [value, count] : counts) EXPECT_EQ(count, 1) << value;
    EXPECT_GT(log_->segments().size(), 2u);
}

}  // namespace
}  // namespace narad::storage
