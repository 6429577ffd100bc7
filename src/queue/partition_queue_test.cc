#include "queue/partition_queue.h"

#include <gtest/gtest.h>

#include <set>

namespace narad::queue {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr Millis kVisibility{30'000};

std::vector<uint64_t> offsets_of(const std::vector<Lease>& leases) {
    std::vector<uint64_t> offsets;
    for (const auto& lease : leases) offsets.push_back(lease.offset.value());
    return offsets;
}

class PartitionQueueTest : public ::testing::Test {
  protected:
    PartitionQueue make(QueueLimits limits = {}, ConsumerPosition start = {}) {
        return PartitionQueue(clock_, std::move(start), limits);
    }
    static QueueLimits limits(uint32_t max_in_flight, uint32_t max_acked_ahead) {
        return QueueLimits{kVisibility, max_in_flight, max_acked_ahead};
    }
    FakeClock clock_;
};

// Rule: a lease that runs out makes its offset deliverable again, and the lapsed handle answers
// gone.
TEST_F(PartitionQueueTest, LapsedLeaseIsRedeliveredAndItsOldHandleIsGone) {
    PartitionQueue queue = make();
    auto first = queue.reserve(Offset(3), 1);
    ASSERT_EQ(offsets_of(first), std::vector<uint64_t>{0});
    EXPECT_EQ(first[0].delivery, 1u);
    EXPECT_EQ(first[0].deadline, clock_.now() + kVisibility);

    clock_.advance(kVisibility - milliseconds(1));
    EXPECT_EQ(offsets_of(queue.reserve(Offset(3), 1)), std::vector<uint64_t>{1});  // 0 still held

    clock_.advance(milliseconds(1));
    auto again = queue.reserve(Offset(3), 1);
    ASSERT_EQ(offsets_of(again), std::vector<uint64_t>{0});
    EXPECT_EQ(again[0].delivery, 2u);
    EXPECT_NE(again[0].lease_id, first[0].lease_id);

    EXPECT_EQ(queue.ack(Offset(0), first[0].lease_id).code(), Errc::gone);
    EXPECT_EQ(queue.extend(Offset(0), first[0].lease_id).code(), Errc::gone);
    EXPECT_EQ(queue.nack(Offset(0), first[0].lease_id).code(), Errc::gone);
    EXPECT_TRUE(queue.ack(Offset(0), again[0].lease_id).is_ok());
    EXPECT_EQ(queue.position().frontier, Offset(1));
}

// Rule: a lease past its deadline is gone even before anyone reserved the offset again.
TEST_F(PartitionQueueTest, AckAfterTheDeadlineIsGoneBeforeRedelivery) {
    PartitionQueue queue = make();
    auto leases = queue.reserve(Offset(2), 2);
    ASSERT_EQ(leases.size(), 2u);
    clock_.advance(kVisibility);
    EXPECT_EQ(queue.ack(Offset(0), leases[0].lease_id).code(), Errc::gone);
    EXPECT_EQ(queue.nack(Offset(1), leases[1].lease_id).code(), Errc::gone);
    EXPECT_EQ(queue.position().frontier, Offset(0));
    EXPECT_EQ(queue.stats().in_flight, 0u);
    EXPECT_EQ(offsets_of(queue.reserve(Offset(2), 5)), (std::vector<uint64_t>{0, 1}));
}

// Rule: expire_leases() ends exactly the lapsed leases and next_deadline() names the earliest one.
TEST_F(PartitionQueueTest, ExpireLeasesEndsOnlyLapsedLeases) {
    PartitionQueue queue = make();
    EXPECT_FALSE(queue.next_deadline().has_value());
    MonoTime start = clock_.now();
    (void)queue.reserve(Offset(10), 2);
    clock_.advance(seconds(10));
    (void)queue.reserve(Offset(10), 1);
    EXPECT_EQ(queue.next_deadline(), start + kVisibility);
    clock_.advance(seconds(20));
    EXPECT_EQ(queue.expire_leases(), 2u);
    EXPECT_EQ(queue.stats().in_flight, 1u);
    EXPECT_EQ(queue.next_deadline(), start + seconds(10) + kVisibility);
    EXPECT_EQ(queue.expire_leases(), 0u);
}

// Rule: extend restarts the visibility window, so the lease outlives its original deadline.
TEST_F(PartitionQueueTest, ExtendRestartsTheVisibilityWindow) {
    PartitionQueue queue = make();
    auto leases = queue.reserve(Offset(1), 1);
    ASSERT_EQ(leases.size(), 1u);
    clock_.advance(seconds(20));
    auto deadline = queue.extend(Offset(0), leases[0].lease_id);
    ASSERT_TRUE(deadline.is_ok());
    EXPECT_EQ(*deadline, clock_.now() + kVisibility);
    EXPECT_EQ(queue.next_deadline(), *deadline);

    clock_.advance(seconds(20));  // 40 s after the reserve: past the original deadline
    EXPECT_TRUE(queue.reserve(Offset(1), 1).empty());
    EXPECT_TRUE(queue.ack(Offset(0), leases[0].lease_id).is_ok());
    EXPECT_EQ(queue.position().frontier, Offset(1));
}

// Rule: a nacked offset is deliverable at once, before any new offset, with the next delivery
// count.
TEST_F(PartitionQueueTest, NackedOffsetIsRedeliveredImmediatelyAndFirst) {
    PartitionQueue queue = make();
    auto leases = queue.reserve(Offset(10), 3);
    ASSERT_EQ(offsets_of(leases), (std::vector<uint64_t>{0, 1, 2}));
    ASSERT_TRUE(queue.nack(Offset(1), leases[1].lease_id).is_ok());

    auto next = queue.reserve(Offset(10), 2);
    ASSERT_EQ(offsets_of(next), (std::vector<uint64_t>{1, 3}));
    EXPECT_EQ(next[0].delivery, 2u);
    EXPECT_EQ(next[1].delivery, 1u);
    EXPECT_EQ(queue.ack(Offset(1), leases[1].lease_id).code(), Errc::gone);
    EXPECT_TRUE(queue.ack(Offset(1), next[0].lease_id).is_ok());
}

// Rule: a handle that does not name the offset's current lease answers gone and changes nothing.
TEST_F(PartitionQueueTest, UnknownOrMismatchedLeaseIdIsGone) {
    PartitionQueue queue = make();
    auto leases = queue.reserve(Offset(10), 2);
    ASSERT_EQ(leases.size(), 2u);
    EXPECT_EQ(queue.ack(Offset(5), leases[0].lease_id).code(), Errc::gone);  // never leased
    EXPECT_EQ(queue.ack(Offset(0), leases[1].lease_id).code(), Errc::gone);  // another's id
    EXPECT_EQ(queue.ack(Offset(0), LeaseId(leases[0].lease_id.value() + 1000)).code(), Errc::gone);
    EXPECT_EQ(queue.extend(Offset(0), LeaseId(0)).code(), Errc::gone);
    EXPECT_EQ(queue.nack(Offset(1), leases[0].lease_id).code(), Errc::gone);
    EXPECT_EQ(queue.stats().in_flight, 2u);

    ASSERT_TRUE(queue.ack(Offset(0), leases[0].lease_id).is_ok());
    EXPECT_EQ(queue.ack(Offset(0), leases[0].lease_id).code(), Errc::gone);  // already settled
}

// Rule: acks above the frontier are held as acked-ahead, and the frontier jumps over them once the
// gap is acked.
TEST_F(PartitionQueueTest, FrontierAdvancesOverAckedAhead) {
    PartitionQueue queue = make();
    auto leases = queue.reserve(Offset(5), 5);
    ASSERT_EQ(leases.size(), 5u);
    uint64_t version = queue.position_version();
    for (int i : {1, 2, 4}) ASSERT_TRUE(queue.ack(Offset(i), leases[i].lease_id).is_ok());
    EXPECT_EQ(queue.position(), (ConsumerPosition{Offset(0), {Offset(1), Offset(2), Offset(4)}}));
    EXPECT_EQ(queue.position_version(), version + 3);

    ASSERT_TRUE(queue.ack(Offset(0), leases[0].lease_id).is_ok());
    EXPECT_EQ(queue.position(), (ConsumerPosition{Offset(3), {Offset(4)}}));
    ASSERT_TRUE(queue.ack(Offset(3), leases[3].lease_id).is_ok());
    EXPECT_EQ(queue.position(), (ConsumerPosition{Offset(5), {}}));
    EXPECT_EQ(queue.position_version(), version + 5);
    QueueStats stats = queue.stats();
    EXPECT_EQ(stats.in_flight, 0u);
    EXPECT_EQ(stats.acked_ahead, 0u);
    EXPECT_EQ(stats.next_unread, Offset(5));
}

// Rule: reserve never hands out an offset at or above the high watermark, nor more than `max`.
TEST_F(PartitionQueueTest, ReserveStopsAtTheHighWatermarkAndAtMax) {
    PartitionQueue queue = make();
    EXPECT_TRUE(queue.reserve(Offset(0), 10).empty());
    EXPECT_TRUE(queue.reserve(Offset(5), 0).empty());
    EXPECT_EQ(offsets_of(queue.reserve(Offset(3), 10)), (std::vector<uint64_t>{0, 1, 2}));
    EXPECT_TRUE(queue.reserve(Offset(3), 10).empty());
    EXPECT_EQ(offsets_of(queue.reserve(Offset(8), 2)), (std::vector<uint64_t>{3, 4}));
    EXPECT_EQ(queue.stats().next_unread, Offset(5));
}

// Rule: at most max_in_flight leases are out; reserve returns nothing when full and resumes after
// an ack.
TEST_F(PartitionQueueTest, InFlightCapBlocksReserveUntilAnAck) {
    PartitionQueue queue = make(limits(2, 100));
    auto leases = queue.reserve(Offset(10), 5);
    ASSERT_EQ(offsets_of(leases), (std::vector<uint64_t>{0, 1}));
    EXPECT_TRUE(queue.reserve(Offset(10), 5).empty());
    ASSERT_TRUE(queue.ack(Offset(1), leases[1].lease_id).is_ok());
    EXPECT_EQ(offsets_of(queue.reserve(Offset(10), 5)), (std::vector<uint64_t>{2}));
    EXPECT_TRUE(queue.reserve(Offset(10), 5).empty());

    queue.set_limits(limits(4, 100));  // a raised cap applies at once
    EXPECT_EQ(offsets_of(queue.reserve(Offset(10), 5)), (std::vector<uint64_t>{3, 4}));
}

// Rule: with the acked-ahead window full acks are still accepted (the set may pass the cap by the
// leases already out), reserve offers only the frontier offset, and acking the frontier frees the
// window.
TEST_F(PartitionQueueTest, AckedAheadCapAllowsOnlyTheFrontier) {
    PartitionQueue queue = make(limits(100, 2));
    auto leases = queue.reserve(Offset(10), 5);
    ASSERT_EQ(leases.size(), 5u);
    ASSERT_TRUE(queue.ack(Offset(1), leases[1].lease_id).is_ok());
    ASSERT_TRUE(queue.ack(Offset(2), leases[2].lease_id).is_ok());

    ASSERT_TRUE(queue.ack(Offset(3), leases[3].lease_id).is_ok());  // past the cap, accepted
    EXPECT_EQ(queue.stats().acked_ahead, 3u);
    EXPECT_EQ(queue.stats().in_flight, 2u);

    // The frontier (0) is leased, so nothing is offered; once nacked, only it is.
    EXPECT_TRUE(queue.reserve(Offset(10), 5).empty());
    ASSERT_TRUE(queue.nack(Offset(0), leases[0].lease_id).is_ok());
    auto frontier_only = queue.reserve(Offset(10), 5);
    ASSERT_EQ(offsets_of(frontier_only), std::vector<uint64_t>{0});
    EXPECT_TRUE(queue.reserve(Offset(10), 5).empty());

    ASSERT_TRUE(queue.ack(Offset(0), frontier_only[0].lease_id).is_ok());
    EXPECT_EQ(queue.position(), (ConsumerPosition{Offset(4), {}}));
    EXPECT_TRUE(queue.ack(Offset(4), leases[4].lease_id).is_ok());
    EXPECT_EQ(offsets_of(queue.reserve(Offset(10), 2)), (std::vector<uint64_t>{5, 6}));
}

// Rule: a full window offers the frontier even when it was never handed out.
TEST_F(PartitionQueueTest, FullWindowOffersAnUnreadFrontier) {
    PartitionQueue queue =
        make(limits(100, 2), ConsumerPosition{Offset(0), {Offset(1), Offset(2)}});
    auto leases = queue.reserve(Offset(10), 5);
    ASSERT_EQ(offsets_of(leases), std::vector<uint64_t>{0});
    EXPECT_EQ(queue.stats().next_unread, Offset(1));
    ASSERT_TRUE(queue.ack(Offset(0), leases[0].lease_id).is_ok());
    EXPECT_EQ(offsets_of(queue.reserve(Offset(10), 2)), (std::vector<uint64_t>{3, 4}));
}

// Rule: skip settles an offset whether leased, queued for redelivery or never handed out, ignoring
// the acked-ahead cap; the skipped offset is never delivered again.
TEST_F(PartitionQueueTest, SkipSettlesLeasedAndUnreadOffsets) {
    PartitionQueue queue = make(limits(100, 1));
    auto leases = queue.reserve(Offset(4), 3);
    ASSERT_EQ(leases.size(), 3u);
    uint64_t version = queue.position_version();

    queue.skip(Offset(1));  // leased
    EXPECT_EQ(queue.ack(Offset(1), leases[1].lease_id).code(), Errc::gone);
    queue.skip(Offset(5));  // never handed out, beyond the window's cap
    EXPECT_EQ(queue.position(), (ConsumerPosition{Offset(0), {Offset(1), Offset(5)}}));
    EXPECT_EQ(queue.position_version(), version + 2);
    queue.skip(Offset(5));  // already settled: no change
    EXPECT_EQ(queue.position_version(), version + 2);

    ASSERT_TRUE(queue.nack(Offset(2), leases[2].lease_id).is_ok());
    queue.skip(Offset(2));  // queued for redelivery
    queue.skip(Offset(0));  // the frontier: moves it over 1 and 2
    EXPECT_EQ(queue.position(), (ConsumerPosition{Offset(3), {Offset(5)}}));
    EXPECT_EQ(queue.stats().in_flight, 0u);

    EXPECT_EQ(offsets_of(queue.reserve(Offset(8), 10)), (std::vector<uint64_t>{3}));
}

// Rule: reserve steps over offsets skipped before they were ever handed out.
TEST_F(PartitionQueueTest, ReserveStepsOverSkippedUnreadOffsets) {
    PartitionQueue queue = make();
    queue.skip(Offset(2));
    queue.skip(Offset(3));
    EXPECT_EQ(offsets_of(queue.reserve(Offset(6), 10)), (std::vector<uint64_t>{0, 1, 4, 5}));
}

// Rule: skip_below settles everything below `oldest`, dropping its leases and redeliveries, and
// never hands those offsets out again.
TEST_F(PartitionQueueTest, SkipBelowDropsLeasesAndRedeliveriesBelowOldest) {
    PartitionQueue queue = make();
    auto leases = queue.reserve(Offset(10), 6);
    ASSERT_EQ(leases.size(), 6u);
    ASSERT_TRUE(queue.nack(Offset(1), leases[1].lease_id).is_ok());
    ASSERT_TRUE(queue.ack(Offset(4), leases[4].lease_id).is_ok());
    uint64_t version = queue.position_version();

    queue.skip_below(Offset(3));
    EXPECT_EQ(queue.position(), (ConsumerPosition{Offset(3), {Offset(4)}}));
    EXPECT_EQ(queue.position_version(), version + 1);
    EXPECT_EQ(queue.ack(Offset(2), leases[2].lease_id).code(), Errc::gone);
    EXPECT_EQ(queue.stats().in_flight, 2u);  // 3 and 5
    EXPECT_EQ(offsets_of(queue.reserve(Offset(10), 10)), (std::vector<uint64_t>{6, 7, 8, 9}));

    queue.skip_below(Offset(2));  // below the frontier: nothing
    EXPECT_EQ(queue.position_version(), version + 1);

    queue.skip_below(Offset(20));  // past everything handed out
    QueueStats stats = queue.stats();
    EXPECT_EQ(stats.frontier, Offset(20));
    EXPECT_EQ(stats.next_unread, Offset(20));
    EXPECT_EQ(stats.in_flight, 0u);
    EXPECT_EQ(stats.acked_ahead, 0u);
    EXPECT_FALSE(queue.next_deadline().has_value());
    EXPECT_EQ(offsets_of(queue.reserve(Offset(22), 10)), (std::vector<uint64_t>{20, 21}));
}

// Rule: a queue built from a position keeps only acked-ahead offsets at or above the frontier and
// never delivers an acked one.
TEST_F(PartitionQueueTest, StartPositionDropsAckedAheadBelowTheFrontier) {
    PartitionQueue queue =
        make({}, ConsumerPosition{Offset(5), {Offset(2), Offset(5), Offset(6), Offset(9)}});
    EXPECT_EQ(queue.position(), (ConsumerPosition{Offset(7), {Offset(9)}}));
    EXPECT_EQ(offsets_of(queue.reserve(Offset(12), 10)), (std::vector<uint64_t>{7, 8, 10, 11}));
}

// Rule: lease ids are unique per reservation, also between two queues started from the same state
// (as after a restart).
TEST_F(PartitionQueueTest, LeaseIdsAreNeverReusedAcrossRestarts) {
    std::set<LeaseId> ids;
    for (int restart = 0; restart < 3; ++restart) {
        PartitionQueue queue = make();
        for (const Lease& lease : queue.reserve(Offset(100), 100)) {
            EXPECT_NE(lease.lease_id, LeaseId(0));
            EXPECT_TRUE(ids.insert(lease.lease_id).second);
        }
    }
    EXPECT_EQ(ids.size(), 300u);
}

// Rule: with max_deliveries, an offset whose max_deliveries-th lease ends without an ack (nack or
// lapse) is never delivered again but waits, with its deliveries and last nack reason, until its
// dead letter settles it; the offsets behind it keep being delivered; 0 delivers forever.
TEST_F(PartitionQueueTest, ExhaustedOffsetWaitsForItsDeadLetter) {
    QueueLimits dead_letters = limits(16, 16);
    dead_letters.max_deliveries = 2;
    PartitionQueue queue = make(dead_letters);
    auto first = queue.reserve(Offset(2), 1);
    ASSERT_EQ(offsets_of(first), std::vector<uint64_t>{0});
    ASSERT_TRUE(queue.nack(Offset(0), first[0].lease_id, "bad input").is_ok());
    auto second = queue.reserve(Offset(2), 1);
    ASSERT_EQ(offsets_of(second), std::vector<uint64_t>{0});
    EXPECT_EQ(second[0].delivery, 2u);
    clock_.advance(kVisibility);  // the second delivery lapses
    EXPECT_EQ(offsets_of(queue.reserve(Offset(2), 10)), std::vector<uint64_t>{1});
    auto waiting = queue.exhausted();
    ASSERT_EQ(waiting.size(), 1u);
    EXPECT_EQ(waiting[0].offset, Offset(0));
    EXPECT_EQ(waiting[0].deliveries, 2u);
    EXPECT_EQ(waiting[0].reason, "bad input");
    EXPECT_EQ(queue.position().frontier, Offset(0));
    EXPECT_TRUE(queue.settle_exhausted(Offset(0)));
    EXPECT_FALSE(queue.settle_exhausted(Offset(0)));
    EXPECT_TRUE(queue.exhausted().empty());
    EXPECT_EQ(queue.position().frontier, Offset(1));

    PartitionQueue forever = make(limits(16, 16));
    for (uint32_t delivery = 1; delivery <= 5; ++delivery) {
        auto lease = forever.reserve(Offset(1), 1);
        ASSERT_EQ(offsets_of(lease), std::vector<uint64_t>{0});
        EXPECT_EQ(lease[0].delivery, delivery);
        ASSERT_TRUE(forever.nack(Offset(0), lease[0].lease_id).is_ok());
    }
    EXPECT_TRUE(forever.exhausted().empty());
}

}  // namespace
}  // namespace narad::queue
