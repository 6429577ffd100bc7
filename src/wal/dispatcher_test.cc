#include "wal/dispatcher.h"

#include <gtest/gtest.h>

#include <random>

#include "base/metrics.h"
#include "base/mutex.h"
#include "io/fault_injection_fs.h"
#include "wal/wal_test_util.h"

namespace narad::wal {
namespace {

using testing::append_and_wait;
using testing::FakeCommitter;
using testing::make_record;

class DispatcherTest : public testing::IngressWalFixture {
  protected:
    DispatcherOptions options(uint32_t threads) {
        DispatcherOptions options;
        options.threads = threads;
        options.retry_interval = Millis(1000);
        return options;
    }

    FakeCommitter committer_;
};

// Rule: every durable record is committed to its partition with the stamp (WAL id, sequence), and
// the WAL then holds nothing pending.
TEST_F(DispatcherTest, CommitsEveryRecordWithItsProducerStamp) {
    std::vector<storage::ProducerStamp> stamps;
    Mutex stamps_mutex;
    class StampRecorder final : public PartitionCommitter {
      public:
        StampRecorder(FakeCommitter& inner, std::vector<storage::ProducerStamp>& out, Mutex& mutex)
            : inner_(inner), out_(out), mutex_(mutex) {}
        Status commit(const std::string& topic, const std::string& incarnation,
                      PartitionId partition, std::span<const storage::Record> records) override {
            {
                MutexLock lock(mutex_);
                for (const auto& record : records) out_.push_back(record.producer);
            }
            return inner_.commit(topic, incarnation, partition, records);
        }

      private:
        FakeCommitter& inner_;
        std::vector<storage::ProducerStamp>& out_;
        Mutex& mutex_;
    } recorder(committer_, stamps, stamps_mutex);

    Dispatcher dispatcher(clock_, *wal_, recorder, options(2));
    dispatcher.start();
    for (int i = 0; i < 20; ++i) append("t", i % 3, "v" + std::to_string(i));
    ASSERT_TRUE(committer_.wait_until(
        [&]() REQUIRES(committer_.mutex()) { return committer_.committed_locked() == 20; }));
    dispatcher.stop();
    EXPECT_EQ(wal_->stats().pending_records, 0u);
    EXPECT_EQ(dispatcher.stats().committed_records, 20u);
    EXPECT_EQ(dispatcher.stats().queued_records, 0u);
    MutexLock lock(stamps_mutex);
    ASSERT_EQ(stamps.size(), 20u);
    std::set<uint64_t> sequences;
    for (const auto& stamp : stamps) {
        EXPECT_EQ(stamp.ingress, wal_->id());
        sequences.insert(stamp.sequence.value());
    }
    EXPECT_EQ(sequences.size(), 20u);
}

// Rule: a partition whose commit fails is retried only after retry_interval (on the injected
// clock), while other partitions keep being committed.
TEST_F(DispatcherTest, RefusingPartitionIsRetriedAfterRetryIntervalWhileOthersProceed) {
    const FakeCommitter::Key refusing{"t", 0};
    committer_.set_gate([&](const FakeCommitter::Key& key, size_t attempt) {
        if (key == refusing && attempt == 1) return Status(Errc::unavailable, "owner busy");
        return Status::ok();
    });
    auto& retries = metrics::Registry::global().counter("narad_dispatcher_retries_total", "").get();
    double retries_before = retries.value();
    Dispatcher dispatcher(clock_, *wal_, committer_, options(1));
    dispatcher.start();
    append("t", 0, "a");
    append("t", 1, "b");
    ASSERT_TRUE(committer_.wait_until([&]() REQUIRES(committer_.mutex()) {
        return committer_.values_locked({"t", 1}).size() == 1 &&
               committer_.attempts_locked(refusing) == 1;
    }));
    EXPECT_EQ(dispatcher.stats().commit_failures, 1u);
    EXPECT_EQ(retries.value(), retries_before + 1);

    // Not yet due: time short of the interval and more work elsewhere do not retry it.
    clock_.advance(Millis(999));
    append("t", 2, "c");
    ASSERT_TRUE(committer_.wait_until([&]() REQUIRES(committer_.mutex()) {
        return committer_.values_locked({"t", 2}).size() == 1;
    }));
    EXPECT_EQ(committer_.attempts(refusing), 1u);
    EXPECT_EQ(dispatcher.stats().partitions_waiting_retry, 1u);
    EXPECT_TRUE(committer_.values(refusing).empty());

    clock_.advance(Millis(1));
    ASSERT_TRUE(committer_.wait_until([&]() REQUIRES(committer_.mutex()) {
        return committer_.values_locked(refusing).size() == 1;
    }));
    EXPECT_EQ(committer_.attempts(refusing), 2u);
    dispatcher.stop();
    EXPECT_EQ(wal_->stats().pending_records, 0u);
}

// Rule: Errc::not_found drops the batch for good: it is marked committed in the WAL and counted,
// and other topics are unaffected.
TEST_F(DispatcherTest, NotFoundDropsTheRecordsForGood) {
    committer_.set_gate([](const FakeCommitter::Key& key, size_t) {
        return key.first == "gone" ? Status(Errc::not_found, "topic deleted") : Status::ok();
    });
    auto& dropped_total =
        metrics::Registry::global().counter("narad_dispatcher_dropped_records_total", "").get();
    double dropped_before = dropped_total.value();
    Dispatcher dispatcher(clock_, *wal_, committer_, options(2));
    dispatcher.start();
    append("gone", 0, "x1");
    append("gone", 0, "x2");
    append("kept", 0, "y");
    ASSERT_TRUE(committer_.wait_until([&]() REQUIRES(committer_.mutex()) {
        return committer_.values_locked({"kept", 0}).size() == 1 &&
               committer_.attempts_locked({"gone", 0}) >= 1;
    }));
    dispatcher.stop();
    EXPECT_EQ(dispatcher.stats().dropped_records, 2u);
    EXPECT_EQ(dropped_total.value(), dropped_before + 2);
    EXPECT_EQ(wal_->stats().pending_records, 0u);
    EXPECT_TRUE(committer_.values({"gone", 0}).empty());
}

// Rule: with several workers and commits that fail at random, each partition's records are
// committed in WAL order, never by two workers at once, and each exactly once.
TEST_F(DispatcherTest, PerPartitionOrderIsPreservedUnderRetriesAndManyWorkers) {
    Mutex mutex;
    CondVar cv;
    bool appending = true;
    std::mt19937 random(7);
    committer_.set_gate([&](const FakeCommitter::Key& key, size_t attempt) {
        MutexLock lock(mutex);
        // Partition 0's first commit is held while its later records arrive.
        if (key.second == 0 && attempt == 1) cv.wait(lock, [&] { return !appending; });
        return random() % 3 == 0 ? Status(Errc::peer_error, "flaky") : Status::ok();
    });
    DispatcherOptions opts = options(4);
    opts.retry_interval = Millis(0);  // due at once: retries need no clock movement
    opts.max_batch_records = 3;
    Dispatcher dispatcher(clock_, *wal_, committer_, opts);
    dispatcher.start();
    constexpr int kPartitions = 5;
    constexpr int kPerPartition = 40;
    for (int i = 0; i < kPerPartition; ++i) {
        std::vector<IngressRecord> records;
        for (int p = 0; p < kPartitions; ++p) {
            records.push_back(make_record("t", p, std::to_string(p) + ":" + std::to_string(i)));
        }
        ASSERT_TRUE(append_and_wait(*wal_, std::move(records)).is_ok());
    }
    {
        MutexLock lock(mutex);
        appending = false;
        cv.notify_all();
    }
    ASSERT_TRUE(committer_.wait_until([&]() REQUIRES(committer_.mutex()) {
        return committer_.committed_locked() == kPartitions * kPerPartition;
    }));
    dispatcher.stop();
    for (int p = 0; p < kPartitions; ++p) {
        std::vector<std::string> expected;
        for (int i = 0; i < kPerPartition; ++i) {
            expected.push_back(std::to_string(p) + ":" + std::to_string(i));
        }
        EXPECT_EQ(committer_.values({"t", static_cast<uint32_t>(p)}), expected);
    }
    EXPECT_LE(committer_.max_batch(), 3u);
    EXPECT_GT(dispatcher.stats().commit_failures, 0u);
    EXPECT_EQ(committer_.duplicates(), 0u);
}

// Rule: a batch never mixes topic incarnations; each incarnation's records go in their own commit.
TEST_F(DispatcherTest, BatchesNeverMixIncarnations) {
    // Everything is durable before the dispatcher starts, so it is all handed over at once and
    // the batching alone decides the commits.
    append("t", 0, "a", "old");
    append("t", 0, "b", "old");
    append("t", 0, "c", "new");
    append("t", 0, "d", "new");
    Dispatcher dispatcher(clock_, *wal_, committer_, options(1));
    dispatcher.start();
    ASSERT_TRUE(committer_.wait_until(
        [&]() REQUIRES(committer_.mutex()) { return committer_.committed_locked() == 4; }));
    dispatcher.stop();
    EXPECT_EQ(committer_.attempts({"t", 0}), 2u);  // [a b] [c d]
    EXPECT_EQ(committer_.incarnations({"t", 0}),
              (std::vector<std::string>{"old", "old", "new", "new"}));
}

// Rule: stop() loses nothing: records not yet committed stay pending in the WAL, and a dispatcher
// started later commits them.
TEST_F(DispatcherTest, StopKeepsUncommittedRecordsInTheWal) {
    committer_.set_gate(
        [](const FakeCommitter::Key&, size_t) { return Status(Errc::unavailable, "down"); });
    {
        Dispatcher dispatcher(clock_, *wal_, committer_, options(2));
        dispatcher.start();
        append("t", 0, "a");
        append("t", 1, "b");
        ASSERT_TRUE(committer_.wait_until([&]() REQUIRES(committer_.mutex()) {
            return committer_.attempts_locked({"t", 0}) >= 1 &&
                   committer_.attempts_locked({"t", 1}) >= 1;
        }));
        dispatcher.stop();
        EXPECT_EQ(dispatcher.stats().queued_records, 0u);
    }
    EXPECT_EQ(wal_->stats().pending_records, 2u);
    committer_.set_gate(nullptr);
    Dispatcher dispatcher(clock_, *wal_, committer_, options(2));
    dispatcher.start();
    ASSERT_TRUE(committer_.wait_until(
        [&]() REQUIRES(committer_.mutex()) { return committer_.committed_locked() == 2; }));
    dispatcher.stop();
    EXPECT_EQ(wal_->stats().pending_records, 0u);
}

}  // namespace
}  // namespace narad::wal
