#include <gtest/gtest.h>

#include <atomic>

#include "base/failpoint.h"
#include "io/fault_injection_fs.h"
#include "meta/fake_meta_store.h"
#include "wal/dispatcher.h"
#include "wal/owner_liveness.h"
#include "wal/wal_test_util.h"

namespace narad::wal {
namespace {

using testing::FakeCommitter;

// Reroutes one partition to another while `active`.
class FakeReroute final : public ReroutePolicy {
  public:
    FakeReroute(uint32_t from, uint32_t to) : from_(from), to_(to) {}
    std::optional<PartitionId> reroute(const std::string&, const std::string&,
                                       PartitionId partition) override {
        if (active && partition.value() == from_) return PartitionId(to_);
        return std::nullopt;
    }
    std::optional<PartitionId> sibling(const std::string&, const std::string&,
                                       PartitionId partition) override {
        return partition.value() == from_ ? std::optional<PartitionId>(PartitionId(to_))
                                          : std::nullopt;
    }
    std::atomic<bool> active{true};

  private:
    uint32_t from_;
    uint32_t to_;
};

class DispatcherRerouteTest : public testing::IngressWalFixture {
  protected:
    void TearDown() override { failpoint::clear_all(); }

    DispatcherOptions options(ReroutePolicy* policy) {
        DispatcherOptions options;
        options.threads = 2;
        options.reroute = policy;
        return options;
    }

    FakeCommitter committer_;
};

// Rule: a rerouted partition's records are never committed to it; they are re-appended for the
// sibling (new sequence numbers) and committed there, in order, and the WAL ends with nothing
// pending.
TEST_F(DispatcherRerouteTest, DeadPartitionRecordsAreCommittedToSibling) {
    FakeReroute policy(0, 1);
    Dispatcher dispatcher(clock_, *wal_, committer_, options(&policy));
    for (int i = 0; i < 5; ++i) append("t", 0, "v" + std::to_string(i));
    append("t", 2, "other");
    dispatcher.start();
    ASSERT_TRUE(committer_.wait_until(
        [&]() REQUIRES(committer_.mutex()) { return committer_.committed_locked() == 6; }));
    EXPECT_EQ(committer_.attempts({"t", 0}), 0u);
    EXPECT_EQ(committer_.values({"t", 1}),
              (std::vector<std::string>{"v0", "v1", "v2", "v3", "v4"}));
    EXPECT_EQ(committer_.values({"t", 2}), (std::vector<std::string>{"other"}));
    dispatcher.stop();
    EXPECT_EQ(wal_->stats().pending_records, 0u);
    EXPECT_EQ(dispatcher.stats().rerouted_records, 5u);
    EXPECT_EQ(dispatcher.stats().committed_records, 6u);
}

// Rule: the originals are marked committed only after the re-append is durable; a crash between
// the two (injected at the failpoint) leaves the originals pending beside their durable copies, so
// they are rerouted again: duplicates, never a loss.
TEST_F(DispatcherRerouteTest, CrashBetweenReappendAndMarkDuplicatesNeverLoses) {
    FakeReroute policy(0, 1);
    std::atomic<uint64_t> pending_at_failpoint{0};
    std::atomic<int> hits{0};
    failpoint::set_hook("dispatcher.after_reappend", [&]() -> Status {
        if (++hits > 1) return Status::ok();
        pending_at_failpoint = wal_->stats().pending_records;
        return Status(Errc::io_error, "injected crash");
    });
    DispatcherOptions opts = options(&policy);
    opts.threads = 1;
    opts.max_batch_records = 3;
    Dispatcher dispatcher(clock_, *wal_, committer_, opts);
    for (int i = 0; i < 3; ++i) append("t", 0, "v" + std::to_string(i));
    dispatcher.start();
    // The first re-append is durable; its copies are committed to partition 1 while the
    // originals wait for their retry.
    ASSERT_TRUE(committer_.wait_until(
        [&]() REQUIRES(committer_.mutex()) { return committer_.committed_locked() == 3; }));
    EXPECT_EQ(pending_at_failpoint.load(), 6u);  // originals + durable copies
    clock_.advance(Millis(1000));
    ASSERT_TRUE(committer_.wait_until(
        [&]() REQUIRES(committer_.mutex()) { return committer_.committed_locked() == 6; }));
    auto values = committer_.all_values();
    EXPECT_EQ(values["v0"], 2);
    EXPECT_EQ(values["v1"], 2);
    EXPECT_EQ(values["v2"], 2);
    EXPECT_EQ(committer_.attempts({"t", 0}), 0u);
    dispatcher.stop();
    EXPECT_EQ(wal_->stats().pending_records, 0u);
}

// Rule: when the policy says "stay", records commit to their own partition.
TEST_F(DispatcherRerouteTest, NoRerouteCommitsInPlace) {
    FakeReroute policy(0, 1);
    policy.active = false;
    Dispatcher dispatcher(clock_, *wal_, committer_, options(&policy));
    append("t", 0, "a");
    dispatcher.start();
    ASSERT_TRUE(committer_.wait_until(
        [&]() REQUIRES(committer_.mutex()) { return committer_.committed_locked() == 1; }));
    EXPECT_EQ(committer_.values({"t", 0}), (std::vector<std::string>{"a"}));
    EXPECT_EQ(dispatcher.stats().rerouted_records, 0u);
}

// Drives retries of a partition whose commits are refused as frozen: once each refusal is queued
// for its retry, the fake clock moves one second on.
void retry_frozen(FakeCommitter& committer, FakeClock& clock, Dispatcher& dispatcher,
                  size_t attempts) {
    for (size_t seen = 1; seen <= attempts; ++seen) {
        ASSERT_TRUE(committer.wait_until([&]() REQUIRES(committer.mutex()) {
            return committer.attempts_locked({"t", 0}) >= seen;
        }));
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (dispatcher.stats().partitions_waiting_retry == 0) {
            ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the refusal was not queued";
            std::this_thread::yield();
        }
        clock.advance(Millis(1000));
    }
}

// Rule: a freeze shorter than the reroute grace only delays a partition's records: they are
// retried and land on their own partition.
TEST_F(DispatcherRerouteTest, ShortFreezeCommitsInPlace) {
    FakeReroute policy(0, 1);
    policy.active = false;
    committer_.set_gate([](const FakeCommitter::Key& key, size_t attempt) {
        if (key.second == 0 && attempt <= 2) return Status(Errc::frozen, "frozen for a move");
        return Status::ok();
    });
    Dispatcher dispatcher(clock_, *wal_, committer_, options(&policy));
    append("t", 0, "a");
    dispatcher.start();
    retry_frozen(committer_, clock_, dispatcher, 2);
    ASSERT_TRUE(committer_.wait_until(
        [&]() REQUIRES(committer_.mutex()) { return committer_.committed_locked() == 1; }));
    EXPECT_EQ(committer_.values({"t", 0}), (std::vector<std::string>{"a"}));
    EXPECT_EQ(dispatcher.stats().rerouted_records, 0u);
}

// Rule: once a partition has been refused as frozen for longer than the grace (3 s), its queued
// records go to the policy's sibling instead, and nothing is lost.
TEST_F(DispatcherRerouteTest, FreezePastTheGraceReroutesToSibling) {
    FakeReroute policy(0, 1);
    policy.active = false;
    committer_.set_gate([](const FakeCommitter::Key& key, size_t) {
        if (key.second == 0) return Status(Errc::frozen, "frozen for a move");
        return Status::ok();
    });
    Dispatcher dispatcher(clock_, *wal_, committer_, options(&policy));
    append("t", 0, "a");
    append("t", 0, "b");
    dispatcher.start();
    retry_frozen(committer_, clock_, dispatcher, 3);
    ASSERT_TRUE(committer_.wait_until(
        [&]() REQUIRES(committer_.mutex()) { return committer_.committed_locked() == 2; }));
    EXPECT_EQ(committer_.values({"t", 1}), (std::vector<std::string>{"a", "b"}));
    dispatcher.stop();
    EXPECT_EQ(dispatcher.stats().rerouted_records, 2u);
    EXPECT_EQ(wal_->stats().pending_records, 0u);
}

class DeadOwnerRerouteTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(store_.create_topic_owned_by("t", {"a", "b", "c", "a"}).is_ok());
        store_.update([&](meta::MetaState& state) {
            state.live = {NodeId("a"), NodeId("b"), NodeId("c")};
        });
    }
    // Marks `node` down since now.
    void take_down(const std::string& node) {
        store_.update([&](meta::MetaState& state) {
            state.live.erase(NodeId(node));
            state.down_since[NodeId(node)] = clock_.now();
        });
    }
    std::optional<PartitionId> reroute(uint32_t partition, std::string incarnation = "inc-1") {
        return policy_.reroute("t", incarnation, PartitionId(partition));
    }

