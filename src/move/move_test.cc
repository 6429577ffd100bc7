// In-process tests of a partition move: a source node and a destination node (their own logs,
// gates and consumer state) share one FakeMetaStore; the destination reaches the source's
// HandoffService through a SourceClient that calls it directly.
#include <gtest/gtest.h>

#include <array>

#include "base/failpoint.h"
#include "base/mutex.h"
#include "fanout/cursor_file.h"
#include "meta/fake_meta_store.h"
#include "move/handoff.h"
#include "move/quarantine.h"
#include "move/runner.h"
#include "move/sweep.h"
#include "move/worker.h"
#include "queue/consume_service.h"
#include "queue/temp_dir_for_test.h"
#include "wal/local_committer.h"

namespace narad::move {
namespace {

// One node's storage, consumer state and source side.
struct TestNode {
    TestNode(meta::FakeMetaStore& store, Clock& clock, std::string id)
        : self(std::move(id)),
          logs(io::posix_file_system(), clock, dir.path(), small_segments()),
          offsets(io::posix_file_system(), clock, Millis(100)),
          consume(io::posix_file_system(), clock, store, logs, guards, offsets),
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
    queue::OffsetCommitter offsets;
    queue::ConsumeService consume;
    wal::LocalCommitter committer;
    HandoffService handoff;
};

// The destination's view of the source: direct calls, unless the test has "killed" it (every
// call then fails as an unreachable node's would).
class DirectSource final : public SourceClient {
  public:
    explicit DirectSource(HandoffService& source) : source_(source) {}
    Result<TransferListing> list(const NodeId&, const std::string& topic, PartitionId p) override {
        if (dead) return unreachable();
        ++listings;
        return source_.list(topic, p);
    }
    Result<std::string> read_chunk(const NodeId&, const std::string& topic, PartitionId p,
                                   Offset base, ChunkKind kind, uint64_t offset,
                                   uint64_t length) override {
        if (chunks_left.fetch_sub(1) == 1) dead = true;  // dies before this chunk is served
        if (dead) return unreachable();
        auto bytes = source_.read_chunk(topic, p, base, kind, offset, length);
        if (bytes.is_ok()) fetched += bytes->size();
        return bytes;
    }
    Result<Handoff> prepare(const NodeId&, const std::string& topic, PartitionId p,
                            const FreezeToken& token) override {
        if (dead) return unreachable();
        if (token.value().empty()) ++freezes;
        stamp(token.value().empty() ? Call::froze : Call::rearmed);
        return source_.prepare(topic, p, token);
    }
    Status fence(const NodeId&, const std::string& topic, PartitionId p, const FreezeToken& token,
                 Offset hwm) override {
        if (dead) return unreachable();
        stamp(Call::fenced);
        return source_.fence(topic, p, token, hwm);
    }

    // When each call came, on `clock` (set by the fixture).
    const Clock* clock = nullptr;
    enum class Call { froze, rearmed, fenced };
    std::vector<MonoTime> times(Call call) {
        MutexLock lock(times_mutex_);
        return times_[static_cast<size_t>(call)];
    }

    std::atomic<int> freezes{0};       // PrepareHandoff calls that froze (no token)
    std::atomic<int> listings{0};      // listings served
    std::atomic<uint64_t> fetched{0};  // chunk bytes served
    std::atomic<bool> dead{false};     // every call fails
    std::atomic<int> chunks_left{-1};  // > 0: the source dies at that many more chunks

