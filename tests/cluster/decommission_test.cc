// Decommission (docs/decommission.md) on real `narad serve` processes: the node that is both
// controller and etcd leader drained under traffic (a client-only node takes its vote); every
// refusal (409) and its dry run, cancel and a restart in the middle of a drain; and a draining
// client-only node holding the only copy of a move whose source died (force-promoted, then
// drained off). Every run ends with nothing accepted lost (beyond the partitions only a dead disk
// holds) and no offset delivered with two different messages; every wait is on a condition with
// a deadline.
#include "cluster/move_support.h"

namespace narad::testing {
namespace {

Result<net::HttpResponse> decommission(Cluster& cluster, int via, const std::string& node,
                                       std::string_view method = "POST",
                                       std::string_view query = "") {
    auto client = cluster.node(via).client(seconds(30));
    return http(client, method,
                "/v1/cluster/members/" + node + "/decommission" + std::string(query));
}

// The member entry of `node` in node `observer`'s /v1/cluster/members (nullopt: not listed, or
// the observer does not answer).
std::optional<json> member_entry(Cluster& cluster, int observer, const std::string& node) {
    auto body = cluster.members(observer);
    if (!body) return std::nullopt;
    for (const auto& member : (*body)["members"]) {
        if (member.value("id", "") == node) return member;
    }
    return std::nullopt;
}

bool listed(Cluster& cluster, int observer, const std::string& node) {
    auto body = cluster.members(observer);
    return !body || member_entry(cluster, observer, node).has_value();
}

bool draining(Cluster& cluster, int observer, const std::string& node) {
    auto member = member_entry(cluster, observer, node);
    return member && member->value("draining", false);
}

std::vector<std::string> codes(const json& reasons) {
    std::vector<std::string> out;
    for (const auto& reason : reasons) out.push_back(reason.value("code", ""));
    return out;
}

// etcd's members as node `observer` reports them: name -> "voter" or "learner".
std::map<std::string, std::string> etcd_roles(Cluster& cluster, int observer) {
    std::map<std::string, std::string> out;
    auto body = cluster.status(observer);
    if (!body || !body->contains("etcd") || !(*body)["etcd"].contains("members")) return out;
    for (const auto& member : (*body)["etcd"]["members"]) {
        out[member.value("name", "")] = member.value("is_learner", false) ? "learner" : "voter";
    }
    return out;
}

// Waits until the node's process has exited; returns its wait status (-1: still running).
int wait_exit(NodeProcess& node, milliseconds timeout) {
    eventually([&] { return !node.running(); }, timeout, milliseconds(100));
    return node.running() ? -1 : node.exit_status();
}

// A dry run through node `via`: the verdict, or nullopt with a failure recorded.
std::optional<json> dry_run(Cluster& cluster, int via, const std::string& node) {
    auto response = decommission(cluster, via, node, "POST", "?dry_run=true");
    EXPECT_TRUE(response.is_ok() && response->status == 200) << describe(response);
    if (!response.is_ok() || response->status != 200) return std::nullopt;
    return json::parse(response->body, nullptr, false);
}

// Rule: a 409 lists every reason, names the first in its error, and changes nothing.
void expect_refused(Cluster& cluster, int via, const std::string& node,
                    const std::vector<std::string>& expected) {
    auto verdict = dry_run(cluster, via, node);
    ASSERT_TRUE(verdict);
    EXPECT_FALSE(verdict->value("would_decommission", true)) << verdict->dump();
    EXPECT_EQ(codes((*verdict)["reasons"]), expected) << verdict->dump();
    auto refused = decommission(cluster, via, node);
    ASSERT_TRUE(refused.is_ok() && refused->status == 409) << describe(refused);
    json body = json::parse(refused->body, nullptr, false);
    EXPECT_EQ(codes(body["reasons"]), expected) << refused->body;
    ASSERT_FALSE(body["reasons"].empty());
    EXPECT_EQ(body.value("error", ""), "decommission of " + node + " refused: " +
                                           body["reasons"][0].value("message", std::string()));
    EXPECT_FALSE(draining(cluster, via, node)) << "a refused decommission changed the member";
    std::printf("%s refused: %s\n", node.c_str(), refused->body.c_str());
}

// Rule: the node that is both controller and etcd leader, an etcd voter, is drained under
// produce and consume through every node: it steps down, etcd leadership moves off it, the
// client-only node is made a learner and promoted so three voters remain, the node sheds every
// partition, leaves etcd and the member list and exits 0; produce through the other nodes is
// never refused, and every accepted message is consumed.
TEST(DecommissionTest, TheControllerAndEtcdLeaderDrainsUnderTraffic) {
    Cluster cluster(move_cluster(4));
    ASSERT_NO_FATAL_FAILURE(cluster.start());
    const std::string topic = "drain";
    {
        auto client = cluster.node(1).client();
        create_topic(client, topic, 8);
    }
    ASSERT_TRUE(eventually([&] { return !read_assignments(cluster, topic, 8).empty(); }));
    const int leaving = cluster.controller();
    ASSERT_NE(leaving, 0);
    ASSERT_LE(leaving, 3) << "the controller should host an etcd voter";
    ASSERT_TRUE(cluster.transfer_etcd_leadership(leaving));
    const std::string id = cluster.node(leaving).node_id();
    const int observer = leaving == 1 ? 2 : 1;
    ASSERT_EQ(etcd_roles(cluster, observer).count("n4"), 0u) << "n4 should host no etcd member";

    Ledger ledger(100'000);
    OffsetBook offsets;
    Traffic traffic(cluster, topic, ledger);
    traffic.record_offsets(&offsets);
    for (int index = 1; index <= 4; ++index) {
        if (index != leaving) traffic.produce_through(index, 60);
        traffic.consume_through(index);
    }
    ASSERT_TRUE(accepted_grows_by(ledger, 300));
    auto started = SteadyClock::now();
    auto accepted = decommission(cluster, observer, id);
    ASSERT_TRUE(accepted.is_ok() && accepted->status == 204) << describe(accepted);

    // While it drains it refuses client produce, telling the client to retry elsewhere.
    auto client = cluster.node(leaving).client(seconds(5));
    std::optional<net::HttpResponse> refusal;
    EXPECT_TRUE(eventually([&] {
        auto response = client.post("/v1/topics/" + topic + "/produce", payload(-1, 0));
        if (!response.is_ok() || response->status != 503) return false;
        refusal = *response;
        return true;
    }));
    if (refusal) {
        bool retry_after = false;
        for (const auto& [name, value] : refusal->headers) {
            retry_after |= name == "retry-after" && value == "1";
        }
        EXPECT_TRUE(retry_after) << "no Retry-After: 1 on the refusal";
        EXPECT_NE(refusal->body.find("decommissioned"), std::string::npos) << refusal->body;
    }
    EXPECT_NE(cluster.wait_for_controller(leaving, seconds(30)), 0)
        << "the draining controller did not step down";

    EXPECT_EQ(wait_exit(cluster.node(leaving), seconds(180)), 0)
        << "the node did not exit 0 once drained" << move_logs(cluster);
    double drain_seconds = std::chrono::duration<double>(SteadyClock::now() - started).count();
    EXPECT_FALSE(listed(cluster, observer, id));
    EXPECT_TRUE(eventually([&] {
        auto roles = etcd_roles(cluster, observer);
        return roles.size() == 3 && roles.count(id) == 0 && roles["n4"] == "voter";
    })) << "etcd: "
        << cluster.status(observer).value_or(json()).dump();
    EXPECT_NE(cluster.etcd_leader(), leaving);
    auto owned = owned_partitions(cluster, observer);
    int total = 0;
    for (const auto& [node, count] : owned) total += count;
    EXPECT_EQ(total, 8);
    EXPECT_EQ(owned.count(id), 0u);
    EXPECT_TRUE(log_contains(cluster.node(leaving), "this node has been decommissioned"));
    bool drained = traffic.drain(seconds(120));
    std::printf("%s; %s drained and out in %.1f s\n", ledger.summary().c_str(), id.c_str(),
                drain_seconds);
    EXPECT_TRUE(drained) << ledger.summary() << move_logs(cluster);
    EXPECT_EQ(offsets.conflicts(), 0) << offsets.samples();
    EXPECT_EQ(traffic.refused(), 0) << traffic.refusal_samples();
}

// Rule: a decommission that could never complete is refused with every reason and changes
// nothing, and the dry run reports the same verdict (below_min_voters and no_receivers,
// owner_dead, below_min_voters with no_healthy_majority); a drain survives a restart of the node
// (it still refuses produce); a cancel leaves the node with what it still owns; unknown members
// are 404 and bad parameters 400. Copies run at 4 KiB/s so the drains stay in progress.
TEST(DecommissionTest, RefusalsDryRunsCancelAndRestartMidDrain) {
    ClusterOptions options = move_cluster(4, {{"NARAD_MOVE_COPY_RATE", "4096"}});
    Cluster cluster(options);
    ASSERT_NO_FATAL_FAILURE(cluster.start());
    const std::string topic = "refuse";
    {
        auto client = cluster.node(1).client();
        create_topic(client, topic, 8);
    }
    ASSERT_TRUE(eventually([&] { return !read_assignments(cluster, topic, 8).empty(); }));
    Ledger ledger(10'000);
    prefill(cluster, 1, topic, 8, 100, 2048, ledger, 0);

    for (const char* node : {"n2", "n3", "n4"}) {
        auto accepted = decommission(cluster, 1, node);
        ASSERT_TRUE(accepted.is_ok() && accepted->status == 204)
            << node << ": " << describe(accepted);
    }
    // Nobody would be left to take n1's partitions, and no node could take its vote.
    auto verdict = dry_run(cluster, 1, "n1");
    ASSERT_TRUE(verdict);
    EXPECT_EQ(verdict->value("member", ""), "n1");
    EXPECT_TRUE(verdict->value("voter", false));
    EXPECT_GT(verdict->value("owned_partitions", 0), 0);
    ASSERT_NO_FATAL_FAILURE(expect_refused(cluster, 1, "n1", {"below_min_voters", "no_receivers"}));

    // A restart in the middle of its drain: it is still draining and still refuses produce.
    ASSERT_NO_FATAL_FAILURE(cluster.restart(3));
    EXPECT_TRUE(draining(cluster, 1, "n3"));
    {
        auto client = cluster.node(3).client(seconds(5));
        EXPECT_TRUE(eventually([&] {
            auto response = client.post("/v1/topics/" + topic + "/produce", payload(-1, 0));
            return response.is_ok() && response->status == 503;
        })) << "the restarted draining node takes produce";
    }

    // Cancel in the middle: no longer draining, and it keeps what it still owns.
    for (const char* node : {"n2", "n3", "n4"}) {
        auto cancelled = decommission(cluster, 1, node, "DELETE");
        ASSERT_TRUE(cancelled.is_ok() && cancelled->status == 204) << describe(cancelled);
        EXPECT_FALSE(draining(cluster, 1, node)) << node;
    }
    auto owned = owned_partitions(cluster, 1);
    std::printf("after the cancels: n1 %d, n2 %d, n3 %d, n4 %d partitions\n", owned["n1"],
                owned["n2"], owned["n3"], owned["n4"]);
    EXPECT_GT(owned["n2"] + owned["n3"] + owned["n4"], 0) << "a cancel gave up partitions";
    std::string audit;
    for (int index = 1; index <= 4; ++index) {
        for (const auto& line : log_lines(cluster.node(index), "\"component\":\"audit\"")) {
            audit += line + "\n";
        }
    }
    EXPECT_NE(audit.find("\"event\":\"cluster.decommission.cancel\""), std::string::npos) << audit;
    EXPECT_NE(audit.find("\"event\":\"cluster.decommission\""), std::string::npos) << audit;

    // Unknown members and bad parameters.
    auto unknown = decommission(cluster, 2, "nope");
    EXPECT_TRUE(unknown.is_ok() && unknown->status == 404 &&
                unknown->body.find("member not found") != std::string::npos)
        << describe(unknown);
    auto unknown_cancel = decommission(cluster, 2, "nope", "DELETE");
    EXPECT_TRUE(unknown_cancel.is_ok() && unknown_cancel->status == 404)
        << describe(unknown_cancel);
    auto bad = decommission(cluster, 2, "n2", "POST", "?dry_run=maybe");
    EXPECT_TRUE(bad.is_ok() && bad->status == 400 &&
                bad->body.find("dry_run must be true or false, got \\\"maybe\\\"") !=
                    std::string::npos)
        << describe(bad);
    auto bad_cancel = decommission(cluster, 2, "n2", "DELETE", "?dry_run=true");
    EXPECT_TRUE(bad_cancel.is_ok() && bad_cancel->status == 400) << describe(bad_cancel);

    // A dead owner's partitions cannot move off its disk.
    ASSERT_GT(owned_partitions(cluster, 1)["n4"], 0);
    cluster.kill(4);
    ASSERT_TRUE(cluster.wait_member_status(1, "n4", "dead"));
    ASSERT_NO_FATAL_FAILURE(expect_refused(cluster, 1, "n4", {"owner_dead"}));
    // With n3 dead too, removing n2 would leave n1 and n3, only one of them alive.
    cluster.kill(3);
    ASSERT_TRUE(cluster.wait_member_status(1, "n3", "dead"));
    ASSERT_NO_FATAL_FAILURE(
        expect_refused(cluster, 1, "n2", {"below_min_voters", "no_healthy_majority"}));
}

// Rule: a move whose source died is left alone when its destination is decommissioned: the
// draining client-only node holds the only live copy, force-promotes it (the controller reports
// move_target meanwhile) and then drains it off like any partition it owns, leaves (etcd keeps
// its three voters) and exits 0; nothing the source had made visible is lost.
TEST(DecommissionTest, ADrainingDestinationForcePromotesTheOnlyCopyThenDrainsIt) {
    ClusterOptions options = failure_cluster(4);
    options.node_env[4] = {{"NARAD_FAILPOINTS", "move.after_catch_up_pass=sleep(6000)@1"}};
    Cluster cluster(options);
    const std::string topic = "only-copy";
    constexpr int kPer = 200;
    Ledger ledger(100'000);
    OffsetBook offsets;
    OneMove setup = prefilled_move(cluster, topic, kPer, 256, ledger);
    ASSERT_NE(setup.source, 0) << "no move was planned";
    const Move move = setup.move;
    ASSERT_EQ(move.to, "n4");
    ASSERT_TRUE(first_pass_done(cluster, move)) << move_logs(cluster);
    cluster.kill(setup.source);
    const int observer = others_than(setup.source).front();
    const int controller = cluster.wait_for_controller(setup.source, seconds(30));
    ASSERT_NE(controller, 0);
    // Until the controller sees the source dead, a move to a draining node is cleared (the
    // source still owns the partition); once it is dead the draining node's copy is the one
    // that counts.
    ASSERT_TRUE(cluster.wait_member_status(controller, move.from, "dead"));
    auto accepted = decommission(cluster, observer, "n4");
    ASSERT_TRUE(accepted.is_ok() && accepted->status == 204) << describe(accepted);

    Traffic traffic(cluster, topic, ledger, 10'000);
    traffic.record_offsets(&offsets);
    for (int index : others_than(setup.source)) {
        traffic.produce_through(index, 50);
        traffic.consume_through(index);
    }
    EXPECT_TRUE(eventually(
        [&] {
            auto member = member_entry(cluster, observer, "n4");
            if (!member || !member->contains("decommission_blocked")) return false;
            for (const auto& reason : (*member)["decommission_blocked"]) {
                if (reason.value("code", "") == "move_target" &&
                    reason.value("message", "").find("dead or no longer a member") !=
                        std::string::npos) {
                    return true;
                }
            }
            return false;
        },
        seconds(30)))
        << member_entry(cluster, observer, "n4").value_or(json()).dump();
    // Its log, not its metric: once drained it exits.
    EXPECT_TRUE(eventually([&] { return log_contains(cluster.node(4), "force-promoting the"); },
                           seconds(90)))
        << "not force-promoted" << move_logs(cluster);
    EXPECT_EQ(wait_exit(cluster.node(4), seconds(120)), 0)
        << "n4 did not leave once drained" << move_logs(cluster);
    auto now = read_assignment(cluster, topic, move.partition);
    ASSERT_TRUE(now);
    EXPECT_NE(now->owner, "n4");
    EXPECT_NE(now->owner, move.from);
    EXPECT_FALSE(listed(cluster, observer, "n4"));
    auto roles = etcd_roles(cluster, observer);
    EXPECT_EQ(roles.size(), 3u) << "etcd's configuration changed for a client-only node";
    bool waited_logged = false;
    for (int index : others_than(setup.source)) {
        waited_logged |= log_contains(cluster.node(index), "reason=move_target");
    }
    EXPECT_TRUE(waited_logged) << "the controller never logged move_target";

    std::set<int> dead = held_only_by(setup, move.from);
    traffic.stop_producers();
    eventually([&] { return lost_beyond(ledger, dead, kPer).empty(); }, seconds(90),
               milliseconds(200));
    traffic.stop_consumers();
    std::vector<int> lost = lost_beyond(ledger, dead, kPer);
    std::printf("%s; %s force-promoted on draining n4, now on %s\n", ledger.summary().c_str(),
                to_string(move).c_str(), now->owner.c_str());
    EXPECT_TRUE(lost.empty()) << lost.size() << " lost:" << ids(lost) << move_logs(cluster);
    EXPECT_EQ(offsets.conflicts(), 0) << offsets.samples();
    EXPECT_EQ(traffic.refused(), 0) << traffic.refusal_samples();
}

}  // namespace
}  // namespace narad::testing
