#include "wal/ingress_wal.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "base/failpoint.h"
#include "base/metrics.h"
#include "base/mutex.h"
#include "io/fault_injection_fs.h"
#include "wal/wal_format.h"
#include "wal/wal_test_util.h"

namespace narad::wal {
namespace {

using io::FsOp;
using testing::append_and_wait;
using testing::Collector;
using testing::make_record;
using testing::segment_files;

class IngressWalTest : public ::testing::Test {
  protected:
    void TearDown() override { failpoint::clear_all(); }

    std::unique_ptr<IngressWal> open(WalOptions options = {}) {
        auto wal = IngressWal::open(fs_, clock_, directory_, options);
        EXPECT_TRUE(wal.is_ok()) << wal.status().to_string();
        return wal.is_ok() ? std::move(wal).value() : nullptr;
    }
    // A started WAL whose record limit (2) is reached by two pending records; null on failure.
    std::unique_ptr<IngressWal> open_with_full_backlog() {
        WalOptions options;
        options.max_pending_records = 2;
        auto wal = open(options);
        if (!wal) return nullptr;
        wal->start();
        Status filled = append_and_wait(*wal, {make_record("t", 0, "a"), make_record("t", 0, "b")});
        EXPECT_TRUE(filled.is_ok()) << filled.to_string();
        return filled.is_ok() ? std::move(wal) : nullptr;
    }
    uint64_t file_size(const std::string& name) {
        return io::posix_file_system().stat(io::join_path(directory_, name)).value().size;
    }

    testing::TempDir dir_;
    std::string directory_ = dir_.file("ingress");
    io::FaultInjectionFileSystem fs_;
    FakeClock clock_;
};

// Rule: an append's completion runs only after the fdatasync that made its record durable.
TEST_F(IngressWalTest, AppendCompletesOnlyAfterItsSync) {
    auto wal = open();
    wal->start();
    int syncs_at_open = fs_.count(FsOp::sync);
    std::atomic<bool> completed{false};
    std::atomic<int> syncs_after_write{-1};
    std::atomic<int> syncs_after_sync{-1};
    std::atomic<bool> completed_at_sync_point{true};
    failpoint::set_hook("wal.after_write", [&] {
        syncs_after_write = fs_.count(FsOp::sync);
        return Status::ok();
    });
    failpoint::set_hook("wal.after_sync", [&] {
        syncs_after_sync = fs_.count(FsOp::sync);
        completed_at_sync_point = completed.load();
        return Status::ok();
    });
    std::promise<Status> done;
    wal->append({make_record("t", 0, "a")}, [&](Status status) {
        completed = true;
        done.set_value(status);
    });
    ASSERT_TRUE(done.get_future().get().is_ok());
    EXPECT_EQ(syncs_after_write, syncs_at_open);     // written, not yet synced
    EXPECT_EQ(syncs_after_sync, syncs_at_open + 1);  // synced once
    EXPECT_FALSE(completed_at_sync_point);           // and not yet reported
}

// Rule: appends queued while a group is being written share one fdatasync (group commit), and
// their sequences are dense and increase in the order they were written.
TEST_F(IngressWalTest, ConcurrentAppendsShareOneSync) {
    Collector collector;
    auto wal = open();
    wal->set_consumer(collector.consumer());
    wal->start();
    Mutex mutex;
    CondVar cv;
    bool first_group_writing = false;
    bool release = false;
    failpoint::set_hook("wal.after_write", [&] {
        MutexLock lock(mutex);
        if (!first_group_writing) {
            first_group_writing = true;
            cv.notify_all();
            cv.wait(lock, [&] { return release; });
        }
        return Status::ok();
    });
    std::atomic<int> ok{0};
    std::atomic<int> completions{0};
    auto count = [&](Status status) {
        if (status.is_ok()) ++ok;
        MutexLock lock(mutex);
        ++completions;
        cv.notify_all();
    };
    wal->append({make_record("t", 0, "first")}, count);
    {
        MutexLock lock(mutex);
        cv.wait(lock, [&] { return first_group_writing; });
    }
    int syncs_before = fs_.count(FsOp::sync);
    constexpr int kThreads = 4;
    constexpr int kPerThread = 25;
    std::vector<std::thread> producers;
    for (int t = 0; t < kThreads; ++t) {
        producers.emplace_back([&, t] {
            for (int i = 0; i < kPerThread; ++i) {
                wal->append({make_record("t", t, std::to_string(t * 100 + i))}, count);
            }
        });
    }
    for (auto& producer : producers) producer.join();
    {
        MutexLock lock(mutex);
        release = true;
        cv.notify_all();
    }
    {
        MutexLock lock(mutex);
        cv.wait(lock, [&] { return completions == 1 + kThreads * kPerThread; });
    }
    EXPECT_EQ(ok, 1 + kThreads * kPerThread);
    EXPECT_EQ(fs_.count(FsOp::sync) - syncs_before, 2);  // the blocked group and all the rest
    ASSERT_TRUE(collector.wait_for_count(1 + kThreads * kPerThread));
    auto sequences = collector.sequences();
    for (size_t i = 0; i < sequences.size(); ++i) EXPECT_EQ(sequences[i], WalSeq(i + 1));
}

// Rule: a failed sync fails exactly that group's appends, truncates their bytes, never hands them
// to the consumer, never reuses their sequences, and later appends work.
TEST_F(IngressWalTest, FailedSyncFailsItsAppendsAndLaterAppendsWork) {
    Collector collector;
    auto wal = open();
    wal->set_consumer(collector.consumer());
    wal->start();
    ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "a")}).is_ok());
    auto files = segment_files(directory_);
    ASSERT_EQ(files.size(), 1u);
    uint64_t size_after_a = file_size(files[0]);

    fs_.fail(FsOp::sync, ".wal", 1);
    Status failed = append_and_wait(*wal, {make_record("t", 0, "b1"), make_record("t", 1, "b2")});
    EXPECT_EQ(failed.code(), Errc::io_error);
    EXPECT_EQ(file_size(files[0]), size_after_a);

    ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "c")}).is_ok());
    ASSERT_TRUE(collector.wait_for_count(2));
    auto records = collector.records();
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0]->value, "a");
    EXPECT_EQ(records[1]->value, "c");
    EXPECT_EQ(records[1]->sequence, WalSeq(records[0]->sequence.value() + 3));  // 2 unused
    EXPECT_EQ(wal->stats().pending_records, 2u);

    wal.reset();
    ASSERT_TRUE(fs_.drop_unsynced_data().is_ok());
    Collector recovered;
    auto reopened = open();
    reopened->set_consumer(recovered.consumer());
    std::vector<std::string> values;
    for (const auto& record : recovered.records()) values.push_back(record->value);
    EXPECT_EQ(values, (std::vector<std::string>{"a", "c"}));
}