    FakeClock clock_;
    meta::FakeMetaStore store_;
    OwnerLiveness liveness_{clock_, Millis(30'000)};
    DeadOwnerReroute policy_{store_, liveness_};
};

// Rule: only an owner down for at least dead_after is dead; before that, records stay put.
TEST_F(DeadOwnerRerouteTest, OwnerDownLessThanDeadAfterIsNotRerouted) {
    take_down("b");
    clock_.advance(Millis(29'999));
    EXPECT_EQ(reroute(1), std::nullopt);
    clock_.advance(Millis(1));
    EXPECT_EQ(reroute(1), PartitionId(2));
}

// Rule: the sibling is the first following partition (wrapping) whose owner is not dead.
TEST_F(DeadOwnerRerouteTest, SiblingSkipsOtherDeadOwnersAndWraps) {
    take_down("b");
    take_down("c");
    clock_.advance(Millis(30'000));
    EXPECT_EQ(reroute(1), PartitionId(3));  // 2 is c's, also dead
    EXPECT_EQ(reroute(2), PartitionId(3));
    EXPECT_EQ(reroute(0), std::nullopt);  // a is alive
    take_down("a");
    clock_.advance(Millis(30'000));
    EXPECT_EQ(reroute(1), std::nullopt);  // every owner dead: stay and retry
}

// Rule: records of another incarnation (or a deleted topic) are not rerouted; the committer drops
// them.
TEST_F(DeadOwnerRerouteTest, OtherIncarnationIsNotRerouted) {
    take_down("b");
    clock_.advance(Millis(30'000));
    EXPECT_EQ(reroute(1, "inc-0"), std::nullopt);
    EXPECT_EQ(policy_.reroute("gone", "inc-1", PartitionId(1)), std::nullopt);
}

}  // namespace
}  // namespace narad::wal
