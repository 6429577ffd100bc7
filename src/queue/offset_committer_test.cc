#include "queue/offset_committer.h"

#include <gtest/gtest.h>

#include "base/metrics.h"
#include "io/fault_injection_fs.h"
#include "queue/consumer_offset_file.h"
#include "queue/temp_dir_for_test.h"

namespace narad::queue {
namespace {

constexpr Millis kNeverTicks{
    3'600'000};  // the clock never gets there: only stop() or flush() write

double write_errors() {
    return metrics::Registry::global()
        .counter("narad_errors_total", "", {"component", "kind"})
        .with({"offset_committer", "write"})
        .value();
}

class OffsetCommitterTest : public ::testing::Test {
  protected:
    std::shared_ptr<PartitionQueue> make_queue() {
        return std::make_shared<PartitionQueue>(clock_, ConsumerPosition{}, QueueLimits{});
    }
    // Delivers and acks `offset` (which must be the next one handed out).
    static void consume(PartitionQueue& queue, uint64_t offset) {
        auto leases = queue.reserve(Offset(offset + 1), 1);
        ASSERT_EQ(leases.size(), 1u);
        ASSERT_EQ(leases[0].offset, Offset(offset));
        ASSERT_TRUE(queue.ack(leases[0].offset, leases[0].lease_id).is_ok());
    }
    Result<ConsumerPosition> on_disk(const std::string& name) {
        return read_consumer_position(fs_, dir_.file(name));
    }

