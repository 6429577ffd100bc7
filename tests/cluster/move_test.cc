// Partition-move tests (docs/moves.md; spec "Rebalance and decommission"): real `narad serve`
// processes on 127.0.0.1, a node joining while producers and consumers run, and the planner moving
// the surplus partitions onto it. They check the planner's plan (the fewest moves, all to the new
// node), that no accepted message is lost across a move (the ledger), produce answering 202
// throughout, and the hard cases: a copy slower than the writes (a non-converged cutover), a
// freeze that lapses mid-drain, a re-plan between the copy and the flip, and a SIGKILL of either
// side during the copy. Failover tunables are short (lease TTL 2 s, dead after 3 s, controller
// tick 500 ms); every wait is on a condition with a deadline. When a test fails, it prints the
// move lines of the nodes' logs (NARAD_TEST_KEEP=1 keeps the whole data directories).
#include <filesystem>

#include "cluster/move_support.h"

namespace narad::testing {
namespace {

using Clock = std::chrono::steady_clock;

// ---- The tests ----------------------------------------------------------------------------------

// Rule: with 18 partitions on 3 nodes (6 each) and producers and consumers running through every
// node, a 4th node joining gets exactly the 4 surplus partitions, all moved to it (the only moves
// ever listed), ending at 5/5/4/4 owned with the new node at 4; every produce answers 202 and
// nothing accepted is lost; the new node counts 4 completed moves and 4 freezes.
TEST(PartitionMoveTest, FourthNodeJoinsUnderTrafficAndTakesTheSurplus) {
    Cluster cluster(move_cluster(4));
    const std::string topic = "orders";
    auto initial = start_with_topic(cluster, topic, 18);
    ASSERT_EQ(initial.size(), 18u) << "the topic's assignments never appeared";
    ASSERT_EQ(owner_counts(initial), (std::map<std::string, int>{{"n1", 6}, {"n2", 6}, {"n3", 6}}));

    Ledger ledger(400'000);
    Traffic traffic(cluster, topic, ledger);
    for (int index = 1; index <= 3; ++index) {
        traffic.produce_through(index, 150);
        traffic.consume_through(index);
    }
    ASSERT_TRUE(accepted_grows_by(ledger, 300)) << "traffic never started";
    MoveWatcher watcher(cluster, 1);
    auto joined_at = Clock::now();
    ASSERT_NO_FATAL_FAILURE(cluster.join(4));
    traffic.produce_through(4, 150);
    traffic.consume_through(4);

    // The moves appear, run and finish; the cluster ends balanced.
    ASSERT_TRUE(eventually([&] { return !watcher.seen().empty(); }, seconds(30)))
        << "no move was planned after n4 joined";
    bool balanced = eventually(
        [&] {
            auto moves = list_moves(cluster, 1);
            return moves && moves->empty() && owned_partitions(cluster, 1)["n4"] == 4;
        },
        seconds(90), milliseconds(100));
    auto moved_at = Clock::now();
    EXPECT_TRUE(balanced) << "moves did not finish: "
                          << moves_json(cluster, 1, true).value_or(json()).dump()
                          << move_logs(cluster);
    // Produce keeps working on the new owners.
    EXPECT_TRUE(accepted_grows_by(ledger, 300));
    bool drained = traffic.drain(seconds(120));
    watcher.stop();

    std::set<Move> seen = watcher.seen();
    std::string seen_text;
    for (const auto& move : seen) seen_text += " " + to_string(move);
    auto final_assignments = read_assignments(cluster, topic, 18);
    ASSERT_EQ(final_assignments.size(), 18u);
    std::set<Move> changed;
    for (const auto& [p, assignment] : final_assignments) {
        EXPECT_EQ(assignment.target, "") << "partition " << p << " still has a target";
        if (assignment.owner != initial[p].owner) {
            changed.insert(Move{topic, p, initial[p].owner, assignment.owner});
        }
    }
    std::string changed_text;
    for (const auto& move : changed) changed_text += " " + to_string(move);
    std::printf("n4 joined; moves took %.1f s; seen:%s\n",
                std::chrono::duration<double>(moved_at - joined_at).count(), seen_text.c_str());
    EXPECT_EQ(changed.size(), 4u) << "partitions that changed owner:" << changed_text;
    for (const auto& move : changed) EXPECT_EQ(move.to, "n4") << to_string(move);
    // The old owners' sweeps reclaim their copies: the new owner vouches for each of them.
    for (const auto& move : changed) {
        char name[16];
        std::snprintf(name, sizeof name, "p%05d", move.partition);
        std::string old_copy = cluster.node(cluster.index_of(move.from)).data_directory() +
                               "/topics/" + topic + "/" + name;
        EXPECT_TRUE(eventually([&] { return !std::filesystem::exists(old_copy); }, seconds(30)))
            << "the old copy " << old_copy << " was not reclaimed";
        EXPECT_FALSE(std::filesystem::exists(old_copy + ".quarantine")) << old_copy;
    }
    EXPECT_EQ(seen, changed) << "moves listed:" << seen_text << "; owners changed:" << changed_text;

    std::map<std::string, int> owned = owned_partitions(cluster, 4);
    std::vector<int> counts;
    for (const auto& [id, count] : owned) counts.push_back(count);
    std::sort(counts.begin(), counts.end());
    EXPECT_EQ(counts, (std::vector<int>{4, 4, 5, 5})) << json(owned).dump();
    EXPECT_EQ(owned["n4"], 4) << json(owned).dump();

    std::printf(
        "%s; n4: completed %.0f, freezes %.0f (%.3f s in all), non-converged %.0f; "
        "rerouted n1=%.0f n2=%.0f n3=%.0f n4=%.0f\n",
        ledger.summary().c_str(), metric(cluster, 4, kCompleted), metric(cluster, 4, kFreezeCount),
        metric(cluster, 4, kFreezeSum), metric(cluster, 4, kNonConverged),
        metric(cluster, 1, kRerouted), metric(cluster, 2, kRerouted), metric(cluster, 3, kRerouted),
        metric(cluster, 4, kRerouted));
    EXPECT_EQ(traffic.refused(), 0) << "produce did not answer 202:" << traffic.refusal_samples();
    EXPECT_TRUE(drained) << ledger.summary();
    EXPECT_TRUE(ledger.nothing_lost()) << ledger.summary();
    EXPECT_EQ(ledger.strays(), 0);
    EXPECT_EQ(metric(cluster, 4, kCompleted), 4);
    EXPECT_EQ(metric(cluster, 4, kFreezeCount), 4);
}

// Rule: a partition written faster than the (throttled) copy runs still moves: the pre-copy stops
// without converging (narad_moves_non_converged_total >= 1 on the destination), the stop-and-copy
// under the freeze finishes the move, and nothing accepted is lost.
TEST(PartitionMoveTest, HotPartitionMovesWithoutConverging) {
    constexpr int kCopyRate = 256 << 10;  // bytes per second
    constexpr int kPad = 8 << 10;         // bytes per message
    constexpr int kBatch = 6;             // messages per batch: 48 KiB
    constexpr int kBatchesPerSecond = 8;  // 384 KiB/s into the moving partition: 1.5x the copy
    ClusterOptions options = move_cluster(4);
    options.node_env[4] = {{"NARAD_MOVE_COPY_RATE", std::to_string(kCopyRate)},
                           {"NARAD_MOVE_LAG_BYTES", "4096"}};
    Cluster cluster(options);
    const std::string topic = "hot";
    auto initial = start_with_topic(cluster, topic, 4);
    ASSERT_EQ(initial.size(), 4u);
    Ledger ledger(200'000);
    // 128 KiB per partition: the first pass takes about half a second, long enough for the hot
    // producer below to be writing before it ends.
    int next_id = prefill(cluster, 1, topic, 4, 16, kPad, ledger, 0);
    ASSERT_NO_FATAL_FAILURE(cluster.join(4));
    auto move = wait_single_move(cluster, 1, seconds(30));
    ASSERT_TRUE(move) << "no single move was planned: "
                      << moves_json(cluster, 1).value_or(json()).dump();
    EXPECT_EQ(move->to, "n4");

    std::atomic<bool> stop{false};
    std::atomic<int> refused{0};
    std::atomic<int> ids{next_id};
    std::string first_refusal;
    std::thread hot([&] {
        std::vector<net::HttpClient> clients;
        for (int index = 1; index <= 3; ++index) clients.push_back(cluster.node(index).client());
        auto next = Clock::now();
        for (int round = 0; !stop; ++round) {
            next += milliseconds(1000 / kBatchesPerSecond);
            std::this_thread::sleep_until(next);  // the write rate, not a synchronisation
            int first = ids.fetch_add(kBatch);
            if (first + kBatch > ledger.capacity()) break;
            auto& client = clients[round % clients.size()];
            auto response = produce_batch(client, topic, move->partition, first, kBatch, kPad);
            if (response.is_ok() && response->status == 202) {
                for (int i = 0; i < kBatch; ++i) ledger.accept(first + i);
            } else if (refused++ == 0) {
                first_refusal = describe(response);
            }
        }
    });
    // Keep writing until the destination gives up pre-copying (or the move ends anyway).
    bool gave_up = eventually([&] { return metric(cluster, 4, kNonConverged) >= 1; }, seconds(90),
                              milliseconds(100));
    stop = true;
    hot.join();
    ASSERT_TRUE(gave_up) << "the pre-copy never stopped without converging: "
                         << moves_json(cluster, 4, true).value_or(json()).dump()
                         << move_logs(cluster);
    bool done = eventually(
        [&] {
            auto now = read_assignment(cluster, topic, move->partition);
            return now && now->owner == "n4" && now->target.empty();
        },
        seconds(90), milliseconds(100));
    EXPECT_TRUE(done) << "the move did not complete: "
                      << moves_json(cluster, 4, true).value_or(json()).dump() << move_logs(cluster);

    Traffic traffic(cluster, topic, ledger);
    for (int index = 1; index <= 4; ++index) traffic.consume_through(index);
    bool drained = traffic.drain(seconds(120));
    std::printf("%s; moved %s: n4 completed %.0f, non-converged %.0f, freeze %.3f s\n",
                ledger.summary().c_str(), to_string(*move).c_str(), metric(cluster, 4, kCompleted),
                metric(cluster, 4, kNonConverged), metric(cluster, 4, kFreezeSum));
    EXPECT_EQ(refused.load(), 0) << "first refusal: " << first_refusal;
    EXPECT_TRUE(drained) << ledger.summary();
    EXPECT_TRUE(ledger.nothing_lost()) << ledger.summary();
    EXPECT_EQ(metric(cluster, 4, kCompleted), 1);
}

// Rule: a drain pass under the freeze that takes longer than the freeze TTL does not let the
// freeze lapse: the destination re-arms it on its own timer, the source never lifts it, and the
// move completes with nothing lost.
TEST(PartitionMoveTest, LongDrainPassIsCoveredByReArming) {
    ClusterOptions options = move_cluster(4, {{"NARAD_MOVE_FREEZE_TTL", "3s"}});
    options.node_env[4] = {{"NARAD_FAILPOINTS", "move.finalize_pass=sleep(5000)@2"}};
    Cluster cluster(options);
    const std::string topic = "rearm";
    Ledger ledger(200'000);
    Traffic traffic(cluster, topic, ledger);
    OneMove one = start_one_move(cluster, topic);
    ASSERT_FALSE(HasFailure());
    traffic.through_first_three();
    ASSERT_TRUE(wait_owned_by_n4(cluster, one.move, seconds(90)))
        << "the move did not complete: " << move_logs(cluster);
    EXPECT_TRUE(accepted_grows_by(ledger, 200));
    bool drained = traffic.drain(seconds(120));
    std::printf("%s; moved %s, freeze %.3f s\n", ledger.summary().c_str(),
                to_string(one.move).c_str(), metric(cluster, 4, kFreezeSum));
    EXPECT_FALSE(log_contains(cluster.node(one.source), "lapsed without a flip"))
        << "the source lifted a freeze the destination kept re-arming:" << move_logs(cluster);
    EXPECT_GE(metric(cluster, 4, kFreezeSum), 5.0) << "the 5 s drain pass was not under the freeze";
    EXPECT_EQ(traffic.refused(), 0) << traffic.refusal_samples();
    EXPECT_TRUE(drained) << ledger.summary();
    EXPECT_TRUE(ledger.nothing_lost()) << ledger.summary();
}

// Rule: when the freeze lapses mid-drain (the destination is stopped past the freeze TTL, so it
// cannot re-arm), the source takes commits again; the destination then notices the lapse, freezes
// again and drains again before it flips, so the records the source committed during the lapse
// reach the new owner and are consumed: nothing lost.
TEST(PartitionMoveTest, FreezeLapsedMidDrainFreezesAgain) {
    ClusterOptions options = move_cluster(4, {{"NARAD_MOVE_FREEZE_TTL", "3s"}});
    // The second drain pass waits 4 s: a window in which the move is surely mid-drain.
    options.node_env[4] = {{"NARAD_FAILPOINTS", "move.finalize_pass=sleep(4000)@2"}};
    Cluster cluster(options);
    const std::string topic = "lapse";
    Ledger ledger(200'000);
    Traffic traffic(cluster, topic, ledger, /*first_id=*/1'000);
    OneMove one = start_one_move(cluster, topic);
    ASSERT_FALSE(HasFailure());
    traffic.through_first_three();
    bool draining = reaches_phase(cluster, one.move, "finalizing");
    ASSERT_TRUE(draining) << "the move never reached the drain: " << move_logs(cluster);
    cluster.pause(4);
    bool lapsed =
        eventually([&] { return log_contains(cluster.node(one.source), "lapsed without a flip"); },
                   seconds(20), milliseconds(50));
    if (!lapsed) cluster.resume(4);
    ASSERT_TRUE(lapsed) << "the source never lifted the freeze of the stopped destination:"
                        << move_logs(cluster);
    // Records committed on the source while its freeze is lifted (ids 0..kLapse-1).
    constexpr int kLapse = 50;
    int64_t before = high_watermark(cluster, one.source, topic, one.move.partition);
    ASSERT_GE(before, 0);
    {
        auto client = cluster.node(one.source == 1 ? 2 : 1).client();
        for (int id = 0; id < kLapse; ++id) {
            auto response = client.post(
                "/v1/topics/" + topic + "/produce?partition=" + std::to_string(one.move.partition),
                payload(id, 0));
            EXPECT_TRUE(response.is_ok() && response->status == 202) << describe(response);
            if (response.is_ok() && response->status == 202) ledger.accept(id);
        }
    }
    bool committed = eventually(
        [&] {
            return high_watermark(cluster, one.source, topic, one.move.partition) >=
                   before + kLapse;
        },
        seconds(20), milliseconds(50));
    cluster.resume(4);
    EXPECT_TRUE(committed) << "the records produced during the lapse never reached the source";
    ASSERT_TRUE(wait_owned_by_n4(cluster, one.move, seconds(90)))
        << "the move did not complete after the lapse: " << move_logs(cluster);
    // The destination noticed the lapse (its re-arm or its fence was refused) and froze again.
    EXPECT_GE(log_lines(cluster.node(one.source), "for handoff at high watermark").size(), 2u)
        << "the source was never frozen again:" << move_logs(cluster);
    EXPECT_TRUE(log_contains(cluster.node(4), "lapsed") ||
                log_contains(cluster.node(4), "no longer active"))
        << "the destination never noticed the lapse:" << move_logs(cluster);
    EXPECT_TRUE(accepted_grows_by(ledger, 200));
    bool drained = traffic.drain(seconds(120));
    std::vector<int> lost = ledger.lost();
    int lost_from_lapse = static_cast<int>(
        std::count_if(lost.begin(), lost.end(), [](int id) { return id < kLapse; }));
    std::printf("%s; moved %s, freezes %.0f\n", ledger.summary().c_str(),
                to_string(one.move).c_str(), metric(cluster, 4, kFreezeCount));
    EXPECT_GE(metric(cluster, 4, kFreezeCount), 2) << "the destination never froze again";
    EXPECT_EQ(lost_from_lapse, 0) << "records committed during the lapse were stranded";
    EXPECT_EQ(traffic.refused(), 0) << traffic.refusal_samples();
    EXPECT_TRUE(drained) << ledger.summary();
    EXPECT_TRUE(ledger.nothing_lost()) << ledger.summary() << move_logs(cluster);
}

// Rule: a move re-planned between the copy and the flip (the assignment's target rewritten to
// another node while the destination waits to flip) is never flipped by the old destination: its
// compare-and-swap is refused, the partition's owner is only ever the source or the new target,
// and nothing accepted is lost.
TEST(PartitionMoveTest, RePlanBeforeFlipRefusesTheFlip) {
    ClusterOptions options = move_cluster(4);
    options.node_env[4] = {{"NARAD_FAILPOINTS", "move.before_flip=sleep(6000)@1"}};
    Cluster cluster(options);
    const std::string topic = "replan";
    Ledger ledger(200'000);
    Traffic traffic(cluster, topic, ledger);
    OneMove one = start_one_move(cluster, topic);
    ASSERT_FALSE(HasFailure());
    traffic.through_first_three();
    bool flipping = reaches_phase(cluster, one.move, "flipping");
    ASSERT_TRUE(flipping) << "the move never reached the flip: " << move_logs(cluster);
    // Re-plan: the partition now goes to another node (a receiver, so the planner keeps it).
    const std::string other = one.source == 1 ? "n2" : "n1";
    const std::string key = assignment_key(topic, one.move.partition);
    ASSERT_TRUE(cluster.etcd_put(key, json{{"owner", one.move.from}, {"target", other}}.dump()));
    std::set<std::string> owners;
    bool refused = eventually(
        [&] {
            if (auto now = read_assignment(cluster, topic, one.move.partition)) {
                owners.insert(now->owner);
            }
            return metric(cluster, 4, kEnded) >= 1;
        },
        seconds(30), milliseconds(50));
    EXPECT_TRUE(refused) << "n4's worker did not end after the re-plan:" << move_logs(cluster);
    EXPECT_TRUE(log_contains(cluster.node(4), "flip was refused")) << move_logs(cluster);
    EXPECT_FALSE(owners.contains("n4"))
        << "the old destination flipped a re-planned move" << move_logs(cluster);
    for (const auto& owner : owners) {
        EXPECT_TRUE(owner == one.move.from || owner == other) << "owner " << owner;
    }
    // The new target completes the re-planned move, and the planner balances the rest (it may
    // then move the partition on to n4 in a fresh move: that one copies from the new owner).
    const int other_index = cluster.index_of(other);
    bool settled = eventually(
        [&] {
            auto moves = list_moves(cluster, 1);
            auto assignments = read_assignments(cluster, topic, 4);
            return moves && moves->empty() && !assignments.empty() &&
                   owner_counts(assignments) ==
                       std::map<std::string, int>{{"n1", 1}, {"n2", 1}, {"n3", 1}, {"n4", 1}};
        },
        seconds(90), milliseconds(100));
    EXPECT_TRUE(settled) << "after the re-plan: " << moves_json(cluster, 1).value_or(json()).dump()
                         << move_logs(cluster);
    EXPECT_GE(metric(cluster, other_index, kCompleted), 1)
        << other << " never completed the re-planned move" << move_logs(cluster);
    EXPECT_TRUE(accepted_grows_by(ledger, 200));
    bool drained = traffic.drain(seconds(120));
    std::printf("%s; %s re-planned to %s; owners seen:", ledger.summary().c_str(),
                to_string(one.move).c_str(), other.c_str());
    for (const auto& owner : owners) std::printf(" %s", owner.c_str());
    std::printf("\n");
    EXPECT_EQ(traffic.refused(), 0) << traffic.refusal_samples();
    EXPECT_TRUE(drained) << ledger.summary();
    EXPECT_TRUE(ledger.nothing_lost()) << ledger.summary();
}

// The kill tests: the moving partition holds 6 MiB and node 4 copies at 1 MiB/s in chunks of at
// most 4 MiB, so the catch-up takes about 6 s and a kill after the first chunk leaves a partial
// copy behind.
// Rule: SIGKILL of the destination in the middle of the catch-up copy, then its restart: the
// restarted destination takes the move up again and completes it, and nothing accepted is lost.
TEST(PartitionMoveTest, DestinationKilledDuringCatchUpCompletesAfterRestart) {
    Cluster cluster(slow_copy_cluster());
    const std::string topic = "killdst";
    Ledger ledger(200'000);
    auto initial = start_with_topic(cluster, topic, 4);
    ASSERT_EQ(initial.size(), 4u);
    int first_free = prefill(cluster, 1, topic, 4, kKillPrefill, 8 << 10, ledger, 0);
    Traffic traffic(cluster, topic, ledger, first_free);
    traffic.through_first_three();
    ASSERT_NO_FATAL_FAILURE(cluster.join(4));
    auto move = wait_single_move(cluster, 1, seconds(30));
    ASSERT_TRUE(move) << moves_json(cluster, 1).value_or(json()).dump();
    ASSERT_TRUE(wait_copying(cluster, *move)) << move_logs(cluster);
    uint64_t listed =
        move_detail(cluster, 4, *move).value_or(json())["bytes_total"].get<uint64_t>();
    cluster.kill(4);
    EXPECT_TRUE(accepted_grows_by(ledger, 200));
    ASSERT_NO_FATAL_FAILURE(cluster.restart(4));
    EXPECT_TRUE(wait_owned_by_n4(cluster, *move, seconds(90)))
        << "the move did not complete after the destination's restart: " << move_logs(cluster);
    EXPECT_TRUE(wait_no_moves(cluster, 1, seconds(30)));
    EXPECT_TRUE(accepted_grows_by(ledger, 200));
    bool drained = traffic.drain(seconds(120));
    // The restarted destination resumed its staged copy: it fetched less than the partition.
    double fetched_after_restart = metric(cluster, 4, "narad_moves_bytes_total");
    std::printf("%s; moved %s; %.0f bytes fetched after the restart, %llu listed before\n",
                ledger.summary().c_str(), to_string(*move).c_str(), fetched_after_restart,
                static_cast<unsigned long long>(listed));
    EXPECT_LT(fetched_after_restart, static_cast<double>(listed));
    EXPECT_EQ(metric(cluster, 4, kCompleted), 1);
    EXPECT_EQ(traffic.refused(), 0) << traffic.refusal_samples();
    EXPECT_TRUE(drained) << ledger.summary();
    EXPECT_TRUE(ledger.nothing_lost()) << ledger.summary() << move_logs(cluster);
}

// Rule: SIGKILL of the source in the middle of the catch-up copy, then its restart: the
// destination keeps retrying, completes the move once the source is back, and nothing accepted
// (through the other nodes while the source was down included) is lost.
TEST(PartitionMoveTest, SourceKilledDuringCatchUpCompletesAfterRestart) {
    Cluster cluster(slow_copy_cluster());
    const std::string topic = "killsrc";
    Ledger ledger(200'000);
    auto initial = start_with_topic(cluster, topic, 4);
    ASSERT_EQ(initial.size(), 4u);
    int first_free = prefill(cluster, 1, topic, 4, kKillPrefill, 8 << 10, ledger, 0);
    ASSERT_NO_FATAL_FAILURE(cluster.join(4));
    auto move = wait_single_move(cluster, 1, seconds(30));
    ASSERT_TRUE(move) << moves_json(cluster, 1).value_or(json()).dump();
    const int source = cluster.index_of(move->from);
    ASSERT_NE(source, 0);
    // Traffic through the nodes that stay up.
    Traffic traffic(cluster, topic, ledger, first_free);
    std::vector<int> others;
    for (int index = 1; index <= 3; ++index) {
        if (index == source) continue;
        others.push_back(index);
        traffic.produce_through(index, 100);
        traffic.consume_through(index);
    }
    ASSERT_TRUE(wait_copying(cluster, *move)) << move_logs(cluster);
    cluster.kill(source);
    EXPECT_TRUE(cluster.wait_member_status(others[0], move->from, "dead"));
    EXPECT_TRUE(accepted_grows_by(ledger, 200));
    ASSERT_NO_FATAL_FAILURE(cluster.restart(source));
    traffic.consume_through(source);
    EXPECT_TRUE(wait_owned_by_n4(cluster, *move, seconds(90)))
        << "the move did not complete after the source's restart: " << move_logs(cluster);
    EXPECT_TRUE(wait_no_moves(cluster, others[0], seconds(30)));
    EXPECT_TRUE(accepted_grows_by(ledger, 200));
    bool drained = traffic.drain(seconds(120));
    std::printf("%s; moved %s\n", ledger.summary().c_str(), to_string(*move).c_str());
    EXPECT_EQ(metric(cluster, 4, kCompleted), 1);
    EXPECT_EQ(traffic.refused(), 0) << traffic.refusal_samples();
    EXPECT_TRUE(drained) << ledger.summary();
    EXPECT_TRUE(ledger.nothing_lost()) << ledger.summary() << move_logs(cluster);
}

}  // namespace
}  // namespace narad::testing