// Rule: the "wal.after_write" failpoint failing a group fails its appends like a failed write.
TEST_F(IngressWalTest, InjectedErrorAfterWriteFailsTheGroup) {
    auto wal = open();
    wal->start();
    ASSERT_TRUE(failpoint::configure("wal.after_write=error@1").is_ok());
    EXPECT_EQ(append_and_wait(*wal, {make_record("t", 0, "lost")}).code(), Errc::io_error);
    EXPECT_TRUE(append_and_wait(*wal, {make_record("t", 0, "kept")}).is_ok());
    EXPECT_EQ(wal->stats().pending_records, 1u);
}

// Rule: if a failed write cannot be truncated either, the WAL refuses every later append with
// io_error (it no longer knows what its segment holds), and a reopen recovers it.
TEST_F(IngressWalTest, FailedTruncateAfterAFailedWriteFailsTheWal) {
    auto wal = open();
    wal->start();
    ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "a")}).is_ok());
    fs_.fail(FsOp::sync, ".wal", 1);
    fs_.fail(FsOp::truncate, ".wal", 1);
    EXPECT_EQ(append_and_wait(*wal, {make_record("t", 0, "b")}).code(), Errc::io_error);
    Status refused = append_and_wait(*wal, {make_record("t", 0, "c")});
    EXPECT_EQ(refused.code(), Errc::io_error);
    EXPECT_NE(refused.message().find("failed"), std::string::npos) << refused.to_string();

    // Without a machine crash the unsynced "b" may come back: at least once, with a sequence of
    // its own. "a" always does.
    wal.reset();
    Collector recovered;
    auto reopened = open();
    reopened->set_consumer(recovered.consumer());
    auto records = recovered.records();
    ASSERT_GE(records.size(), 1u);
    EXPECT_EQ(records[0]->value, "a");
    reopened->start();
    EXPECT_TRUE(append_and_wait(*reopened, {make_record("t", 0, "d")}).is_ok());
}

