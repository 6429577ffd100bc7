// In-process tests of a partition move: a source node and a destination node (their own logs,
// gates and consumer state) share one FakeMetaStore; the destination reaches the source's
// HandoffService through a SourceClient that calls it directly.
#include <gtest/gtest.h>

#include "base/failpoint.h"
#include "meta/fake_meta_store.h"
#include "move/handoff.h"
#include "move/runner.h"
#include "move/worker.h"
#include "queue/consume_service.h"
#include "queue/temp_dir_for_test.h"
#include "wal/local_committer.h"

namespace narad::move {
namespace {

// Runs posted work inline; timers never fire (these tests consume with wait 0).
class InlineScheduler final : public Scheduler {
  public:
    class Task final : public ScheduledTask {
      public:
        void cancel() override {}
    };
    std::shared_ptr<ScheduledTask> after(Millis, std::function<void()>) override {
        return std::make_shared<Task>();
    }
    void post(std::function<void()> fn) override { fn(); }
};

// One node's storage, consumer state and source side.
struct TestNode {
    TestNode(meta::FakeMetaStore& store, Clock& clock, std::string id)
        : self(std::move(id)),
          logs(io::posix_file_system(), clock, dir.path(), small_segments()),
          consume(io::posix_file_system(), clock, store, logs, guards, offsets, scheduler),
          committer(io::posix_file_system(), clock, store, logs, guards, &gates),
          handoff(clock, io::posix_file_system(), store, self, logs, gates, consume,
                  HandoffOptions{.freeze_ttl = Millis(30'000), .lease_drain = Millis(0)}) {
        consume.set_serving_filter(
            [this](const meta::MetaState& state, std::string_view topic, PartitionId partition) {
                const meta::Assignment* a = state.find_assignment(topic, partition);
                return a != nullptr && a->owner == self && !gates.frozen(topic, partition);
            });
    }
    static storage::LogOptions small_segments() {
        storage::LogOptions options;
        options.segment_bytes_max = 2048;  // a few records seal a segment
        return options;
    }
    Status commit(int first, int count) {
        std::vector<std::string> values;
        for (int i = first; i < first + count; ++i) values.push_back("record-" + std::to_string(i));
        std::vector<storage::Record> records;
        for (const auto& v : values) records.push_back(storage::Record{.key = "", .value = v});
        return committer.commit("orders", "inc-1", PartitionId(0), records);
    }
    std::vector<std::string> read_all() {
        std::vector<std::string> out;
        auto log = logs.get("orders", PartitionId(0), storage::CreateIfMissing::no);
        if (!log.is_ok()) return out;
        auto read = (*log)->read(Offset(0), 100'000, 64 << 20);
        if (!read.is_ok()) return out;
        for (auto& record : read->records) out.push_back(record.value);
        return out;
    }

    NodeId self;
    queue::TempDirForTest dir;
    storage::LogManager logs;
    storage::TopicGuards guards;
    storage::PartitionGates gates;
    queue::OffsetCommitter offsets{io::posix_file_system(), Millis(100)};
    InlineScheduler scheduler;
    queue::ConsumeService consume;
    wal::LocalCommitter committer;
    HandoffService handoff;
};

// The destination's view of the source: direct calls.
class DirectSource final : public SourceClient {
  public:
    explicit DirectSource(HandoffService& source) : source_(source) {}
    Result<TransferListing> list(const NodeId&, const std::string& topic, PartitionId p) override {
        return source_.list(topic, p);
    }
    Result<std::string> read_chunk(const NodeId&, const std::string& topic, PartitionId p,
                                   Offset base, ChunkKind kind, uint64_t offset,
                                   uint64_t length) override {
        return source_.read_chunk(topic, p, base, kind, offset, length);
    }
    Result<Handoff> prepare(const NodeId&, const std::string& topic, PartitionId p,
                            const std::string& token) override {
        if (token.empty()) ++freezes;
        return source_.prepare(topic, p, token);
    }
    Status fence(const NodeId&, const std::string& topic, PartitionId p, const std::string& token,
                 Offset hwm) override {
        return source_.fence(topic, p, token, hwm);
    }

    std::atomic<int> freezes{0};  // PrepareHandoff calls that froze (no token)

  private:
    HandoffService& source_;
};

class MoveTest : public ::testing::Test {
  protected:
    void SetUp() override {
        store_.update([](meta::MetaState& state) {
            for (const char* id : {"n1", "n2", "n3"}) {
                state.members[NodeId(id)] = meta::MemberInfo{.id = NodeId(id)};
                state.live.insert(NodeId(id));
            }
        });
        ASSERT_TRUE(store_.create_topic_owned_by("orders", {"n1"}).is_ok());
        store_.watch([this](const meta::MetaSnapshot& view) { source_.handoff.on_snapshot(view); });
    }
    void TearDown() override { failpoint::clear_all(); }

    const meta::PartitionKey key_{"orders", PartitionId(0)};
    meta::Assignment assignment() {
        return *store_.snapshot()->find_assignment("orders", PartitionId(0));
    }
    void target(const char* node) {
        ASSERT_EQ(store_.set_targets({{key_, assignment(), NodeId(node)}}).value(), 1u);
    }
    // The destination's (n2's) move context.
    MoveContext destination_context(MoveOptions options, CutoverSlots* slots = nullptr) {
        return MoveContext{clock_,
                           io::posix_file_system(),
                           store_,
                           NodeId("n2"),
                           destination_.dir.path(),
                           destination_.logs,
                           destination_.guards,
                           destination_.consume,
                           destination_.handoff,
                           direct_,
                           options,
                           slots};
    }
    // Runs one move of orders/0 from n1 to n2 to its end. While `advance_clock` says so, the fake
    // clock moves a second per turn of this thread (so waits measured on it pass).
    MoveProgress run_move(const std::function<bool()>& advance_clock = nullptr) {
        MoveOptions options;
        options.resolve_poll = Millis(1);
        options.retry_backoff = Millis(10);
        options.lag_bytes = 0;
        options.copy.chunk_bytes = 1000;  // several chunks per segment
        MoveContext context = destination_context(options);
        MoveWorker worker(context, key_, NodeId("n1"), IncarnationId("inc-1"));
        worker.start();
        while (!worker.finished()) {
            if (advance_clock && advance_clock()) clock_.advance(Millis(1'000));
            std::this_thread::yield();
        }
        return worker.progress();
    }

    // A flip that did not commit: the source still owns the partition with all `records`, and
    // the destination's copy is off the partition's path.
    void expect_flip_undone(size_t records) {
        EXPECT_EQ(assignment().owner, NodeId("n1"));
        EXPECT_FALSE(io::posix_file_system().exists(
            destination_.logs.partition_directory("orders", PartitionId(0))));
        EXPECT_EQ(source_.read_all().size(), records);
    }

    FakeClock clock_;
    meta::FakeMetaStore store_;
    TestNode source_{store_, clock_, "n1"};
    TestNode destination_{store_, clock_, "n2"};
    DirectSource direct_{source_.handoff};
};

// Rule: a frozen partition refuses commits with Errc::frozen and appends nothing, and hands out no
// new leases; acks of leases already out keep working.
TEST_F(MoveTest, FreezeRefusesCommitsAndReservationsButNotAcks) {
    ASSERT_TRUE(source_.commit(0, 5).is_ok());
    queue::ConsumeRequest request{.topic = "orders", .max = 1};
    std::optional<Result<std::vector<queue::Delivery>>> leased;
    source_.consume.consume(request, [&](auto r) { leased = std::move(r); });
    ASSERT_TRUE(leased && leased->is_ok() && leased->value().size() == 1);
    auto handoff = source_.handoff.prepare("orders", PartitionId(0), "");
    ASSERT_TRUE(handoff.is_ok()) << handoff.status().to_string();
    EXPECT_EQ(handoff->listing.high_watermark, Offset(5));
    EXPECT_EQ(source_.commit(5, 1).code(), Errc::frozen);
    EXPECT_EQ(source_.read_all().size(), 5u);
    std::optional<Result<std::vector<queue::Delivery>>> more;
    source_.consume.consume(request, [&](auto r) { more = std::move(r); });
    ASSERT_TRUE(more && more->is_ok());
    EXPECT_TRUE(more->value().empty());
    const queue::Delivery& first = leased->value().front();
    EXPECT_TRUE(
        source_.consume
            .settle("orders", PartitionId(0), first.offset, first.lease_id, queue::Settle::ack)
            .is_ok());
    EXPECT_TRUE(store_.freeze_held(key_));
}

// Rule: a token re-arms only its own live freeze (409 otherwise), and the fence also requires the
// high watermark the copy reproduced.
TEST_F(MoveTest, TokenRearmsOnlyItsFreezeAndFenceChecksTheHighWatermark) {
    ASSERT_TRUE(source_.commit(0, 3).is_ok());
    auto handoff = source_.handoff.prepare("orders", PartitionId(0), "").value();
    EXPECT_TRUE(source_.handoff.prepare("orders", PartitionId(0), handoff.token).is_ok());
    EXPECT_EQ(source_.handoff.prepare("orders", PartitionId(0), "not-the-token").code(),
              Errc::conflict);
    EXPECT_EQ(source_.handoff.fence("orders", PartitionId(0), handoff.token, Offset(2)).code(),
              Errc::conflict);
    EXPECT_TRUE(source_.handoff.fence("orders", PartitionId(0), handoff.token, Offset(3)).is_ok());
}

// Rule: a freeze lapses only through the metastore: after its TTL the key is revoked first, then,
// still the owner, the partition takes commits again and the old token is refused.
TEST_F(MoveTest, LapsedFreezeRevokesItsKeyThenReopens) {
    ASSERT_TRUE(source_.commit(0, 2).is_ok());
    auto handoff = source_.handoff.prepare("orders", PartitionId(0), "").value();
    source_.handoff.tick();
    EXPECT_EQ(source_.commit(2, 1).code(), Errc::frozen) << "lifted before the TTL";
    clock_.advance(Millis(30'001));
    source_.handoff.tick();
    EXPECT_FALSE(store_.freeze_held(key_));
    EXPECT_TRUE(source_.commit(2, 1).is_ok());
    EXPECT_EQ(source_.handoff.prepare("orders", PartitionId(0), handoff.token).code(),
              Errc::conflict);
}

// Rule: a move copies every committed record and the consumer position, flips ownership, and
// leaves the source closed for the partition.
TEST_F(MoveTest, MoveCopiesRecordsAndPositionThenFlips) {
    ASSERT_TRUE(source_.commit(0, 60).is_ok());  // several sealed segments
    queue::ConsumeRequest request{.topic = "orders", .max = 10};
    std::optional<Result<std::vector<queue::Delivery>>> leased;
    source_.consume.consume(request, [&](auto r) { leased = std::move(r); });
    ASSERT_TRUE(leased && leased->is_ok());
    for (const auto& d : leased->value()) {
        ASSERT_TRUE(source_.consume
                        .settle("orders", PartitionId(0), d.offset, d.lease_id, queue::Settle::ack)
                        .is_ok());
    }
    store_.update([](meta::MetaState& state) {
        meta::Topic child;
        child.name = "orders-copy";
        child.role = meta::TopicRole::child;
        child.parent = "orders";
        child.attach_epoch = "e7";
        state.topics["orders-copy"] = child;
        state.topics["orders"].children = {"orders-copy"};
    });
    target("n2");
    MoveProgress progress = run_move();
    EXPECT_EQ(progress.phase, MovePhase::done) << progress.error;
    EXPECT_EQ(assignment().owner, NodeId("n2"));
    EXPECT_TRUE(assignment().target.value().empty());
    EXPECT_EQ(destination_.read_all(), source_.read_all());
    EXPECT_EQ(destination_.read_all().size(), 60u);
    auto marker = read_marker(io::posix_file_system(),
                              destination_.logs.partition_directory("orders", PartitionId(0)));
    ASSERT_TRUE(marker.is_ok());
    EXPECT_EQ(marker->promoted_high_watermark, Offset(60));
    EXPECT_EQ(marker->source, NodeId("n1"));
    EXPECT_EQ(marker->children, (std::vector<ChildLink>{{"orders-copy", "e7"}}));
    // The new owner resumes after the acked ten.
    std::optional<Result<std::vector<queue::Delivery>>> next;
    destination_.consume.consume(queue::ConsumeRequest{.topic = "orders", .max = 1},
                                 [&](auto r) { next = std::move(r); });
    ASSERT_TRUE(next && next->is_ok() && next->value().size() == 1);
    EXPECT_EQ(next->value().front().offset, Offset(10));
    EXPECT_EQ(source_.commit(60, 1).code(), Errc::frozen) << "the old owner took a commit";
    source_.handoff.tick();  // the flip seen in the snapshot closes the partition at the source
    auto freezes = source_.handoff.freezes();
    ASSERT_EQ(freezes.size(), 1u);
    EXPECT_TRUE(freezes.front().closed);
    EXPECT_FALSE(store_.freeze_held(key_));
}

// Rule: when the freeze lapses during the drain and the source takes commits again, the fence
// refuses, the destination freezes again, and the records committed during the lapse move too.
TEST_F(MoveTest, FreezeLapseMidDrainRefreezesAndLosesNothing) {
    ASSERT_TRUE(source_.commit(0, 20).is_ok());
    target("n2");
    auto fired = std::make_shared<std::atomic<bool>>(false);
    failpoint::set_hook("move.before_fence", [this, fired]() {
        if (fired->exchange(true)) return Status::ok();
        clock_.advance(Millis(30'001));
        source_.handoff.tick();  // the TTL passed: the source lifts its freeze
        return source_.commit(20, 5);
    });
    MoveProgress progress = run_move();
    EXPECT_EQ(progress.phase, MovePhase::done) << progress.error;
    EXPECT_EQ(assignment().owner, NodeId("n2"));
    EXPECT_EQ(destination_.read_all().size(), 25u) << "records committed during the lapse lost";
}

// Rule: a re-plan between copy and flip makes the compare-and-swap fail: nothing is installed as
// owner, the copy leaves the partition's path, and the source keeps its records.
TEST_F(MoveTest, ReplanBeforeFlipRefusesTheFlip) {
    ASSERT_TRUE(source_.commit(0, 20).is_ok());
    target("n2");
    failpoint::set_hook("move.before_flip", [this]() {
        meta::Assignment now = assignment();
        (void)store_.set_targets({{key_, now, NodeId("n3")}});
        return Status::ok();
    });
    MoveProgress progress = run_move();
    EXPECT_EQ(progress.phase, MovePhase::failed);
    EXPECT_EQ(assignment().target, NodeId("n3"));
    expect_flip_undone(20);
}

// Rule: a flip whose reply was lost but which committed is resolved by reading the assignment:
// the move is done and the install stays.
TEST_F(MoveTest, LostReplyOfACommittedFlipResolvesAsDone) {
    ASSERT_TRUE(source_.commit(0, 12).is_ok());
    target("n2");
    ASSERT_TRUE(failpoint::configure("move.flip_reply_lost=error@1").is_ok());
    MoveProgress progress = run_move();
    EXPECT_EQ(progress.phase, MovePhase::done) << progress.error;
    EXPECT_EQ(assignment().owner, NodeId("n2"));
    EXPECT_EQ(destination_.read_all().size(), 12u) << "the install was taken off the path";
}

// Rule: a flip whose reply was lost and which was refused keeps the install until a read that
// started at least 15 s after the proposal shows another target; only then does the copy leave
// the partition's path.
TEST_F(MoveTest, LostReplyOfARefusedFlipWaitsBeforeUninstalling) {
    ASSERT_TRUE(source_.commit(0, 12).is_ok());
    target("n2");
    auto proposed_at = std::make_shared<std::atomic<int64_t>>(0);
    failpoint::set_hook("move.before_flip", [this, proposed_at]() {
        (void)store_.set_targets({{key_, assignment(), NodeId("n3")}});
        proposed_at->store(clock_.now().time_since_epoch().count());
        return Status::ok();
    });
    ASSERT_TRUE(failpoint::configure("move.flip_reply_lost=error@1").is_ok());
    // The clock runs only once the flip is out, so the freeze before it holds.
    MoveProgress progress = run_move([proposed_at] { return proposed_at->load() != 0; });
    auto waited = clock_.now().time_since_epoch() - std::chrono::nanoseconds(proposed_at->load());
    EXPECT_GE(waited, Millis(15'000)) << "the copy left the path before the outcome settled";
    EXPECT_EQ(progress.phase, MovePhase::failed);
    expect_flip_undone(12);
}

// Rule: a copy that fails verification is discarded and copied once more from scratch; a second
// failure blocks the move as copy_unverifiable, and the source is never frozen again.
TEST_F(MoveTest, UnverifiableCopyIsRetriedOnceThenBlocked) {
    ASSERT_TRUE(source_.commit(0, 12).is_ok());
    target("n2");
    ASSERT_TRUE(failpoint::configure("move.verify=error").is_ok());
    MoveProgress progress = run_move();
    EXPECT_EQ(progress.phase, MovePhase::blocked);
    EXPECT_EQ(progress.blocked, "copy_unverifiable");
    EXPECT_EQ(direct_.freezes.load(), 2) << "the source was frozen again after the second failure";
    EXPECT_EQ(assignment().owner, NodeId("n1"));
}

// Rule: the runner skips its reconcile while the replica's versions stand still, runs it when they
// move, after a worker exits and at least every 30 s; it starts a worker for a partition targeted
// here and forgets it once the move is done.
TEST_F(MoveTest, RunnerReconcilesOnlyWhenSomethingMoved) {
    ASSERT_TRUE(source_.commit(0, 5).is_ok());
    MoveOptions options;
    options.retry_backoff = Millis(10);
    MoveContext context = destination_context(options);
    MoveRunner runner(context);
    runner.tick();
    EXPECT_EQ(runner.full_passes(), 1u);
    runner.tick();
    EXPECT_EQ(runner.full_passes(), 1u);
    EXPECT_EQ(runner.skipped_ticks(), 1u);
    target("n2");
    runner.tick();
    EXPECT_EQ(runner.full_passes(), 2u);
    ASSERT_EQ(runner.progress().size(), 1u);
    while (assignment().owner != NodeId("n2")) std::this_thread::yield();
    // The flip moved the versions and the worker exited: the next tick reconciles and drops it.
    while (!runner.progress().front().finished) std::this_thread::yield();
    EXPECT_EQ(runner.progress().front().phase, MovePhase::done);
    runner.tick();
    EXPECT_EQ(runner.full_passes(), 3u);
    EXPECT_TRUE(runner.progress().empty());
    runner.tick();
    EXPECT_EQ(runner.full_passes(), 3u);
    clock_.advance(Millis(30'000));
    runner.tick();
    EXPECT_EQ(runner.full_passes(), 4u) << "no full pass after 30 s";
    EXPECT_EQ(destination_.read_all().size(), 5u);
}

// Rule: a source starting up removes the freeze key an earlier run left on a partition it owns that
// is being moved, so a destination holding that run's token can never flip with it.
TEST_F(MoveTest, StartUpRemovesStaleFreezeKeys) {
    target("n2");
    ASSERT_TRUE(store_.hold_freeze(key_, "token-of-an-earlier-run", Millis(30'000)).is_ok());
    ASSERT_TRUE(source_.handoff.release_stale_freezes().is_ok());
    EXPECT_FALSE(store_.freeze_held(key_));
    EXPECT_EQ(
        store_.complete_move(key_, NodeId("n1"), NodeId("n2"), "token-of-an-earlier-run").value(),
        meta::FlipOutcome::freeze_lapsed);
}

// Rule: at most `limit` cutovers hold a slot at once; a released slot can be taken again.
TEST(CutoverSlots, HoldAtMostTheLimit) {
    CutoverSlots slots(2);
    EXPECT_TRUE(slots.try_acquire());
    EXPECT_TRUE(slots.try_acquire());
    EXPECT_FALSE(slots.try_acquire());
    slots.release();
    EXPECT_TRUE(slots.try_acquire());
    EXPECT_FALSE(slots.try_acquire());
}

// Rule: a move that finds every cutover slot taken does not freeze its source; it keeps copying
// and freezes once a slot is free.
TEST_F(MoveTest, MoveWaitsForACutoverSlotBeforeFreezing) {
    ASSERT_TRUE(source_.commit(0, 8).is_ok());
    target("n2");
    CutoverSlots slots(1);
    ASSERT_TRUE(slots.try_acquire());  // another move holds the only slot
    MoveOptions options;
    options.retry_backoff = Millis(10);
    MoveContext context = destination_context(options, &slots);
    MoveWorker worker(context, key_, NodeId("n1"), IncarnationId("inc-1"));
    worker.start();
    while (worker.progress().passes < 5) std::this_thread::yield();
    EXPECT_EQ(direct_.freezes.load(), 0) << "froze the source without a slot";
    EXPECT_FALSE(store_.freeze_held(key_));
    slots.release();
    while (!worker.finished()) std::this_thread::yield();
    EXPECT_EQ(worker.progress().phase, MovePhase::done);
    EXPECT_EQ(direct_.freezes.load(), 1);
    EXPECT_EQ(destination_.read_all().size(), 8u);
}

}  // namespace
}  // namespace narad::move