  private:
    void stamp(Call call) {
        if (clock == nullptr) return;
        MutexLock lock(times_mutex_);
        times_[static_cast<size_t>(call)].push_back(clock->now());
    }
    Mutex times_mutex_;
    std::array<std::vector<MonoTime>, 3> times_ GUARDED_BY(times_mutex_);  // by Call
    static Status unreachable() { return Status(Errc::unavailable, "connection refused"); }
    HandoffService& source_;
};

class MoveTest : public ::testing::Test {
  protected:
    void SetUp() override {
        direct_.clock = &clock_;
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
    // Drives the fake clock until `done`: whenever some thread waits on it (and `may_advance`,
    // if given, allows), time moves on by `step`. Every wait of the code under test is measured on
    // this clock, so a wait ends only once the clock has moved that far.
    void drive_until(const std::function<bool()>& done,
                     const std::function<bool()>& may_advance = nullptr,
                     Millis step = Millis(100)) {
        while (!done()) {
            if (clock_.waiters() > 0 && (!may_advance || may_advance())) clock_.advance(step);
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    }
    // Moves the clock on by `step` each time `threads` threads wait on it having seen its current
    // time, until `done`. False when they stop waiting on it for 10 s of real time: a wait not
    // measured on this clock stalls the run here instead of being skipped over by time that
    // moves on for other threads' sake.
    bool step_while_waiting(int threads, Millis step, const std::function<bool()>& done) {
        constexpr auto kPatience = std::chrono::seconds(10);
        auto give_up = std::chrono::steady_clock::now() + kPatience;
        while (!done()) {
            if (clock_.await_waiters(threads, Millis(1))) {
                clock_.advance(step);
                give_up = std::chrono::steady_clock::now() + kPatience;
            } else if (std::chrono::steady_clock::now() > give_up) {
                return false;
            }
        }
        return true;
    }
    static MoveOptions test_options() {
        MoveOptions options;
        options.resolve_poll = Millis(100);
        options.retry_backoff = Millis(100);
        options.lag_bytes = 0;
        options.copy.chunk_bytes = 1000;  // several chunks per segment
        return options;
    }
    // Runs one move of orders/0 from n1 to n2 to its end, driving the clock (see drive_until).
    MoveProgress run_move(const std::function<bool()>& may_advance = nullptr,
                          MoveOptions options = test_options()) {
        MoveContext context = destination_context(options);
        MoveWorker worker(context, key_, NodeId("n1"), IncarnationId("inc-1"));
        worker.start();
        drive_until([&] { return worker.finished(); }, may_advance);
        return worker.progress();
    }

    // The source dies: every call to it fails and the metastore sees its liveness key gone now.
    void kill_source(bool declared_dead) {
        direct_.dead = true;
        mark_source_down(declared_dead);
    }
    // The metastore sees the source's liveness key gone from now on (its calls still work).
    void mark_source_down(bool declared_dead) {
        store_.update([&](meta::MetaState& state) {
            state.live.erase(NodeId("n1"));
            state.down_since[NodeId("n1")] = clock_.now();
            if (declared_dead) state.declared_dead.insert(NodeId("n1"));
        });
    }
    void declare_source_dead() {
        store_.update([](meta::MetaState& state) { state.declared_dead.insert(NodeId("n1")); });
    }
    void revive_source() {
        direct_.dead = false;
        direct_.chunks_left = -1;
        store_.update([](meta::MetaState& state) {
            state.live.insert(NodeId("n1"));
            state.down_since.erase(NodeId("n1"));
            state.declared_dead.erase(NodeId("n1"));
        });
    }
    std::string destination_path(const std::string& name) const {
        return io::join_path(destination_.dir.path(), name);
    }
    int64_t now_ns() const { return clock_.now().time_since_epoch().count(); }

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
    auto handoff = source_.handoff.prepare("orders", PartitionId(0), FreezeToken());
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
    auto handoff = source_.handoff.prepare("orders", PartitionId(0), FreezeToken()).value();
    EXPECT_TRUE(source_.handoff.prepare("orders", PartitionId(0), handoff.token).is_ok());
    EXPECT_EQ(
        source_.handoff.prepare("orders", PartitionId(0), FreezeToken("not-the-token")).code(),
        Errc::conflict);
    EXPECT_EQ(source_.handoff.fence("orders", PartitionId(0), handoff.token, Offset(2)).code(),
              Errc::conflict);
    EXPECT_TRUE(source_.handoff.fence("orders", PartitionId(0), handoff.token, Offset(3)).is_ok());
}

// Rule: a freeze lapses only through the metastore: after its TTL the key is revoked first, then,
// still the owner, the partition takes commits again and the old token is refused.
TEST_F(MoveTest, LapsedFreezeRevokesItsKeyThenReopens) {
    ASSERT_TRUE(source_.commit(0, 2).is_ok());
    auto handoff = source_.handoff.prepare("orders", PartitionId(0), FreezeToken()).value();
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

// Rule: a parent partition's fan-out cursor files travel with the move: each is installed in the
// copy as the source had it (one past the copy's high watermark lowered to it), and a file that
// fails its checksum at the source is never shipped.
TEST_F(MoveTest, FanoutCursorsTravelVerified) {
    ASSERT_TRUE(source_.commit(0, 20).is_ok());
    std::string source_dir = source_.logs.partition_directory("orders", PartitionId(0));
    auto& fs = io::posix_file_system();
    ASSERT_TRUE(fanout::write_cursor(fs, io::join_path(source_dir, fanout::cursor_file_name("a")),
                                     {"epoch-a", Offset(7)})
                    .is_ok());
    ASSERT_TRUE(fanout::write_cursor(fs, io::join_path(source_dir, fanout::cursor_file_name("b")),
                                     {"epoch-b", Offset(500)})
                    .is_ok());
    std::string torn = fanout::encode_cursor({"epoch-c", Offset(3)});
    torn.resize(torn.size() - 3);
    ASSERT_TRUE(io::write_file_atomically(
                    fs, io::join_path(source_dir, fanout::cursor_file_name("c")), torn)
                    .is_ok());
    target("n2");
    MoveProgress progress = run_move();
    ASSERT_EQ(progress.phase, MovePhase::done) << progress.error;
    std::string installed = destination_.logs.partition_directory("orders", PartitionId(0));
    EXPECT_EQ(
        fanout::read_cursor(fs, io::join_path(installed, fanout::cursor_file_name("a"))).value(),
        (fanout::CursorPosition{"epoch-a", Offset(7)}));
    EXPECT_EQ(
        fanout::read_cursor(fs, io::join_path(installed, fanout::cursor_file_name("b"))).value(),
        (fanout::CursorPosition{"epoch-b", Offset(20)}));
    EXPECT_EQ(
        fanout::read_cursor(fs, io::join_path(installed, fanout::cursor_file_name("c"))).code(),
        Errc::not_found);
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
    MoveOptions options = test_options();
    MoveContext context = destination_context(options);
    MoveWorker worker(context, key_, NodeId("n1"), IncarnationId("inc-1"));
    worker.start();
    // The clock stands still until the flip is out, so the freeze before it holds.
    while (proposed_at->load() == 0) std::this_thread::yield();
    // While the outcome is unknown, the worker's pause between reads and the freeze's re-arm both
    // wait on the clock: it moves one poll at a time, and only once both wait at the current time.
    std::string path = destination_.logs.partition_directory("orders", PartitionId(0));
    ASSERT_TRUE(step_while_waiting(2, options.resolve_poll, [&] {
        return !io::posix_file_system().exists(path);
    })) << "the resolving worker does not wait on the clock";
    auto waited = clock_.now().time_since_epoch() - std::chrono::nanoseconds(proposed_at->load());
    EXPECT_GE(waited, options.unknown_settle)
        << "the copy left the path before the outcome settled";
    EXPECT_LT(waited, options.unknown_settle + 2 * options.resolve_poll)
        << "the copy stayed on the path past the first read after the settle";
    drive_until([&] { return worker.finished(); });
    EXPECT_EQ(worker.progress().phase, MovePhase::failed);
    expect_flip_undone(12);
}

// Rule: a freeze gives the leases already out up to lease_drain of the source's clock to be acked
// before the final listing: with a lease still out, prepare returns only once that much time has
// passed.
TEST_F(MoveTest, FreezeDrainsLeasesForLeaseDrainOfTheClock) {
    ASSERT_TRUE(source_.commit(0, 3).is_ok());
    std::optional<Result<std::vector<queue::Delivery>>> leased;
    source_.consume.consume({.topic = "orders"}, [&](auto r) { leased = std::move(r); });
    ASSERT_TRUE(leased && leased->is_ok() && leased->value().size() == 1);
    constexpr Millis kDrain{1'000};
    constexpr Millis kPoll{5};  // how often the drain looks at the leases
    HandoffService draining(clock_, io::posix_file_system(), store_, NodeId("n1"), source_.logs,
                            source_.gates, source_.consume,
                            HandoffOptions{.freeze_ttl = Millis(30'000), .lease_drain = kDrain});
    std::atomic<bool> prepared{false};
    std::thread freezer([&] {
        EXPECT_TRUE(draining.prepare("orders", PartitionId(0), FreezeToken()).is_ok());
        prepared = true;
    });
    // The drain is the clock's only waiter: it moves on a poll at a time, once it waits again.
    MonoTime started = clock_.now();
    while (clock_.now() - started < kDrain - kPoll) {
        ASSERT_TRUE(clock_.await_waiters(1));
        EXPECT_FALSE(prepared.load()) << "the drain ended with a lease out";
        clock_.advance(kPoll);
    }
    ASSERT_TRUE(clock_.await_waiters(1));
    EXPECT_FALSE(prepared.load());
    clock_.advance(kPoll);
    freezer.join();
    EXPECT_TRUE(store_.freeze_held(key_));
}

// Rule: a throttled copy moves at most bytes_per_second of the worker's clock: copying takes at
// least the bytes it fetched over that rate.
TEST_F(MoveTest, ThrottledCopyTakesItsBytesOverTheRateOfTheClock) {
    ASSERT_TRUE(source_.commit(0, 12).is_ok());
    target("n2");
    MoveOptions options = test_options();
    options.copy.bytes_per_second = 100;
    MonoTime started = clock_.now();
    MoveProgress progress = run_move(nullptr, options);
    EXPECT_EQ(progress.phase, MovePhase::done);
    uint64_t fetched = direct_.fetched.load();
    ASSERT_GT(fetched, 0u);
    EXPECT_GE(clock_.now() - started, Millis(fetched * 1'000 / options.copy.bytes_per_second));
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
    ASSERT_TRUE(
        store_.hold_freeze(key_, FreezeToken("token-of-an-earlier-run"), Millis(30'000)).is_ok());
    ASSERT_TRUE(source_.handoff.release_stale_freezes().is_ok());
    EXPECT_FALSE(store_.freeze_held(key_));
    EXPECT_EQ(
        store_
            .complete_move(key_, NodeId("n1"), NodeId("n2"), FreezeToken("token-of-an-earlier-run"))
            .value(),
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
    drive_until([&] { return worker.progress().passes >= 5; });
    EXPECT_EQ(direct_.freezes.load(), 0) << "froze the source without a slot";
    EXPECT_FALSE(store_.freeze_held(key_));
    slots.release();
    drive_until([&] { return worker.finished(); });
    EXPECT_EQ(worker.progress().phase, MovePhase::done);
    EXPECT_EQ(direct_.freezes.load(), 1);
    EXPECT_EQ(destination_.read_all().size(), 8u);
}

// Rule: a source dead for good is force-promoted over only once it has read dead for the
// force-promote timeout on the destination's own clock (a controller verdict already there does
// not shorten it); the copy is installed whole, the marker says force-promote.
TEST_F(MoveTest, ForcePromoteWaitsForTheDestinationsOwnClock) {
    ASSERT_TRUE(source_.commit(0, 30).is_ok());
    target("n2");
    auto killed_at = std::make_shared<std::atomic<int64_t>>(0);
    auto promoted_at = std::make_shared<std::atomic<int64_t>>(0);
    failpoint::set_hook("move.after_catch_up_pass", [this, killed_at]() {
        if (killed_at->load() == 0) {
            kill_source(/*declared_dead=*/true);
            killed_at->store(now_ns());
        }
        return Status::ok();
    });
    failpoint::set_hook("move.before_force_promote", [this, promoted_at]() {
        promoted_at->store(now_ns());
        return Status::ok();
    });
    MoveProgress progress = run_move();
    EXPECT_EQ(progress.phase, MovePhase::done) << progress.error;
    EXPECT_TRUE(progress.force_promoted);
    EXPECT_EQ(assignment().owner, NodeId("n2"));
    EXPECT_EQ(destination_.read_all().size(), 30u);
    // Dead only after 30 s down, then 2 min more on the destination's clock.
    EXPECT_GE(std::chrono::nanoseconds(promoted_at->load() - killed_at->load()), Millis(150'000));
    auto marker = read_marker(io::posix_file_system(),
                              destination_.logs.partition_directory("orders", PartitionId(0)));
    ASSERT_TRUE(marker.is_ok());
    EXPECT_TRUE(marker->force_promote);
    EXPECT_EQ(marker->promoted_high_watermark, Offset(30));
    EXPECT_EQ(direct_.freezes.load(), 0) << "a force-promote never freezes";
}

// Rule: without the controller's verdict (its own clock) the destination never force-promotes,
// however long it has watched the source dead; the verdict then lets it.
TEST_F(MoveTest, ForcePromoteWaitsForTheControllersVerdict) {
    ASSERT_TRUE(source_.commit(0, 30).is_ok());
    target("n2");
    failpoint::set_hook("move.after_catch_up_pass", [this]() {
        if (!direct_.dead) kill_source(/*declared_dead=*/false);
        return Status::ok();
    });
    MoveContext context = destination_context(test_options());
    MoveWorker worker(context, key_, NodeId("n1"), IncarnationId("inc-1"));
    worker.start();
    drive_until([&] { return direct_.dead.load(); });
    int64_t until = now_ns() + std::chrono::nanoseconds(Millis(600'000)).count();
    drive_until([&] { return now_ns() >= until; });
    EXPECT_FALSE(worker.finished());
    EXPECT_EQ(worker.progress().phase, MovePhase::waiting_for_source);
    EXPECT_EQ(assignment().owner, NodeId("n1"));
    declare_source_dead();
    drive_until([&] { return worker.finished(); });
    EXPECT_EQ(worker.progress().phase, MovePhase::done);
    EXPECT_TRUE(worker.progress().force_promoted);
    EXPECT_EQ(destination_.read_all().size(), 30u);
}

// Rule: a copy behind the source's last listed high watermark is never promoted, whatever both
// clocks say: the move reports source_dead_copy_behind and completes normally once the source is
// back.
TEST_F(MoveTest, CopyBehindTheSourceIsNeverPromoted) {
    ASSERT_TRUE(source_.commit(0, 60).is_ok());
    target("n2");
    mark_source_down(/*declared_dead=*/true);
    direct_.chunks_left = 3;  // listed, then dies two chunks into the copy
    MoveContext context = destination_context(test_options());
    MoveWorker worker(context, key_, NodeId("n1"), IncarnationId("inc-1"));
    worker.start();
    int64_t until = now_ns() + std::chrono::nanoseconds(Millis(600'000)).count();
    drive_until([&] { return now_ns() >= until; });
    EXPECT_FALSE(worker.finished());
    EXPECT_EQ(worker.progress().blocked, "source_dead_copy_behind");
    EXPECT_EQ(assignment().owner, NodeId("n1"));
    revive_source();
    drive_until([&] { return worker.finished(); });
    EXPECT_EQ(worker.progress().phase, MovePhase::done) << worker.progress().error;
    EXPECT_FALSE(worker.progress().force_promoted);
    EXPECT_EQ(destination_.read_all().size(), 60u);
}

// Rule: the force-promote flip itself applies only while the source's liveness key is absent and
// the controller's verdict is present, and only to the move it names.
TEST_F(MoveTest, ForcePromoteFlipRequiresTheSourceGoneAndDeclaredDead) {
    target("n2");
    EXPECT_EQ(store_.force_promote(key_, NodeId("n1"), NodeId("n2")).value(),
              meta::FlipOutcome::source_alive);
    store_.update([&](meta::MetaState& state) { state.live.erase(NodeId("n1")); });
    EXPECT_EQ(store_.force_promote(key_, NodeId("n1"), NodeId("n2")).value(),
              meta::FlipOutcome::source_alive)
        << "promoted without the controller's verdict";
    store_.update([&](meta::MetaState& state) {
        state.live.insert(NodeId("n1"));
        state.declared_dead.insert(NodeId("n1"));
    });
    EXPECT_EQ(store_.force_promote(key_, NodeId("n1"), NodeId("n2")).value(),
              meta::FlipOutcome::source_alive)
        << "promoted over a source whose liveness key exists";
    store_.update([&](meta::MetaState& state) { state.live.erase(NodeId("n1")); });
    EXPECT_EQ(store_.force_promote(key_, NodeId("n1"), NodeId("n3")).value(),
              meta::FlipOutcome::refused);
    EXPECT_EQ(store_.force_promote(key_, NodeId("n1"), NodeId("n2")).value(),
              meta::FlipOutcome::flipped);
    EXPECT_EQ(assignment().owner, NodeId("n2"));
}

// Rule: while the drain runs under the freeze, the destination re-arms it every quarter of the
// freeze TTL (7.5 s of 30 s), measured on its clock, so a pass longer than the TTL never lets it
// lapse.
TEST_F(MoveTest, FreezeIsReArmedEveryQuarterOfItsTtl) {
    ASSERT_TRUE(source_.commit(0, 10).is_ok());
    target("n2");
    auto slept = std::make_shared<std::atomic<bool>>(false);
    failpoint::set_hook("move.finalize_pass", [this, slept]() {
        if (!slept->exchange(true)) clock_.sleep_for(Millis(40'000));  // one long drain pass
        return Status::ok();
    });
    MoveProgress progress = run_move();
    EXPECT_EQ(progress.phase, MovePhase::done) << progress.error;
    EXPECT_EQ(direct_.freezes.load(), 1) << "the freeze lapsed";
    std::vector<MonoTime> rearms = direct_.times(DirectSource::Call::rearmed);
    ASSERT_GE(rearms.size(), 5u);
    // The first re-arm is counted from when the re-arm timer started, just after the freeze.
    EXPECT_GE(rearms.front() - direct_.times(DirectSource::Call::froze).front(), Millis(7'500));
    for (size_t i = 1; i < rearms.size(); ++i) {
        EXPECT_GE(rearms[i] - rearms[i - 1], Millis(7'500));
        EXPECT_LT(rearms[i] - rearms[i - 1], Millis(8'500));
    }
}

// Rule: a flip whose outcome stays unknown is proposed again for at most 2 minutes; then the
// destination stops proposing and re-arming (the freeze lapses), takes its copy off the path on a
// settled read, and freezes afresh.
TEST_F(MoveTest, UnknownFlipIsProposedForTwoMinutesThenTheFreezeLapses) {
    ASSERT_TRUE(source_.commit(0, 10).is_ok());
    target("n2");
    store_.lose_flips(1'000'000);
    auto lost_at = std::make_shared<std::atomic<int64_t>>(0);
    failpoint::set_hook("move.before_flip", [this, lost_at]() {
        if (lost_at->load() == 0) lost_at->store(now_ns());  // the first proposal, lost
        return Status::ok();
    });
    MoveContext context = destination_context(test_options());
    MoveWorker worker(context, key_, NodeId("n1"), IncarnationId("inc-1"));
    worker.start();
    drive_until([&] { return direct_.freezes.load() >= 2; });
    std::vector<MonoTime> fences = direct_.times(DirectSource::Call::fenced);
    std::vector<MonoTime> froze = direct_.times(DirectSource::Call::froze);
    ASSERT_GE(fences.size(), 2u);
    MonoTime first_unknown = MonoTime(std::chrono::nanoseconds(lost_at->load()));
    MonoTime second_freeze = froze.at(1);
    MonoTime last_proposal = first_unknown;
    for (MonoTime at : fences) {
        if (at < second_freeze) last_proposal = at;
    }
    EXPECT_LE(last_proposal - first_unknown, Millis(120'000)) << "proposed past the 2-minute limit";
    EXPECT_GE(last_proposal - first_unknown, Millis(119'000)) << "stopped proposing early";
    for (MonoTime at : direct_.times(DirectSource::Call::rearmed)) {
        if (at < second_freeze) {
            EXPECT_LE(at - first_unknown, Millis(120'000) + Millis(7'600))
                << "kept re-arming the first freeze";
        }
    }
    store_.lose_flips(0);
    drive_until([&] { return worker.finished(); });
    EXPECT_EQ(worker.progress().phase, MovePhase::done) << worker.progress().error;
    EXPECT_EQ(destination_.read_all().size(), 10u);
}

// Rule: the install finds the directory of a deleted incarnation under the topic's name (its
// purge never reached this node): it sets it aside as <topic>.stale-<incarnation> instead of
// refusing, and the move completes.
TEST_F(MoveTest, InstallSetsAsideADeletedIncarnationsDirectory) {
    ASSERT_TRUE(source_.commit(0, 8).is_ok());
    std::string topic_directory = destination_.logs.topic_directory("orders");
    ASSERT_TRUE(storage::prepare_topic_directory(io::posix_file_system(), topic_directory,
                                                 IncarnationId("inc-0"))
                    .is_ok());
    ASSERT_TRUE(io::posix_file_system().create_directories(topic_directory + "/p00000").is_ok());
    target("n2");
    MoveProgress progress = run_move();
    EXPECT_EQ(progress.phase, MovePhase::done) << progress.error;
    EXPECT_EQ(destination_.read_all().size(), 8u);
    EXPECT_TRUE(io::posix_file_system().exists(topic_directory + ".stale-inc-0"));
    EXPECT_EQ(storage::read_incarnation(io::posix_file_system(), topic_directory).value(),
              IncarnationId("inc-1"));
}

// Rule: a session that never reached the source cannot tell what it made visible: no promote.
TEST_F(MoveTest, NeverReachedSourceIsNeverPromoted) {
    ASSERT_TRUE(source_.commit(0, 10).is_ok());
    target("n2");
    kill_source(/*declared_dead=*/true);
    MoveContext context = destination_context(test_options());
    MoveWorker worker(context, key_, NodeId("n1"), IncarnationId("inc-1"));
    worker.start();
    int64_t until = now_ns() + std::chrono::nanoseconds(Millis(600'000)).count();
    drive_until([&] { return now_ns() >= until; });
    EXPECT_FALSE(worker.finished());
    EXPECT_EQ(worker.progress().blocked, "source_dead_copy_behind");
    EXPECT_EQ(assignment().owner, NodeId("n1"));
}

// Rule: a flip whose reply was lost, whose source then dies, keeps its install and completes as a
// force-promote once the source has been dead long enough: no second freeze, nothing recopied.
TEST_F(MoveTest, UnconfirmedFlipWhoseSourceDiesCompletesAsForcePromote) {
    ASSERT_TRUE(source_.commit(0, 20).is_ok());
    target("n2");
    store_.lose_flips(1);
    failpoint::set_hook("move.before_flip", [this]() {
        kill_source(/*declared_dead=*/true);
        return Status::ok();
    });
    uint64_t fetched = 0;
    MoveProgress progress = run_move();
    fetched = direct_.fetched.load();
    EXPECT_EQ(progress.phase, MovePhase::done) << progress.error;
    EXPECT_TRUE(progress.force_promoted);
    EXPECT_EQ(assignment().owner, NodeId("n2"));
    EXPECT_EQ(destination_.read_all().size(), 20u);
    EXPECT_EQ(direct_.freezes.load(), 1);
    EXPECT_EQ(direct_.fetched.load(), fetched);
    auto marker = read_marker(io::posix_file_system(),
                              destination_.logs.partition_directory("orders", PartitionId(0)));
    ASSERT_TRUE(marker.is_ok());
    EXPECT_TRUE(marker->force_promote);
}

// Rule (regression: the rename back took whatever the path held): a topic deleted and recreated
// while a flip is unconfirmed leaves the successor's partition at the path untouched, even when
// this node owns it, and the move ends.
TEST_F(MoveTest, DeleteAndRecreateDuringTheSettleLeavesTheSuccessorAlone) {
    ASSERT_TRUE(source_.commit(0, 12).is_ok());
    target("n2");
    store_.lose_flips(1);
    MoveContext context = destination_context(test_options());
    MoveWorker worker(context, key_, NodeId("n1"), IncarnationId("inc-1"));
    worker.start();
    drive_until([&] { return worker.progress().phase == MovePhase::resolving; },
                [] { return false; });
    // The delete and recreate, as the destination's purge and its first commit would do them.
    ASSERT_TRUE(store_.delete_topic("orders").is_ok());
    ASSERT_TRUE(store_.create_topic_owned_by("orders", {"n2"}, "inc-2").is_ok());
    {
        auto guard = destination_.guards.guard("orders");
        WriterLock lock(*guard);
        destination_.consume.drop_topic("orders");
        ASSERT_TRUE(destination_.logs.remove_topic("orders").is_ok());
    }
    std::vector<storage::Record> successor = {{.key = "", .value = "successor-0"},
                                              {.key = "", .value = "successor-1"}};
    ASSERT_TRUE(
        destination_.committer.commit("orders", "inc-2", PartitionId(0), successor).is_ok());
    drive_until([&] { return worker.finished(); });
    EXPECT_EQ(destination_.read_all(), (std::vector<std::string>{"successor-0", "successor-1"}));
    EXPECT_FALSE(io::posix_file_system().exists(destination_path(".moves/orders-0")));
}

// Rule: a move that ends (aborted) while its source is dead and its copy holds records sets the
// staging copy aside as .moves/<topic>-<N>.quarantine instead of deleting it.
TEST_F(MoveTest, EndedMoveWithADeadSourceQuarantinesItsStaging) {
    ASSERT_TRUE(source_.commit(0, 60).is_ok());
    target("n2");
    mark_source_down(/*declared_dead=*/false);
    direct_.chunks_left = 3;
    MoveContext context = destination_context(test_options());
    MoveWorker worker(context, key_, NodeId("n1"), IncarnationId("inc-1"));
    worker.start();
    drive_until([&] { return worker.progress().blocked == "source_dead_copy_behind"; });
    ASSERT_EQ(store_.set_targets({{key_, assignment(), NodeId()}}).value(), 1u);  // the abort
    worker.cancel();
    drive_until([&] { return worker.finished(); });
    EXPECT_FALSE(io::posix_file_system().exists(destination_path(".moves/orders-0")));
    std::string aside = destination_path(".moves/orders-0.quarantine");
    ASSERT_TRUE(io::posix_file_system().exists(aside));
    EXPECT_TRUE(holds_unexpired_records(io::posix_file_system(), clock_, aside, Millis(0)));
    auto listed = list_quarantined(io::posix_file_system(), destination_.dir.path());
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed.front().kind, "staging");
    EXPECT_EQ(listed.front().partition, 0);
}

// Rule: a move that ends while its source is alive removes its staging copy.
TEST_F(MoveTest, EndedMoveWithALiveSourceRemovesItsStaging) {
    ASSERT_TRUE(source_.commit(0, 20).is_ok());
    target("n2");
    MoveOptions options = test_options();
    options.lag_bytes = 0;
    options.max_passes = 1000;
    MoveContext context = destination_context(options);
    MoveWorker worker(context, key_, NodeId("n1"), IncarnationId("inc-1"));
    failpoint::set_hook("move.after_catch_up_pass", [&worker]() {
        worker.cancel();
        return Status::ok();
    });
    worker.start();
    drive_until([&] { return worker.finished(); });
    EXPECT_FALSE(io::posix_file_system().exists(destination_path(".moves/orders-0")));
    EXPECT_TRUE(list_quarantined(io::posix_file_system(), destination_.dir.path()).empty());
}

// Rule: a restarted destination keeps what it staged (cut back to whole frames, a torn tail
// included) and fetches only what it lacks; a staging copy of another source starts over.
TEST_F(MoveTest, StagedCopyResumesWhatWasStaged) {
    ASSERT_TRUE(source_.commit(0, 60).is_ok());
    target("n2");
    TransferListing listing = source_.handoff.list("orders", PartitionId(0)).value();
    std::string directory = destination_path(".moves/orders-0");
    CopyLimits limits{.chunk_bytes = 1000};
    auto never = [] { return false; };
    auto ignore = [](uint64_t) {};
    {
        StagedCopy first(io::posix_file_system(), clock_, directory, limits);
        ASSERT_TRUE(first.reset(IncarnationId("inc-1"), NodeId("n1")).is_ok());
        direct_.chunks_left = 3;
        EXPECT_FALSE(
            first.pass(direct_, NodeId("n1"), "orders", PartitionId(0), listing, never, ignore)
                .is_ok());
    }
    // A torn write at the end of the last staged segment.
    auto names = io::posix_file_system().list_directory(directory).value();
    std::string last;
    for (const auto& name : names) {
        if (name.ends_with(".log")) last = name;
    }
    ASSERT_FALSE(last.empty());
    {
        auto file = io::posix_file_system().open(io::join_path(directory, last), io::kReadWrite);
        ASSERT_TRUE(file.is_ok());
        uint64_t size = (*file)->size().value();
        ASSERT_TRUE((*file)->write_at(size, std::string(17, '\x5a')).is_ok());
    }
    direct_.dead = false;
    direct_.chunks_left = -1;
    direct_.fetched = 0;
    StagedCopy second(io::posix_file_system(), clock_, directory, limits);
    auto kept = second.resume(IncarnationId("inc-1"), NodeId("n1"));
    ASSERT_TRUE(kept.is_ok()) << kept.status().to_string();
    EXPECT_GT(*kept, 0u);
    ASSERT_TRUE(second.pass(direct_, NodeId("n1"), "orders", PartitionId(0), listing, never, ignore)
                    .is_ok());
    EXPECT_LT(direct_.fetched.load(), listing.total_bytes()) << "copied everything again";
    EXPECT_TRUE(second.verify(listing.high_watermark).is_ok());
    StagedCopy other(io::posix_file_system(), clock_, directory, limits);
    EXPECT_EQ(other.resume(IncarnationId("inc-1"), NodeId("n3")).value(), 0u);
}

// Rule: the install meets a local copy with unexpired records at the partition's path: it sets it
// aside as p<NNNNN>.quarantine instead of replacing it.
TEST_F(MoveTest, InstallQuarantinesAnEarlierCopyWithRecords) {
    ASSERT_TRUE(source_.commit(0, 8).is_ok());
    // The destination holds records of an earlier ownership under the path.
    std::vector<storage::Record> earlier = {{.key = "", .value = "only-here"}};
    store_.update([](meta::MetaState& state) {
        state.assignments[{"orders", PartitionId(0)}].owner = NodeId("n2");
    });
    ASSERT_TRUE(destination_.committer.commit("orders", "inc-1", PartitionId(0), earlier).is_ok());
    ASSERT_TRUE(destination_.logs.close_partition("orders", PartitionId(0)).is_ok());
    store_.update([](meta::MetaState& state) {
        state.assignments[{"orders", PartitionId(0)}].owner = NodeId("n1");
    });
    target("n2");
    MoveProgress progress = run_move();
    EXPECT_EQ(progress.phase, MovePhase::done) << progress.error;
    EXPECT_EQ(destination_.read_all().size(), 8u);
    auto listed = list_quarantined(io::posix_file_system(), destination_.dir.path());
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed.front().kind, "partition");
    EXPECT_TRUE(holds_unexpired_records(io::posix_file_system(), clock_, listed.front().directory,
                                        Millis(0)));
}

// ---- The stale-copy sweep ------------------------------------------------------------------

TransferListing owner_listing(uint64_t hwm, std::optional<MoveMarker> marker,
                              std::vector<SegmentListing> segments) {
    TransferListing listing;
    listing.high_watermark = Offset(hwm);
    listing.marker = std::move(marker);
    listing.segments = std::move(segments);
    return listing;
}

MoveMarker marker_from(const char* source, uint64_t promoted, int64_t durable_at_ms = 1) {
    MoveMarker marker;
    marker.source = NodeId(source);
    marker.promoted_high_watermark = Offset(promoted);
    marker.durable_at_ms = durable_at_ms;
    return marker;
}

// Rule: each verdict of the sweep, one case per rule of docs/moves.md "The stale-copy sweep".
TEST(StaleCopyVerdict, EachRule) {
    const NodeId self("n1");
    const WallTime now = WallTime(std::chrono::hours(500'000));
    const Millis grace{300'000};
    LocalCopy local;
    local.unexpired_records = true;
    local.segments = {{Offset(0), 4096, true}, {Offset(40), 1000, false}};
    local.next_offset = Offset(50);
    std::vector<SegmentListing> same = {{Offset(0), 4096, 0, true, 0},
                                        {Offset(40), 3000, 0, false, 0}};
    auto verdict = [&](const LocalCopy& mine, const TransferListing& owner,
                       WallTime written = WallTime{}) {
        return judge_copy(self, mine, owner, now, written, grace).verdict;
    };
    EXPECT_EQ(verdict(local, owner_listing(80, marker_from("n1", 50), same)), CopyVerdict::reclaim);
    LocalCopy expired = local;
    expired.unexpired_records = false;
    EXPECT_EQ(verdict(expired, owner_listing(0, std::nullopt, {})), CopyVerdict::reclaim);
    EXPECT_EQ(verdict(local, owner_listing(0, marker_from("n1", 50), {})), CopyVerdict::quarantine)
        << "the owner lists no records (an empty volume under the same id)";
    EXPECT_EQ(verdict(local, owner_listing(80, std::nullopt, same)), CopyVerdict::quarantine)
        << "records but no marker";
    EXPECT_EQ(verdict(local, owner_listing(80, marker_from("n3", 50), same)),
              CopyVerdict::quarantine)
        << "the marker names another source";
    std::vector<SegmentListing> missing = {{Offset(40), 3000, 0, false, 0}};
    EXPECT_EQ(verdict(local, owner_listing(80, marker_from("n1", 50), missing)),
              CopyVerdict::quarantine)
        << "a segment below the vouched position is missing at the owner";
    std::vector<SegmentListing> shorter = {{Offset(0), 2000, 0, true, 0},
                                           {Offset(40), 3000, 0, false, 0}};
    EXPECT_EQ(verdict(local, owner_listing(80, marker_from("n1", 50), shorter)),
              CopyVerdict::quarantine)
        << "a sealed segment is shorter at the owner";
    EXPECT_EQ(verdict(local, owner_listing(80, marker_from("n1", 45), same)),
              CopyVerdict::quarantine)
        << "the local copy is ahead of the promoted high watermark";
    EXPECT_EQ(verdict(local, owner_listing(80, marker_from("n1", 50, 0), same), now - Millis(10)),
              CopyVerdict::defer)
        << "an unstamped marker younger than the grace";
    EXPECT_EQ(verdict(local, owner_listing(80, marker_from("n1", 50, 0), same), now - grace),
              CopyVerdict::reclaim);
    // The vouched position is the owner's HWM when lower than the promoted one: a local segment
    // at or past it is not checked.
    EXPECT_EQ(verdict(local, owner_listing(30, marker_from("n1", 50), same)), CopyVerdict::reclaim);
}

class SweepTest : public MoveTest {
  protected:
    enum class Owner { vouches, lost_its_marker, lost_its_data };
    // Moves orders/0 from n1 to n2, breaks the new owner as `owner` says, then runs the old
    // owner's (n1's) sweep.
    SweepReport sweep_after_move(Owner owner) {
        EXPECT_TRUE(source_.commit(0, 30).is_ok());
        target("n2");
        EXPECT_EQ(run_move().phase, MovePhase::done);
        source_.handoff.tick();  // the source closes the partition it moved away
        std::string moved = destination_.logs.partition_directory("orders", PartitionId(0));
        if (owner == Owner::lost_its_marker) {
            EXPECT_TRUE(
                io::posix_file_system().remove(io::join_path(moved, kMoveMarkerFile)).is_ok());
        } else if (owner == Owner::lost_its_data) {
            // Back on an empty volume under the same id.
            destination_.consume.drop_topic("orders");
            EXPECT_TRUE(destination_.logs.remove_topic("orders").is_ok());
        }
        DirectSource to_owner(destination_.handoff);
        MoveContext old_owner{clock_,         io::posix_file_system(), store_,
                              NodeId("n1"),   source_.dir.path(),      source_.logs,
                              source_.guards, source_.consume,         source_.handoff,
                              to_owner,       test_options(),          nullptr};
        StaleCopySweep sweep(old_owner);
        return sweep.run([](const meta::PartitionKey&) { return false; });
    }
    std::string old_copy() const {
        return source_.logs.partition_directory("orders", PartitionId(0));
    }
};

// Rule: after a normal move the old owner's copy is reclaimed: the new owner vouches for it.
TEST_F(SweepTest, ReclaimsACopyTheOwnerVouchesFor) {
    SweepReport report = sweep_after_move(Owner::vouches);
    EXPECT_EQ(report.reclaimed, 1u);
    EXPECT_EQ(report.quarantined, 0u);
    EXPECT_FALSE(io::posix_file_system().exists(old_copy()));
    EXPECT_TRUE(list_quarantined(io::posix_file_system(), source_.dir.path()).empty());
}

// Rule: an owner whose records carry no move marker cannot vouch for the old copy: quarantined.
TEST_F(SweepTest, QuarantinesWhenTheOwnerHasNoMarker) {
    SweepReport report = sweep_after_move(Owner::lost_its_marker);
    EXPECT_EQ(report.quarantined, 1u);
    EXPECT_FALSE(io::posix_file_system().exists(old_copy()));
    EXPECT_TRUE(holds_unexpired_records(io::posix_file_system(), clock_,
                                        old_copy() + kQuarantineSuffix, Millis(0)));
}

// Rule: an owner back on an empty data directory under the same id never gets vouched for.
TEST_F(SweepTest, QuarantinesWhenTheOwnerListsNoRecords) {
    SweepReport report = sweep_after_move(Owner::lost_its_data);
    EXPECT_EQ(report.quarantined, 1u);
    EXPECT_TRUE(io::posix_file_system().exists(old_copy() + kQuarantineSuffix));
    auto listed = list_quarantined(io::posix_file_system(), source_.dir.path());
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed.front().kind, "partition");
}

}  // namespace
}  // namespace narad::move