// Rule: past max_pending_bytes, append() fails at once with unavailable "ingress backlog full" and
// counts the rejection; committing the backlog lets appends in again.
TEST_F(IngressWalTest, BacklogFullIsRefusedWithUnavailable) {
    WalOptions options;
    options.max_pending_bytes = 3 * format::frame_bytes(make_record("t", 0, "x0"));
    Collector collector;
    auto wal = open(options);
    wal->set_consumer(collector.consumer());
    wal->start();
    auto& rejections = metrics::Registry::global()
                           .counter("narad_produce_rejections_total", "", {"topic", "reason"})
                           .with({"t", "backlog_full"});
    double rejections_before = rejections.value();
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "x" + std::to_string(i))}).is_ok());
    }
    Status refused = append_and_wait(*wal, {make_record("t", 0, "x3")});
    EXPECT_EQ(refused.code(), Errc::unavailable);
    EXPECT_NE(refused.message().find("ingress backlog full"), std::string::npos);
    EXPECT_EQ(rejections.value(), rejections_before + 1);

    ASSERT_TRUE(collector.wait_for_count(3));
    auto sequences = collector.sequences();
    wal->mark_committed(sequences);
    EXPECT_EQ(wal->stats().pending_records, 0u);
    EXPECT_TRUE(append_and_wait(*wal, {make_record("t", 0, "x4")}).is_ok());
}

// Rule: a replacing append (the dispatcher moving a dead owner's pending records to a sibling)
// is admitted even when the backlog is full, so the backlog can drain; a normal one is not.
TEST_F(IngressWalTest, ReplacingAppendIsAdmittedWhenTheBacklogIsFull) {
    auto wal = open_with_full_backlog();
    ASSERT_TRUE(wal);
    EXPECT_EQ(append_and_wait(*wal, {make_record("t", 1, "a")}).code(), Errc::unavailable);
    EXPECT_TRUE(append_and_wait(*wal, {make_record("t", 1, "a"), make_record("t", 1, "b")},
                                IngressWal::Admission::replacing)
                    .is_ok());
    EXPECT_EQ(wal->stats().pending_records, 4u);
}

// Rule: the record-count limit refuses appends the same way.
TEST_F(IngressWalTest, BacklogRecordLimitIsRefusedWithUnavailable) {
    auto wal = open_with_full_backlog();
    ASSERT_TRUE(wal);
    EXPECT_EQ(append_and_wait(*wal, {make_record("t", 0, "c")}).code(), Errc::unavailable);
}

// Rule: the IngressId is the same across reopens of one directory and different for a fresh one.
TEST_F(IngressWalTest, IngressIdIsStableAcrossReopenAndFreshForANewDirectory) {
    IngressId first = open()->id();
    EXPECT_NE(first.value(), 0u);
    EXPECT_EQ(open()->id(), first);
    auto other = IngressWal::open(fs_, clock_, dir_.file("other"), {});
    ASSERT_TRUE(other.is_ok());
    EXPECT_NE((*other)->id(), first);
}

// Rule: a damaged id file, or segments without an id, refuse to open (a new id would re-commit
// every record) rather than guess.
TEST_F(IngressWalTest, DamagedOrMissingIdIsRefused) {
    {
        auto wal = open();
        wal->start();
        ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "a")}).is_ok());
    }
    std::string id_path = io::join_path(directory_, "id");
    std::string id = io::read_file(fs_, id_path).value();
    id[14] ^= 1;
    ASSERT_TRUE(io::write_file_atomically(fs_, id_path, id).is_ok());
    EXPECT_EQ(IngressWal::open(fs_, clock_, directory_, {}).code(), Errc::corrupt);
    ASSERT_TRUE(fs_.remove(id_path).is_ok());
    EXPECT_EQ(IngressWal::open(fs_, clock_, directory_, {}).code(), Errc::corrupt);
}