    FakeClock clock_;
    TempDirForTest dir_;
    io::FaultInjectionFileSystem fs_;
};

// Rule: a pass writes each queue once at first, then only the queues whose position changed.
TEST_F(OffsetCommitterTest, WritesOnlyChangedQueues) {
    OffsetCommitter committer(fs_, clock_, kNeverTicks);
    auto a = make_queue(), b = make_queue(), c = make_queue();
    committer.add(dir_.file("a"), a);
    committer.add(dir_.file("b"), b);
    committer.add(dir_.file("c"), c);

    ASSERT_TRUE(committer.flush().is_ok());
    EXPECT_EQ(fs_.count(io::FsOp::rename), 3);
    ASSERT_TRUE(committer.flush().is_ok());
    EXPECT_EQ(fs_.count(io::FsOp::rename), 3);

    consume(*b, 0);
    ASSERT_TRUE(committer.flush().is_ok());
    EXPECT_EQ(fs_.count(io::FsOp::rename), 4);
    EXPECT_EQ(on_disk("b").value(), b->position());
    EXPECT_EQ(on_disk("a").value(), ConsumerPosition{});

    (void)b->reserve(Offset(5), 3);  // leases alone do not change the position
    ASSERT_TRUE(committer.flush().is_ok());
    EXPECT_EQ(fs_.count(io::FsOp::rename), 4);
    EXPECT_EQ(committer.failures(), 0u);
}

// Rule: a failed write is counted and retried by the next pass until it lands.
TEST_F(OffsetCommitterTest, RetriesAFailedWrite) {
    OffsetCommitter committer(fs_, clock_, kNeverTicks);
    auto queue = make_queue();
    committer.add(dir_.file("p"), queue);
    ASSERT_TRUE(committer.flush().is_ok());
    consume(*queue, 0);

    double errors_before = write_errors();
    fs_.fail(io::FsOp::rename, "p.tmp", 2);
    EXPECT_FALSE(committer.flush().is_ok());
    EXPECT_FALSE(committer.flush().is_ok());
    EXPECT_EQ(committer.failures(), 2u);
    EXPECT_EQ(write_errors(), errors_before + 2);
    EXPECT_EQ(on_disk("p").value(), ConsumerPosition{});

    ASSERT_TRUE(committer.flush().is_ok());
    EXPECT_EQ(on_disk("p").value(), queue->position());
    int renames = fs_.count(io::FsOp::rename);
    ASSERT_TRUE(committer.flush().is_ok());  // landed: nothing more to write
    EXPECT_EQ(fs_.count(io::FsOp::rename), renames);
}

// Rule: stop() wakes the thread at once and writes what changed since the last pass.
TEST_F(OffsetCommitterTest, StopFlushesChangedPositions) {
    auto queue = make_queue();
    {
        OffsetCommitter committer(fs_, clock_, kNeverTicks);
        committer.add(dir_.file("p"), queue);
        committer.start();
        consume(*queue, 0);
        consume(*queue, 1);
        committer.stop();
        EXPECT_EQ(committer.ticks(), 0u);
        EXPECT_EQ(on_disk("p").value(), (ConsumerPosition{Offset(2), {}}));
        consume(*queue, 2);
    }  // the destructor stops (and flushes) too
    EXPECT_EQ(on_disk("p").value(), (ConsumerPosition{Offset(3), {}}));
}

// Rule: the background thread writes changed positions by itself, tick after tick, and retries a
// failed write at the next tick.
TEST_F(OffsetCommitterTest, BackgroundTicksWriteChangedPositions) {
    constexpr Millis kInterval{100};
    OffsetCommitter committer(fs_, clock_, kInterval);
    auto queue = make_queue();
    committer.add(dir_.file("p"), queue);
    committer.start();
    // The committer's thread is the clock's only waiter: once it waits at the new time, the
    // tick that time allowed is over.
    ASSERT_TRUE(clock_.await_waiters(1));
    consume(*queue, 0);
    clock_.advance(kInterval);
    ASSERT_TRUE(clock_.await_waiters(1));
    EXPECT_EQ(committer.ticks(), 1u);
    EXPECT_EQ(on_disk("p").value(), (ConsumerPosition{Offset(1), {}}));

    fs_.fail(io::FsOp::rename, "p.tmp", 1);
    consume(*queue, 1);
    clock_.advance(kInterval);
    ASSERT_TRUE(clock_.await_waiters(1));
    EXPECT_EQ(committer.failures(), 1u);
    EXPECT_EQ(on_disk("p").value(), (ConsumerPosition{Offset(1), {}}));
    clock_.advance(kInterval);
    ASSERT_TRUE(clock_.await_waiters(1));
    EXPECT_EQ(committer.ticks(), 3u);
    EXPECT_EQ(on_disk("p").value(), (ConsumerPosition{Offset(2), {}}));
    committer.stop();
}

// Rule: the background thread writes once per interval of its clock: a changed position is not
// written before the interval has passed since the last tick, and a tick writes it once.
TEST_F(OffsetCommitterTest, WritesOncePerIntervalOfItsClock) {
    constexpr Millis kInterval{100};
    OffsetCommitter committer(fs_, clock_, kInterval);
    auto queue = make_queue();
    committer.add(dir_.file("p"), queue);
    committer.start();
    ASSERT_TRUE(clock_.await_waiters(1));
    for (uint64_t offset = 0; offset < 3; ++offset) {
        int renames = fs_.count(io::FsOp::rename);
        consume(*queue, offset);
        clock_.advance(kInterval - Millis(1));
        ASSERT_TRUE(clock_.await_waiters(1));
        EXPECT_EQ(fs_.count(io::FsOp::rename), renames) << "written before the interval passed";
        clock_.advance(Millis(1));
        ASSERT_TRUE(clock_.await_waiters(1));
        EXPECT_EQ(fs_.count(io::FsOp::rename), renames + 1);
        EXPECT_EQ(on_disk("p").value(), queue->position());
    }
    EXPECT_EQ(committer.ticks(), 3u);
    committer.stop();
}

// Rule: remove() writes the last position unless told the data is being deleted, and afterwards
// nothing writes that path again.
TEST_F(OffsetCommitterTest, RemoveWritesTheLastPositionUnlessDeleting) {
    OffsetCommitter committer(fs_, clock_, kNeverTicks);
    auto kept = make_queue(), deleted = make_queue();
    committer.add(dir_.file("kept"), kept);
    committer.add(dir_.file("deleted"), deleted);
    ASSERT_TRUE(committer.flush().is_ok());
    consume(*kept, 0);
    consume(*deleted, 0);

    committer.remove(dir_.file("kept"), LastPosition::write);
    EXPECT_EQ(on_disk("kept").value(), (ConsumerPosition{Offset(1), {}}));
    int renames = fs_.count(io::FsOp::rename);
    committer.remove(dir_.file("deleted"), LastPosition::discard);
    EXPECT_EQ(fs_.count(io::FsOp::rename), renames);

    consume(*kept, 1);
    ASSERT_TRUE(committer.flush().is_ok());
    committer.stop();
    EXPECT_EQ(fs_.count(io::FsOp::rename), renames);
    EXPECT_EQ(on_disk("deleted").value(), ConsumerPosition{});
}

// Rule: a position the committer wrote survives a crash that drops every unsynced byte.
TEST_F(OffsetCommitterTest, CommittedPositionSurvivesACrash) {
    OffsetCommitter committer(fs_, clock_, kNeverTicks);
    auto queue = make_queue();
    committer.add(dir_.file("p"), queue);
    consume(*queue, 0);
    ASSERT_TRUE(committer.flush().is_ok());
    consume(*queue, 1);
    fs_.fail(io::FsOp::sync_directory, dir_.path());
    EXPECT_FALSE(committer.flush().is_ok());
    ASSERT_TRUE(fs_.drop_unsynced_data().is_ok());
    EXPECT_EQ(on_disk("p").value(), (ConsumerPosition{Offset(1), {}}));
}

}  // namespace
}  // namespace narad::queue
