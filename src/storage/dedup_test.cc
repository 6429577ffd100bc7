#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "base/mutex.h"
#include "storage/test_util.h"

namespace narad::storage {
namespace {

using testing::LogTest;

constexpr uint64_t kIngress = 77;

class DedupTest : public LogTest {
  protected:
    void expect_replay_is_duplicate(uint64_t first, size_t count) {
        AppendResult again = append_values(first, count, kIngress);
        EXPECT_EQ(again.appended, 0u);
        EXPECT_EQ(again.duplicates, count);
    }
};

// Rule: re-appending records whose stamps were committed appends nothing.
TEST_F(DedupTest, ReappendingTheSameStampsAppendsNothing) {
    open_log();
    append_values(0, 10, kIngress);
    expect_replay_is_duplicate(0, 10);
    expect_replay_is_duplicate(3, 2);
    EXPECT_EQ(log_->high_watermark(), Offset(10));
    EXPECT_EQ(log_->committed_sequence(IngressId(kIngress)), WalSeq(9));
}

// Rule: a batch that overlaps the committed range appends only its new records, in order.
TEST_F(DedupTest, PartiallyDuplicateBatchAppendsOnlyNewRecords) {
    open_log();
    append_values(0, 5, kIngress);
    AppendResult result = append_values(3, 5, kIngress);  // 3, 4 are duplicates
    EXPECT_EQ(result.duplicates, 2u);
    EXPECT_EQ(result.appended, 3u);
    EXPECT_EQ(result.first, Offset(5));
    ReadResult all = read_all();
    ASSERT_EQ(all.records.size(), 8u);
    EXPECT_EQ(all.records[5].value, value_of(5));
    EXPECT_EQ(all.records[7].value, value_of(7));
}

// Rule: records without a stamp, and other ingress WALs, are never duplicates.
TEST_F(DedupTest, UnstampedAndOtherIngressAreNotDuplicates) {
    open_log();
    append_values(0, 3, kIngress);
    EXPECT_EQ(append_values(0, 3, /*ingress=*/0).appended, 3u);
    EXPECT_EQ(append_values(0, 3, /*ingress=*/78).appended, 3u);
    EXPECT_EQ(log_->high_watermark(), Offset(9));
}

// Rule: the dedup table survives a clean close and reopen.
TEST_F(DedupTest, DedupSurvivesCloseAndReopen) {
    open_log();
    append_values(0, 10, kIngress);
    reopen();
    expect_replay_is_duplicate(0, 10);
}

// Rule: the dedup table survives a crash (no close): the sidecar of the last roll plus a replay
// of the frames after it.
TEST_F(DedupTest, DedupSurvivesACrash) {
    options_.segment_bytes_max = 500;
    open_log();
    for (uint64_t i = 0; i < 30; i += 3) append_values(i, 3, kIngress);
    ASSERT_GE(log_->segments().size(), 3u);
    crash_and_reopen();
    expect_replay_is_duplicate(0, 30);
    expect_replay_is_duplicate(27, 3);
    EXPECT_EQ(append_values(30, 1, kIngress).appended, 1u);
}

// Rule: with the sidecar deleted (or damaged) after rolls, the table is rebuilt from every
// segment.
TEST_F(DedupTest, DedupSurvivesARollAndReopenWithTheSidecarDeletedOrDamaged) {
    options_.segment_bytes_max = 500;
    for (int damage = 0; damage < 2; ++damage) {
        SCOPED_TRACE(damage);
        directory_ = io::join_path(root_, "log" + std::to_string(damage));
        std::string sidecar = io::join_path(directory_, "producers");
        open_log();
        append_values(0, 20, kIngress);
        append_values(100, 5, /*ingress=*/88);
        for (uint64_t i = 20; i < 40; i += 4) append_values(i, 4, kIngress);
        ASSERT_GE(log_->segments().size(), 3u);
        ASSERT_TRUE(log_->close().is_ok());
        log_.reset();
        if (damage == 0) {
            ASSERT_TRUE(fs_.remove(sidecar).is_ok());
        } else {
            flip_byte(sidecar, 30);
        }
        open_log();
        expect_replay_is_duplicate(0, 40);
        EXPECT_EQ(append_values(100, 5, /*ingress=*/88).duplicates, 5u);
        EXPECT_EQ(log_->committed_sequence(IngressId(88)), WalSeq(104));
        log_.reset();
    }
}

// Rule: dedup holds for records inside zstd batches, across reopen and with the sidecar gone.
TEST_F(DedupTest, ZstdBatchesDedupPerRecord) {
    options_.codec = Codec::zstd;
    options_.segment_bytes_max = 600;
    open_log();
    for (uint64_t i = 0; i < 60; i += 12) append_values(i, 12, kIngress);
    ASSERT_GE(log_->segments().size(), 2u);
    AppendResult partial = append_values(55, 10, kIngress);
    EXPECT_EQ(partial.duplicates, 5u);
    EXPECT_EQ(partial.appended, 5u);
    reopen();
    expect_replay_is_duplicate(0, 65);
    ASSERT_TRUE(log_->close().is_ok());
    log_.reset();
    ASSERT_TRUE(fs_.remove(io::join_path(directory_, "producers")).is_ok());
    open_log();
    expect_replay_is_duplicate(20, 45);
    ReadResult all = read_all();
    ASSERT_EQ(all.records.size(), 65u);
    for (uint64_t i = 0; i < 65; ++i) EXPECT_EQ(all.records[i].value, value_of(i));
}

// Rule: two concurrent retries of the same records append them once, whether they land in one
// commit group or in two.
TEST_F(DedupTest, ConcurrentRetriesAppendOnce) {
    open_log();
    append_values(0, 1, kIngress);
    // Same group: hold the first leader until both retries queued behind it.
    Mutex mutex;
    CondVar changed;
    int enqueued = 0;
    std::atomic<bool> held{false};
    failpoint::set_hook("storage.append.enqueued", [&] {
        {
            MutexLock lock(mutex);
            ++enqueued;
        }
        changed.notify_all();
        return Status::ok();
    });
    failpoint::set_hook("storage.append.after_write", [&] {
        if (!held.exchange(true)) {
            MutexLock lock(mutex);
            changed.wait(lock, [&] { return enqueued == 3; });
        }
        return Status::ok();
    });
    std::vector<uint32_t> appended(3);
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
        threads.emplace_back([&, t] {
            // Thread 0 (the held leader) appends unrelated records; 1 and 2 both retry
            // sequences 1..4 and form the next group together.
            uint64_t ingress = t == 0 ? 5 : kIngress;
            appended[t] = append_values(1, 4, ingress).appended;
        });
        if (t == 0) {
            MutexLock lock(mutex);
            changed.wait(lock, [&] { return enqueued == 1; });
        }
    }
    for (auto& thread : threads) thread.join();
    failpoint::clear_all();
    EXPECT_EQ(appended[1] + appended[2], 4u);
    EXPECT_EQ(log_->high_watermark(), Offset(1 + 4 + 4));

    // Free-running: many threads retrying the same stamps.
    std::vector<std::thread> retries;
    std::atomic<uint32_t> total{0};
    for (int t = 0; t < 4; ++t) {
        retries.emplace_back([&] {
            for (uint64_t i = 5; i < 25; i += 5) total += append_values(i, 5, kIngress).appended;
        });
    }
    for (auto& thread : retries) thread.join();
    EXPECT_EQ(total.load(), 20u);
    EXPECT_EQ(log_->committed_sequence(IngressId(kIngress)), WalSeq(24));
}

}  // namespace
}  // namespace narad::storage