// Rule: a segment is deleted once all its records are committed and it is not the active one;
// segments with uncommitted records survive a restart and their records are handed over again.
TEST_F(IngressWalTest, CommittedSegmentsAreDeletedAndUncommittedOnesKeptAcrossRestart) {
    WalOptions options;
    options.segment_bytes_max = 1;  // every group after the first rolls
    Collector collector;
    auto wal = open(options);
    wal->set_consumer(collector.consumer());
    wal->start();
    for (int i = 1; i <= 5; ++i) {
        ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "r" + std::to_string(i))}).is_ok());
    }
    EXPECT_EQ(segment_files(directory_).size(), 5u);
    std::vector<WalSeq> first_three{WalSeq(1), WalSeq(2), WalSeq(3)};
    wal->mark_committed(first_three);
    wal->mark_committed(first_three);  // idempotent
    EXPECT_EQ(segment_files(directory_),
              (std::vector<std::string>{format::segment_file_name(WalSeq(4)),
                                        format::segment_file_name(WalSeq(5))}));
    EXPECT_EQ(wal->stats().segments, 2u);
    EXPECT_EQ(wal->stats().pending_records, 2u);

    wal.reset();
    Collector recovered;
    auto reopened = open(options);
    reopened->set_consumer(recovered.consumer());
    auto sequences = recovered.sequences();
    EXPECT_EQ(sequences, (std::vector<WalSeq>{WalSeq(4), WalSeq(5)}));
    EXPECT_EQ(reopened->stats().next_sequence, WalSeq(6));
    reopened->mark_committed(sequences);
    // Only the fresh active segment is left.
    EXPECT_EQ(segment_files(directory_),
              std::vector<std::string>{format::segment_file_name(WalSeq(6))});
}

// Rule: a fully committed active segment rolls early once it holds early_roll_bytes, so its space
// is reclaimed without waiting for it to fill.
TEST_F(IngressWalTest, FullyCommittedActiveSegmentRollsEarlyBySize) {
    WalOptions options;
    options.early_roll_bytes = 1;
    Collector collector;
    auto wal = open(options);
    wal->set_consumer(collector.consumer());
    wal->start();
    ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "a")}).is_ok());
    ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "b")}).is_ok());  // a uncommitted
    EXPECT_EQ(segment_files(directory_).size(), 1u);
    ASSERT_TRUE(collector.wait_for_count(2));
    wal->mark_committed(collector.sequences());
    ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "c")}).is_ok());
    EXPECT_EQ(segment_files(directory_),
              std::vector<std::string>{format::segment_file_name(WalSeq(3))});
}

// Rule: a fully committed active segment older than early_roll_age rolls early as well.
TEST_F(IngressWalTest, FullyCommittedActiveSegmentRollsEarlyByAge) {
    WalOptions options;
    options.early_roll_age = Millis(10'000);
    Collector collector;
    auto wal = open(options);
    wal->set_consumer(collector.consumer());
    wal->start();
    ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "a")}).is_ok());
    ASSERT_TRUE(collector.wait_for_count(1));
    wal->mark_committed(collector.sequences());
    ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "b")}).is_ok());  // too young
    EXPECT_EQ(segment_files(directory_).size(), 1u);
    ASSERT_TRUE(collector.wait_for_count(2));
    wal->mark_committed(collector.sequences());
    clock_.advance(Millis(10'000));
    ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "c")}).is_ok());
    EXPECT_EQ(segment_files(directory_),
              std::vector<std::string>{format::segment_file_name(WalSeq(3))});
}

// Rule: stop() fails still-queued appends with shutting_down, and later appends are refused.
TEST_F(IngressWalTest, StopFailsQueuedAppendsWithShuttingDown) {
    auto wal = open();
    std::promise<Status> queued;
    wal->append({make_record("t", 0, "a")}, [&](Status status) { queued.set_value(status); });
    auto future = queued.get_future();
    EXPECT_EQ(future.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
    wal->stop();
    EXPECT_EQ(future.get().code(), Errc::shutting_down);
    EXPECT_EQ(append_and_wait(*wal, {make_record("t", 0, "b")}).code(), Errc::shutting_down);
    EXPECT_EQ(wal->stats().pending_records, 0u);
}

// Rule: appends queued before start() are written once the sync thread runs.
TEST_F(IngressWalTest, AppendsQueuedBeforeStartAreWrittenOnceItRuns) {
    auto wal = open();
    std::promise<Status> queued;
    wal->append({make_record("t", 0, "a")}, [&](Status status) { queued.set_value(status); });
    wal->start();
    EXPECT_TRUE(queued.get_future().get().is_ok());
    EXPECT_EQ(wal->stats().pending_records, 1u);
}

// Rule: a new consumer is handed every durable record not yet committed, and the old one is never
// called again; nothing reaches a consumer twice.
TEST_F(IngressWalTest, NewConsumerGetsEveryUncommittedRecord) {
    Collector first;
    Collector second;  // both outlive the WAL, which may still be delivering when the test ends
    auto wal = open();
    wal->set_consumer(first.consumer());
    wal->start();
    ASSERT_TRUE(
        append_and_wait(*wal, {make_record("t", 0, "a"), make_record("t", 1, "b")}).is_ok());
    ASSERT_TRUE(first.wait_for_count(2));
    wal->mark_committed(std::vector<WalSeq>{WalSeq(1)});
    wal->set_consumer(second.consumer());
    ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "c")}).is_ok());
    ASSERT_TRUE(second.wait_for_count(2));
    EXPECT_EQ(second.sequences(), (std::vector<WalSeq>{WalSeq(2), WalSeq(3)}));
    EXPECT_EQ(first.records().size(), 2u);
}

