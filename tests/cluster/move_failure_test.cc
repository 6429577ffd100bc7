// The failure half of the move protocol (docs/moves.md; spec "Source failure mid-move", "Target
// failure mid-move", "Abort a move", the stale-copy sweep), on real `narad serve` processes:
// a source killed for good after the copy caught up (force-promoted) and before (waits), a zombie
// source stopped past force-promote (it fences itself), a destination dead for good (its target
// cleared, rebalancing resumes), an abort at every phase and racing the flip, a lost flip whose
// source then dies, and the sweep quarantining a copy the new owner cannot vouch for. Every run
// checks that nothing accepted is lost (beyond the partitions only a dead disk holds), that no
// offset was ever delivered with two different messages, and who owns the partition. The move
// timeouts are shortened (force-promote and dead-target after 8 s, sweep every 3 ticks, freeze
// TTL 6 s); every wait is on a condition with a deadline.
#include <filesystem>

#include "cluster/move_support.h"

namespace narad::testing {
namespace {

constexpr const char* kForcePromoted = "narad_moves_total{outcome=\"force_promoted\"}";
constexpr const char* kBlockedBehind = "narad_moves_blocked{reason=\"source_dead_copy_behind\"}";
constexpr const char* kQuarantined = "narad_quarantined_copies";

std::string partition_directory(const NodeProcess& node, const Move& move) {
    char name[16];
    std::snprintf(name, sizeof name, "p%05d", move.partition);
    return node.data_directory() + "/topics/" + move.topic + "/" + name;
}

bool path_exists(const std::string& path) { return std::filesystem::exists(path); }

// ---- The tests ---------------------------------------------------------------------------------

// Rule: a source killed for good once the copy has caught up is force-promoted over after it has
// been dead for the timeout: the new owner serves every record the source had made visible, and
// the move counts as force_promoted; produce never fails through the live nodes.
TEST(MoveFailureTest, SourceDeadForGoodAfterTheCopyCaughtUpIsForcePromoted) {
    ClusterOptions options = failure_cluster(4);
    options.node_env[4] = {{"NARAD_FAILPOINTS", "move.after_catch_up_pass=sleep(6000)@1"}};
    Cluster cluster(options);
    const std::string topic = "promote";
    constexpr int kPer = 200;
    Ledger ledger(100'000);
    OffsetBook offsets;
    OneMove setup = prefilled_move(cluster, topic, kPer, 256, ledger);
    ASSERT_NE(setup.source, 0) << "no move was planned";
    const Move* move = &setup.move;
    ASSERT_TRUE(first_pass_done(cluster, *move)) << move_logs(cluster);
    cluster.kill(setup.source);

    Traffic traffic(cluster, topic, ledger, 10'000);
    traffic.record_offsets(&offsets);
    for (int index : others_than(setup.source)) {
        traffic.produce_through(index, 50);
        traffic.consume_through(index);
    }
    EXPECT_TRUE(wait_owned_by_n4(cluster, *move, seconds(90)))
        << "not force-promoted: " << moves_json(cluster, 1, true).value_or(json()).dump()
        << move_logs(cluster);
    EXPECT_EQ(metric(cluster, 4, kForcePromoted), 1);
    std::set<int> dead = held_only_by(setup, move->from);
    traffic.stop_producers();
    eventually([&] { return lost_beyond(ledger, dead, kPer).empty(); }, seconds(90),
               milliseconds(200));
    traffic.stop_consumers();
    std::vector<int> lost = lost_beyond(ledger, dead, kPer);
    std::printf("%s; force-promoted %s\n", ledger.summary().c_str(), to_string(*move).c_str());
    EXPECT_TRUE(lost.empty()) << lost.size() << " lost:" << ids(lost) << move_logs(cluster);
    EXPECT_EQ(offsets.conflicts(), 0) << offsets.samples();
    EXPECT_EQ(traffic.refused(), 0) << traffic.refusal_samples();
}

// Rule: a source killed before the copy caught up is never promoted over, however long it is
// dead: the destination reports source_dead_copy_behind (logged once) and waits; once the source
// returns, the move completes normally and nothing is lost.
TEST(MoveFailureTest, SourceDeadBeforeTheCopyCaughtUpWaitsThenCompletes) {
    ClusterOptions options = failure_cluster(4);
    // 12.5 MiB per partition at 1 MiB/s: the copy fetches 4 MiB chunks one ahead, so a kill
    // seen after the first chunk leaves at least the third unfetched.
    options.node_env[4] = {{"NARAD_MOVE_COPY_RATE", std::to_string(1 << 20)}};
    Cluster cluster(options);
    const std::string topic = "behind";
    Ledger ledger(100'000);
    OffsetBook offsets;
    OneMove setup = prefilled_move(cluster, topic, 1600, 8 << 10, ledger);
    ASSERT_NE(setup.source, 0) << "no move was planned";
    const Move* move = &setup.move;
    int next = 4 * (1600);
    const int source = setup.source;
    ASSERT_TRUE(wait_copying(cluster, *move)) << move_logs(cluster);
    cluster.kill(source);
    Traffic traffic(cluster, topic, ledger, next);
    traffic.record_offsets(&offsets);
    for (int index : others_than(source)) {
        traffic.produce_through(index, 50);
        traffic.consume_through(index);
    }
    EXPECT_TRUE(eventually([&] { return metric(cluster, 4, kBlockedBehind) == 1; }, seconds(60)))
        << move_logs(cluster);
    // Past both clocks: the controller's verdict is in, and the destination's own 8 s too.
    EXPECT_TRUE(eventually([&] { return etcd_has(cluster, "/narad/narad/dead/" + move->from); },
                           seconds(60)));
    EXPECT_TRUE(stays_unchanged(
        [&] {
            auto now = read_assignment(cluster, topic, move->partition);
            return !now || now->owner != move->from;
        },
        seconds(12)))
        << "a copy behind its source was promoted";
    EXPECT_EQ(metric(cluster, 4, kForcePromoted), 0);
    EXPECT_EQ(log_lines(cluster.node(4), "copy is behind its last high watermark").size(), 1u);
    ASSERT_NO_FATAL_FAILURE(cluster.restart(source));
    traffic.consume_through(source);
    EXPECT_TRUE(wait_owned_by_n4(cluster, *move, seconds(120))) << move_logs(cluster);
    EXPECT_EQ(metric(cluster, 4, kCompleted), 1);
    EXPECT_TRUE(eventually([&] { return metric(cluster, 4, kBlockedBehind) == 0; }, seconds(10)));
    bool drained = traffic.drain(seconds(120));
    std::printf("%s; moved %s after the source returned\n", ledger.summary().c_str(),
                to_string(*move).c_str());
    EXPECT_TRUE(drained) << ledger.summary() << move_logs(cluster);
    EXPECT_EQ(offsets.conflicts(), 0) << offsets.samples();
    EXPECT_EQ(traffic.refused(), 0) << traffic.refusal_samples();
}

// Rule: a source stopped (SIGSTOP) past force-promote and then resumed is a zombie that fences
// itself: it commits nothing to the partition once its lease lapsed, its old copy is judged by
// the sweep, and nothing it acknowledged is lost or served twice at one offset.
TEST(MoveFailureTest, ZombieSourceFencesItselfAndLosesNothing) {
    ClusterOptions options = failure_cluster(4);
    options.node_env[4] = {{"NARAD_FAILPOINTS", "move.after_catch_up_pass=sleep(6000)@1"}};
    Cluster cluster(options);
    const std::string topic = "zombie";
    Ledger ledger(100'000);
    OffsetBook offsets;
    OneMove setup = prefilled_move(cluster, topic, 200, 256, ledger);
    ASSERT_NE(setup.source, 0) << "no move was planned";
    const Move* move = &setup.move;
    int next = 4 * (200);
    const int source = setup.source;
    ASSERT_TRUE(first_pass_done(cluster, *move)) << move_logs(cluster);
    std::string produced = "narad_messages_produced_total{topic=\"" + topic + "\",partition=\"" +
                           std::to_string(move->partition) + "\"}";
    double before = metric(cluster, source, produced.c_str());
    cluster.pause(source);
    Traffic traffic(cluster, topic, ledger, next);
    traffic.record_offsets(&offsets);
    for (int index : others_than(source)) {
        traffic.produce_through(index, 50);
        traffic.consume_through(index);
    }
    EXPECT_TRUE(wait_owned_by_n4(cluster, *move, seconds(90))) << move_logs(cluster);
    EXPECT_EQ(metric(cluster, 4, kForcePromoted), 1);
    cluster.resume(source);
    traffic.consume_through(source);
    // The zombie comes back, re-attaches its lease, and its sweep judges its old copy.
    EXPECT_TRUE(
        eventually([&] { return !path_exists(partition_directory(cluster.node(source), *move)); },
                   seconds(60)))
        << "the zombie's old copy was neither reclaimed nor set aside" << move_logs(cluster);
    EXPECT_EQ(metric(cluster, source, produced.c_str()), before)
        << "the zombie committed to a partition it no longer owned";
    bool drained = traffic.drain(seconds(120));
    std::printf("%s; force-promoted %s over a stopped source\n", ledger.summary().c_str(),
                to_string(*move).c_str());
    EXPECT_TRUE(drained) << ledger.summary() << move_logs(cluster);
    EXPECT_EQ(offsets.conflicts(), 0) << offsets.samples();
    EXPECT_EQ(traffic.refused(), 0) << traffic.refusal_samples();
}

// Rule: a destination killed for good has its move's target cleared by the controller after the
// dead-target bound (reported as target_dead meanwhile); the freed budget lets rebalancing go on
// to another node, and nothing is lost.
TEST(MoveFailureTest, DestinationDeadForGoodIsClearedAndRebalancingResumes) {
    ClusterOptions options = failure_cluster(5);
    options.env["NARAD_MOVE_MAX_IN_FLIGHT"] = "1";
    options.node_env[4] = {{"NARAD_MOVE_COPY_RATE", std::to_string(1 << 20)}};
    Cluster cluster(options);
    const std::string topic = "deadtarget";
    Ledger ledger(200'000);
    auto initial = start_with_topic(cluster, topic, 8);
    ASSERT_EQ(initial.size(), 8u);
    int next = prefill_committed(cluster, topic, 8, kKillPrefill, 8 << 10, ledger);
    Traffic traffic(cluster, topic, ledger, next);
    traffic.through_first_three();
    ASSERT_NO_FATAL_FAILURE(cluster.join(4));
    auto move = wait_single_move(cluster, 1, seconds(30));
    ASSERT_TRUE(move);
    ASSERT_EQ(move->to, "n4");
    ASSERT_TRUE(wait_copying(cluster, *move)) << move_logs(cluster);
    cluster.kill(4);
    EXPECT_TRUE(eventually(
        [&] {
            auto moves = moves_json(cluster, 1);
            return moves && !moves->empty() && (*moves)[0].value("blocked", "") == "target_dead" &&
                   (*moves)[0].value("to_status", "") == "dead";
        },
        seconds(30)))
        << moves_json(cluster, 1).value_or(json()).dump();
    EXPECT_TRUE(eventually(
        [&] {
            auto moves = list_moves(cluster, 1);
            return moves && std::none_of(moves->begin(), moves->end(),
                                         [](const Move& m) { return m.to == "n4"; });
        },
        seconds(60)))
        << "the dead destination's move was never cleared";
    auto kept = read_assignment(cluster, topic, move->partition);
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->owner, move->from) << "the partition left its owner";
    ASSERT_NO_FATAL_FAILURE(cluster.join(5));
    EXPECT_TRUE(eventually(
        [&] {
            auto moves = list_moves(cluster, 1);
            return moves && moves->empty() && owned_partitions(cluster, 1)["n5"] == 2;
        },
        seconds(120)))
        << "rebalancing did not resume onto n5: " << move_logs(cluster);
    bool drained = traffic.drain(seconds(120));
    std::printf("%s; n4's move %s cleared, n5 took 2 partitions\n", ledger.summary().c_str(),
                to_string(*move).c_str());
    EXPECT_TRUE(drained) << ledger.summary();
    EXPECT_EQ(traffic.refused(), 0) << traffic.refusal_samples();
}

// POST /v1/cluster/moves/{topic}/{partition}/abort through node `through`.
Result<net::HttpResponse> abort_move(Cluster& cluster, int through, const Move& move,
                                     const std::string& target = "") {
    auto client = cluster.node(through).client(seconds(30));
    std::string path = "/v1/cluster/moves/" + move.topic + "/" + std::to_string(move.partition) +
                       "/abort" + (target.empty() ? "" : "?target=" + target);
    return client.request("POST", path, "", "application/json");
}

std::string error_of(const Result<net::HttpResponse>& response) {
    if (!response.is_ok()) return "";
    json body = json::parse(response->body, nullptr, false);
    return body.is_object() ? body.value("error", "") : "";
}

// Rule: an abort while copying, while the source is frozen, and after the install before the
// flip each answers 202 {move, note} with the owner unchanged; a wrong ?target= and a move not in
// flight are 409, an unknown partition 404; every abort that took effect is audited; the owner
// serves throughout and nothing is lost.
TEST(MoveFailureTest, AbortAtEveryPhaseKeepsTheOwnerServing) {
    ClusterOptions options = failure_cluster(4);
    options.node_env[4] = {
        {"NARAD_MOVE_COPY_RATE", std::to_string(256 << 10)},
        {"NARAD_FAILPOINTS", "move.finalize_pass=sleep(1500);move.before_flip=sleep(3000)"}};
    Cluster cluster(options);
    const std::string topic = "abort";
    Ledger ledger(200'000);
    OffsetBook offsets;
    auto initial = start_with_topic(cluster, topic, 4);
    ASSERT_EQ(initial.size(), 4u);
    int next = prefill_committed(cluster, topic, 4, 64, 8 << 10, ledger);
    Traffic traffic(cluster, topic, ledger, next);
    traffic.record_offsets(&offsets);
    traffic.through_first_three();
    ASSERT_NO_FATAL_FAILURE(cluster.join(4));
    auto move = wait_single_move(cluster, 1, seconds(30));
    ASSERT_TRUE(move);
    auto wrong = abort_move(cluster, 2, *move, "n3");
    EXPECT_EQ(wrong->status, 409) << wrong->body;
    EXPECT_NE(error_of(wrong).find("now targets n4, not n3"), std::string::npos) << wrong->body;
    for (const char* phase : {"catch_up", "finalizing", "flipping"}) {
        SCOPED_TRACE(phase);
        ASSERT_TRUE(reaches_phase(cluster, *move, phase)) << move_logs(cluster);
        auto answer = abort_move(cluster, 2, *move, "n4");
        ASSERT_TRUE(answer.is_ok());
        EXPECT_EQ(answer->status, 202) << answer->body;
        json body = json::parse(answer->body, nullptr, false);
        EXPECT_EQ(body["move"].value("to", ""), "n4") << answer->body;
        EXPECT_FALSE(body.value("note", "").empty()) << answer->body;
        auto now = read_assignment(cluster, topic, move->partition);
        ASSERT_TRUE(now);
        EXPECT_EQ(now->owner, move->from) << "the owner changed on an abort";
        if (std::string(phase) == "flipping") break;
        // The controller plans the move again; wait for it before the next phase.
        ASSERT_TRUE(eventually(
            [&] {
                auto again = read_assignment(cluster, topic, move->partition);
                return again && again->target == "n4";
            },
            seconds(30)));
    }
    // Planned once more, the move completes.
    EXPECT_TRUE(wait_owned_by_n4(cluster, *move, seconds(120))) << move_logs(cluster);
    auto done = abort_move(cluster, 2, *move);
    EXPECT_EQ(done->status, 409) << done->body;
    EXPECT_NE(error_of(done).find("no move is in flight"), std::string::npos) << done->body;
    EXPECT_EQ(abort_move(cluster, 2, Move{topic, 99, "", ""})->status, 404);
    int audited = 0;
    for (int index = 1; index <= 3; ++index) {
        std::ifstream audit(cluster.node(index).data_directory() + "/audit.log");
        std::string line;
        while (std::getline(audit, line)) {
            if (line.find("cluster.move.abort") != std::string::npos &&
                line.find("\"outcome\":\"ok\"") != std::string::npos) {
                ++audited;
            }
        }
    }
    EXPECT_EQ(audited, 3);
    bool drained = traffic.drain(seconds(120));
    std::printf("%s; 3 aborts of %s, then it moved\n", ledger.summary().c_str(),
                to_string(*move).c_str());
    EXPECT_TRUE(drained) << ledger.summary() << move_logs(cluster);
    EXPECT_EQ(offsets.conflicts(), 0) << offsets.samples();
    EXPECT_EQ(traffic.refused(), 0) << traffic.refusal_samples();
}

// Rule: an abort racing a flip reports what happened: when the flip commits between the abort's
// read and its compare-and-set, the answer is 409 saying the move finished first, and the new
// owner keeps the partition.
TEST(MoveFailureTest, AbortRacingAFlipReportsWhatHappened) {
    ClusterOptions options = failure_cluster(4);
    options.env["NARAD_FAILPOINTS"] = "move.abort.before_clear=sleep(6000)@1";
    options.node_env[4] = {{"NARAD_FAILPOINTS", "move.before_flip=sleep(3000)@1"}};
    Cluster cluster(options);
    const std::string topic = "race";
    Ledger ledger(10'000);
    OneMove setup = prefilled_move(cluster, topic, 50, 256, ledger);
    ASSERT_NE(setup.source, 0) << "no move was planned";
    const Move* move = &setup.move;
    ASSERT_TRUE(reaches_phase(cluster, *move, "flipping")) << move_logs(cluster);
    auto raced = abort_move(cluster, 2, *move);
    ASSERT_TRUE(raced.is_ok());
    EXPECT_EQ(raced->status, 409) << raced->body;
    EXPECT_NE(error_of(raced).find("finished before the abort reached the leader: n4 owns it now"),
              std::string::npos)
        << raced->body;
    EXPECT_TRUE(wait_owned_by_n4(cluster, *move, seconds(30)));
}

// Rule: a flip whose proposal was lost, and whose source then dies, keeps its install and is
// completed as a force-promote once the source has been dead long enough.
TEST(MoveFailureTest, FlipLostThenSourceDiesCompletesAsForcePromote) {
    ClusterOptions options = failure_cluster(4);
    options.node_env[4] = {{"NARAD_FAILPOINTS",
                            "move.before_flip=sleep(4000)@1;move.flip_lost_before_commit=error@1"}};
    Cluster cluster(options);
    const std::string topic = "lostflip";
    constexpr int kPer = 100;
    Ledger ledger(100'000);
    OffsetBook offsets;
    OneMove setup = prefilled_move(cluster, topic, kPer, 256, ledger);
    ASSERT_NE(setup.source, 0) << "no move was planned";
    const Move* move = &setup.move;
    ASSERT_TRUE(reaches_phase(cluster, *move, "flipping")) << move_logs(cluster);
    cluster.kill(setup.source);
    Traffic traffic(cluster, topic, ledger, 10'000);
    traffic.record_offsets(&offsets);
    for (int index : others_than(setup.source)) traffic.consume_through(index);
    EXPECT_TRUE(wait_owned_by_n4(cluster, *move, seconds(120))) << move_logs(cluster);
    EXPECT_EQ(metric(cluster, 4, kForcePromoted), 1);
    std::set<int> dead = held_only_by(setup, move->from);
    eventually([&] { return lost_beyond(ledger, dead, kPer).empty(); }, seconds(60),
               milliseconds(200));
    traffic.stop_consumers();
    std::vector<int> lost = lost_beyond(ledger, dead, kPer);
    std::printf("%s; lost flip of %s completed as a force-promote\n", ledger.summary().c_str(),
                to_string(*move).c_str());
    EXPECT_TRUE(lost.empty()) << lost.size() << " lost:" << ids(lost) << move_logs(cluster);
    EXPECT_EQ(offsets.conflicts(), 0) << offsets.samples();
}

// Rule: after a move whose new owner cannot vouch for the old copy (its move marker is gone), the
// old owner's sweep sets the copy aside instead of deleting it, counts it, and says why.
TEST(MoveFailureTest, SweepQuarantinesACopyTheOwnerCannotVouchFor) {
    ClusterOptions options = failure_cluster(4);
    options.node_env[4] = {{"NARAD_FAILPOINTS", "move.before_flip=sleep(3000)@1"}};
    Cluster cluster(options);
    const std::string topic = "vouch";
    Ledger ledger(10'000);
    OneMove setup = prefilled_move(cluster, topic, 50, 256, ledger);
    ASSERT_NE(setup.source, 0) << "no move was planned";
    const Move* move = &setup.move;
    const int source = setup.source;
    ASSERT_TRUE(reaches_phase(cluster, *move, "flipping")) << move_logs(cluster);
    // Installed and about to flip: the new owner loses its marker.
    std::string marker = partition_directory(cluster.node(4), *move) + "/move.marker";
    ASSERT_EQ(std::remove(marker.c_str()), 0) << marker;
    ASSERT_TRUE(wait_owned_by_n4(cluster, *move, seconds(60)));
    std::string old_copy = partition_directory(cluster.node(source), *move);
    EXPECT_TRUE(eventually([&] { return path_exists(old_copy + ".quarantine"); }, seconds(60)))
        << move_logs(cluster);
    EXPECT_FALSE(path_exists(old_copy));
    // The directory is renamed first; the count and the log line follow it.
    EXPECT_TRUE(eventually([&] { return metric(cluster, source, kQuarantined) == 1; }))
        << metric(cluster, source, kQuarantined);
    EXPECT_TRUE(eventually([&] {
        return log_contains(cluster.node(source), "cannot vouch for the local partition copy");
    }));
}

}  // namespace
}  // namespace narad::testing