// Rule: a record over the format's limits is refused before it is queued.
TEST_F(IngressWalTest, OversizedRecordIsRefused) {
    auto wal = open();
    wal->start();
    IngressRecord record = make_record("t", 0, "");
    record.value.assign(format::kMaxPayloadBytes + 1, 'v');
    EXPECT_EQ(append_and_wait(*wal, {std::move(record)}).code(), Errc::payload_too_large);
    EXPECT_EQ(wal->stats().next_sequence, WalSeq(1));
}

// Rule: holds() is true for a partition from the moment one of its records is accepted until every
// one of its records is committed, and again for the records a reopen hands over; other
// partitions are not held.
TEST_F(IngressWalTest, PartitionIsHeldFromAppendUntilItsRecordsAreCommitted) {
    Collector collector;
    auto wal = open();
    wal->set_consumer(collector.consumer());
    EXPECT_FALSE(wal->holds("t", PartitionId(0)));
    std::promise<Status> queued;
    wal->append({make_record("t", 0, "a"), make_record("t", 0, "b"), make_record("t", 1, "c")},
                [&](Status status) { queued.set_value(status); });
    EXPECT_TRUE(wal->holds("t", PartitionId(0)));  // queued, not yet written
    EXPECT_TRUE(wal->holds("t", PartitionId(1)));
    EXPECT_FALSE(wal->holds("t", PartitionId(2)));
    EXPECT_FALSE(wal->holds("u", PartitionId(0)));
    wal->start();
    ASSERT_TRUE(queued.get_future().get().is_ok());
    ASSERT_TRUE(collector.wait_for_count(3));
    wal->mark_committed(std::vector<WalSeq>{WalSeq(1), WalSeq(3)});
    EXPECT_TRUE(wal->holds("t", PartitionId(0)));  // "b" is still pending
    EXPECT_FALSE(wal->holds("t", PartitionId(1)));

    wal.reset();
    Collector recovered;
    auto reopened = open();
    reopened->set_consumer(recovered.consumer());
    // The segment survives, so its records are handed over again, and held until committed.
    EXPECT_EQ(recovered.sequences().size(), 3u);
    EXPECT_TRUE(reopened->holds("t", PartitionId(0)));
    EXPECT_TRUE(reopened->holds("t", PartitionId(1)));
    reopened->mark_committed(recovered.sequences());
    EXPECT_FALSE(reopened->holds("t", PartitionId(0)));
    EXPECT_FALSE(reopened->holds("t", PartitionId(1)));
}

// Rule: records whose append failed (a failed sync, or a stop before they were written) are not
// held: they were never accepted.
TEST_F(IngressWalTest, FailedOrAbandonedAppendsAreNotHeld) {
    auto wal = open();
    wal->start();
    fs_.fail(FsOp::sync, ".wal", 1);
    EXPECT_EQ(append_and_wait(*wal, {make_record("t", 0, "lost")}).code(), Errc::io_error);
    EXPECT_FALSE(wal->holds("t", PartitionId(0)));
    wal->stop();

    auto idle = open();  // not started: its appends stay queued until stop() abandons them
    std::promise<Status> queued;
    idle->append({make_record("t", 1, "a")}, [&](Status status) { queued.set_value(status); });
    EXPECT_TRUE(idle->holds("t", PartitionId(1)));
    idle->stop();
    EXPECT_EQ(queued.get_future().get().code(), Errc::shutting_down);
    EXPECT_FALSE(idle->holds("t", PartitionId(1)));
}

}  // namespace
}  // namespace narad::wal
