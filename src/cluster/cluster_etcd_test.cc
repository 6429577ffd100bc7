// The etcd-backed metastore, membership and controller against a real etcd member.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>

#include "base/metrics.h"
#include "base/mutex.h"
#include "cluster/controller.h"
#include "cluster/membership.h"
#include "meta/codec.h"
#include "meta/etcd_meta_store.h"
#include "meta/etcd_test_support.h"
#include "meta/keys.h"
#include "net/etcd_transport.h"

namespace narad::cluster {
namespace {

using namespace std::chrono_literals;

// Polls until `condition` holds, for at most `timeout`.
bool eventually(const std::function<bool()>& condition, Millis timeout = Millis(15'000)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) return true;
        std::this_thread::sleep_for(10ms);
    }
    return condition();
}

// Moves `clock` on by `step` whenever `waiters` threads wait on it at its current time (the
// controller between its checks, the liveness keeper), until `condition` holds: the controller's
// loop runs on that clock, so it looks again only as time moves.
bool eventually_stepping(FakeClock& clock, int waiters, Millis step,
                         const std::function<bool()>& condition) {
    return eventually([&] {
        if (condition()) return true;
        if (clock.await_waiters(waiters, Millis(10))) clock.advance(step);
        return condition();
    });
}

meta::Topic topic(const std::string& name, uint32_t partitions, const std::string& incarnation) {
    meta::Topic t;
    t.name = name;
    t.partitions = partitions;
    t.incarnation = IncarnationId(incarnation);
    return t;
}

// One node's view: its own client and replica on the shared etcd.
struct NodeView {
    NodeView(net::HttpEtcdTransport& transport, const std::string& endpoint)
        : client(transport, meta::EtcdClientOptions{.endpoints = {endpoint}}) {
        store = meta::EtcdMetaStore::open(client, SystemClock::instance(), {}).value();
    }
    meta::EtcdClient client;
    std::unique_ptr<meta::EtcdMetaStore> store;
};

meta::MemberInfo member(const std::string& id) {
    return meta::MemberInfo{.id = NodeId(id), .api_addr = "127.0.0.1:1", .cluster_addr = "x:2"};
}

class ClusterEtcdTest : public ::testing::Test {
  protected:
    meta::testing::LocalEtcd etcd_;
    net::HttpEtcdTransport transport_;
};

// Rule: a topic and all its assignments are one txn, so a member started with the txn limit
// txn_ops_for(P) (as a node starts its own for topic.max_partitions = P) takes a topic of P
// partitions whole; at etcd's default limit the same create is refused, naming the limit to set,
// and writes nothing.
TEST(ClusterEtcdLimitsTest, ATopicOfMaxPartitionsFitsTheMembersTxnLimit) {
    constexpr uint32_t kPartitions = 300;
    std::vector<NodeId> owners;
    for (uint32_t p = 0; p < kPartitions; ++p) owners.push_back(NodeId(p % 2 ? "a" : "b"));
    {
        meta::testing::LocalEtcd etcd("n1", meta::EtcdMetaStore::txn_ops_for(kPartitions));
        net::HttpEtcdTransport transport;
        NodeView a(transport, etcd.endpoint());
        auto made = a.store->create_topic(topic("wide", kPartitions, "0000000000000001"), owners);
        ASSERT_TRUE(made.is_ok()) << made.status().to_string();
        EXPECT_EQ(a.store->snapshot()->assignments.size(), kPartitions);
    }
    meta::testing::LocalEtcd etcd;  // etcd's own default, 128
    net::HttpEtcdTransport transport;
    NodeView a(transport, etcd.endpoint());
    auto refused = a.store->create_topic(topic("wide", kPartitions, "0000000000000001"), owners);
    ASSERT_FALSE(refused.is_ok());
    // The refusal names the operator's setting, not etcd's bare text.
    EXPECT_EQ(refused.code(), Errc::invalid_argument);
    EXPECT_NE(refused.status().message().find("--max-txn-ops=" + std::to_string(kPartitions + 1)),
              std::string::npos)
        << refused.status().to_string();
    EXPECT_NE(refused.status().message().find("cluster.meta_endpoints"), std::string::npos);
    NodeView fresh(transport, etcd.endpoint());
    EXPECT_EQ(fresh.store->snapshot()->find_topic("wide"), nullptr);
    EXPECT_TRUE(fresh.store->snapshot()->assignments.empty());
}

// Rule: a topic created through one node's store appears, with its assignments, in another node's
// replica; a second create of the name is already_exists; delete removes topic and assignments.
TEST_F(ClusterEtcdTest, TopicWritesReachEveryReplica) {
    NodeView a(transport_, etcd_.endpoint());
    NodeView b(transport_, etcd_.endpoint());
    std::vector<NodeId> owners{NodeId("a"), NodeId("b"), NodeId("a")};
    ASSERT_TRUE(a.store->create_topic(topic("orders", 3, "0000000000000001"), owners).is_ok());
    // Read-your-writes on the writer.
    ASSERT_NE(a.store->snapshot()->find_topic("orders"), nullptr);
    ASSERT_TRUE(eventually([&] { return b.store->snapshot()->find_topic("orders") != nullptr; }));
    meta::MetaSnapshot seen = b.store->snapshot();
    ASSERT_NE(seen->find_assignment("orders", PartitionId(1)), nullptr);
    EXPECT_EQ(seen->find_assignment("orders", PartitionId(1))->owner, NodeId("b"));
    EXPECT_EQ(b.store->create_topic(topic("orders", 3, "0000000000000002"), owners).code(),
              Errc::already_exists);

    ASSERT_TRUE(a.store->delete_topic("orders").is_ok());
    ASSERT_TRUE(eventually([&] {
        meta::MetaSnapshot now = b.store->snapshot();
        return now->find_topic("orders") == nullptr && now->assignments.empty();
    }));
    EXPECT_EQ(a.store->delete_topic("orders").code(), Errc::not_found);
}

// Rule: a user written through one node's store reaches every replica with its grants; a
// read-modify-write that races another write of the same user re-reads and applies on top of it,
// so neither change is lost; an error from the change writes nothing; a delete removes the key.
TEST_F(ClusterEtcdTest, UserChangesAreCompareAndSwapAndReachEveryReplica) {
    NodeView a(transport_, etcd_.endpoint());
    NodeView b(transport_, etcd_.endpoint());
    auto create =
        [](const std::optional<meta::User>& existing) -> Result<std::optional<meta::User>> {
        if (existing) return Status(Errc::already_exists, "user already exists");
        meta::User user;
        user.name = "alice";
        user.password_hash = "h1";
        user.grants = {{meta::Action::consume, {"orders-*"}}};
        return std::optional<meta::User>(user);
    };
    ASSERT_TRUE(a.store->change_user("alice", create).is_ok());
    ASSERT_NE(a.store->snapshot()->find_user("alice"), nullptr) << "read your own write";
    ASSERT_TRUE(eventually([&] { return b.store->snapshot()->find_user("alice") != nullptr; }));
    EXPECT_EQ(b.store->snapshot()->find_user("alice")->grants,
              (std::vector<meta::Grant>{{meta::Action::consume, {"orders-*"}}}));
    EXPECT_EQ(b.store->change_user("alice", create).code(), Errc::already_exists);

    // b's change reads the record, then a writes the password before b's compare-and-swap: b's
    // swap fails, b re-reads, and its grant lands on a's password.
    int calls = 0;
    auto add_grant =
        [&](const std::optional<meta::User>& existing) -> Result<std::optional<meta::User>> {
        if (++calls == 1) {
            auto changed = a.store->change_user(
                "alice",
                [](const std::optional<meta::User>& e) -> Result<std::optional<meta::User>> {
                    meta::User user = *e;
                    user.password_hash = "h2";
                    return std::optional<meta::User>(user);
                });
            EXPECT_TRUE(changed.is_ok());
        }
        meta::User user = *existing;
        user.grants.push_back({meta::Action::produce, {"x"}});
        return std::optional<meta::User>(user);
    };
    auto merged = b.store->change_user("alice", add_grant);
    ASSERT_TRUE(merged.is_ok()) << merged.status().to_string();
    EXPECT_EQ(calls, 2);
    EXPECT_EQ((*merged)->password_hash, "h2");
    EXPECT_EQ((*merged)->grants.size(), 2u);

    auto refused = a.store->change_user(
        "alice", [](const std::optional<meta::User>&) -> Result<std::optional<meta::User>> {
            return Status(Errc::forbidden, "no");
        });
    EXPECT_EQ(refused.code(), Errc::forbidden);
    meta::Topic owned = topic("owned", 3, "00000000000000c1");
    owned.owner = "alice";
    meta::Topic other = topic("other", 3, "00000000000000c2");
    other.owner = "bob";
    ASSERT_TRUE(a.store->create_topic_on(owned, NodeId("a")).is_ok());
    ASSERT_TRUE(a.store->create_topic_on(other, NodeId("a")).is_ok());
    ASSERT_TRUE(a.store
                    ->change_user(
                        "alice",
                        [](const std::optional<meta::User>&) -> Result<std::optional<meta::User>> {
                            return std::optional<meta::User>();
                        })
                    .is_ok());
    ASSERT_TRUE(eventually([&] { return b.store->snapshot()->find_user("alice") == nullptr; }));
    EXPECT_GT(b.store->snapshot()->users_version, 0u);
    // Its topics lost their owner in the same write; another user's kept theirs.
    meta::MetaSnapshot after = b.store->snapshot();
    ASSERT_NE(after->find_topic("owned"), nullptr);
    EXPECT_EQ(after->find_topic("owned")->owner, "");
    EXPECT_EQ(after->find_topic("other")->owner, "bob");
}

// What a replica holds, written out so that two replicas can be compared.
std::string describe(const meta::MetaState& state) {
    std::string out;
    for (const auto& [name, t] : state.topics) out += "topic " + meta::encode_topic(t) + "\n";
    for (const auto& [key, a] : state.assignments) {
        out += "assignment " + key.topic + "/" + std::to_string(key.partition.value()) + " " +
               a.owner.value() + ">" + a.target.value() + "\n";
    }
    for (const auto& [node, m] : state.members) out += "member " + meta::encode_member(m) + "\n";
    for (const auto& [name, u] : state.users) out += "user " + name + "\n";
    for (const NodeId& node : state.live) out += "live " + node.value() + "\n";
    for (const NodeId& node : state.declared_dead) out += "dead " + node.value() + "\n";
    return out + "controller " + state.controller.value() + "\n";
}

// Rule: a replica that follows the changes event by event (each batch decodes only the keys it
// changed) holds exactly what a replica reading the whole prefix afterwards holds: creates,
// growth, targets, deletes, members, liveness, the controller, users, and a record that does
// not decode (left out by both).
TEST_F(ClusterEtcdTest, ReplicaFollowingEventsEqualsAFreshRead) {
    NodeView writer(transport_, etcd_.endpoint());
    NodeView follower(transport_, etcd_.endpoint());
    meta::Keys keys("narad");
    meta::EtcdMetaStore& store = *writer.store;
    ASSERT_TRUE(store
                    .create_topic(topic("orders", 3, "0000000000000001"),
                                  {NodeId("a"), NodeId("b"), NodeId("a")})
                    .is_ok());
    ASSERT_TRUE(store.create_topic(topic("gone", 2, "0000000000000002"), {NodeId("b"), NodeId("b")})
                    .is_ok());
    auto orders = store.snapshot()->find_topic("orders");
    ASSERT_NE(orders, nullptr);
    meta::Topic grown = *orders;
    grown.partitions = 5;
    ASSERT_TRUE(store.update_topic(grown, {NodeId("b"), NodeId("a")}).is_ok());
    auto targeted =
        store.set_targets({{{"orders", PartitionId(0)}, {NodeId("a"), NodeId()}, NodeId("b")}});
    ASSERT_TRUE(targeted.is_ok()) << targeted.status().to_string();
    ASSERT_EQ(*targeted, 1u);
    ASSERT_TRUE(store.delete_topic("gone").is_ok());
    ASSERT_TRUE(
        writer.client.put(keys.member(NodeId("a")), meta::encode_member(member("a"))).is_ok());
    ASSERT_TRUE(
        writer.client.put(keys.member(NodeId("b")), meta::encode_member(member("b"))).is_ok());
    ASSERT_TRUE(writer.client.put(keys.live(NodeId("a")), "").is_ok());
    ASSERT_TRUE(writer.client.put(keys.live(NodeId("b")), "").is_ok());
    ASSERT_TRUE(writer.client.remove(keys.live(NodeId("b"))).is_ok());
    ASSERT_TRUE(writer.client.put(keys.dead(NodeId("b")), "").is_ok());
    ASSERT_TRUE(
        writer.client.put(keys.ready(), meta::encode_controller_ready(NodeId("a"), 1)).is_ok());
    auto user = [](const std::optional<meta::User>&) -> Result<std::optional<meta::User>> {
        meta::User u;
        u.name = "alice";
        u.password_hash = "h";
        return std::optional<meta::User>(u);
    };
    ASSERT_TRUE(store.change_user("alice", user).is_ok());
    // A record this version cannot read replaces a good one: both replicas leave it out.
    ASSERT_TRUE(writer.client.put(keys.assignment("orders", PartitionId(2)), "{not json").is_ok());

    auto synced = follower.store->sync();
    ASSERT_TRUE(synced.is_ok()) << synced.status().to_string();
    EXPECT_EQ((*synced)->find_assignment("orders", PartitionId(2)), nullptr);
    EXPECT_EQ((*synced)->find_assignment("orders", PartitionId(0))->target, NodeId("b"));
    EXPECT_EQ((*synced)->find_topic("gone"), nullptr);
    NodeView fresh(transport_, etcd_.endpoint());
    EXPECT_EQ(describe(**synced), describe(*fresh.store->snapshot()));
    EXPECT_EQ((*synced)->controller, NodeId("a"));
    EXPECT_EQ((*synced)->assignments.size(), 4u);  // 5 partitions, one unreadable
}

// Rule: an update carrying a stale incarnation (the topic was deleted and recreated) is refused.
TEST_F(ClusterEtcdTest, UpdateOfAnOldIncarnationIsNotFound) {
    NodeView a(transport_, etcd_.endpoint());
    ASSERT_TRUE(a.store->create_topic_on(topic("t", 3, "00000000000000aa"), NodeId("a")).is_ok());
    ASSERT_TRUE(a.store->delete_topic("t").is_ok());
    ASSERT_TRUE(a.store->create_topic_on(topic("t", 3, "00000000000000bb"), NodeId("a")).is_ok());
    meta::Topic stale = topic("t", 4, "00000000000000aa");
    EXPECT_EQ(a.store->update_topic_on(stale, NodeId("a")).code(), Errc::not_found);
    meta::Topic grown = topic("t", 5, "00000000000000bb");
    ASSERT_TRUE(a.store->update_topic_on(grown, NodeId("a")).is_ok());
    EXPECT_NE(a.store->snapshot()->find_assignment("t", PartitionId(4)), nullptr);
}

// Rule: a member's liveness key exists while it runs; after stop() it is gone and other replicas
// record when they saw it go.
TEST_F(ClusterEtcdTest, MembershipLivenessFollowsTheNode) {
    NodeView a(transport_, etcd_.endpoint());
    NodeView b(transport_, etcd_.endpoint());
    Membership membership(*a.store, SystemClock::instance(), member("a"), MembershipOptions{});
    ASSERT_TRUE(membership.start().is_ok());
    ASSERT_TRUE(eventually([&] { return b.store->snapshot()->is_live(NodeId("a")); }));
    EXPECT_NE(b.store->snapshot()->find_member(NodeId("a")), nullptr);
    membership.stop();
    ASSERT_TRUE(eventually([&] { return !b.store->snapshot()->is_live(NodeId("a")); }));
    EXPECT_EQ(b.store->snapshot()->down_since.count(NodeId("a")), 1u);
}

// Rule (the owner's self-fence): the lease counts as valid only until the send time of the last
// acknowledged grant or keep-alive plus the TTL less the margin, on the node's clock; a fake clock
// moved past that point ends it while etcd still holds the lease, and a keep-alive renews it.
TEST_F(ClusterEtcdTest, SelfFenceEndsBeforeTheLeaseCanExpire) {
    NodeView a(transport_, etcd_.endpoint());
    FakeClock clock;
    Membership membership(*a.store, clock, member("a"),
                          MembershipOptions{.lease_ttl_seconds = 10,
                                            .keep_alive_interval = std::chrono::hours(1),
                                            .fence_margin = 2s});
    EXPECT_FALSE(membership.lease_valid()) << "valid before any grant";
    ASSERT_TRUE(membership.start().is_ok());
    EXPECT_TRUE(membership.lease_valid());
    clock.advance(7'999ms);
    EXPECT_TRUE(membership.lease_valid());
    clock.advance(2ms);  // 8 s after the grant was sent: TTL 10 s less the 2 s margin
    EXPECT_FALSE(membership.lease_valid());
    EXPECT_TRUE(eventually([&] { return a.store->snapshot()->is_live(NodeId("a")); }))
        << "etcd still holds the lease";
    membership.stop();
    EXPECT_FALSE(membership.lease_valid());
}

// Rule: a liveness lease lost while the node runs is replaced and the key written again.
TEST_F(ClusterEtcdTest, LostLeaseIsReplaced) {
    NodeView a(transport_, etcd_.endpoint());
    Membership membership(*a.store, SystemClock::instance(), member("a"),
                          MembershipOptions{.lease_ttl_seconds = 5, .keep_alive_interval = 50ms});
    ASSERT_TRUE(membership.start().is_ok());
    uint64_t generation = membership.generation();
    ASSERT_TRUE(a.client.lease_revoke(membership.lease()).is_ok());
    ASSERT_TRUE(eventually([&] { return membership.generation() > generation; }));
    EXPECT_TRUE(eventually([&] { return a.store->snapshot()->is_live(NodeId("a")); }));
}

// Rule: one of two nodes becomes controller and writes the ready record; when it stops (resigns)
// the other takes over; a write fenced by the old controller's election key is then refused.
TEST_F(ClusterEtcdTest, ControllerHandsOverAndTheDeposedCannotWrite) {
    NodeView a(transport_, etcd_.endpoint());
    NodeView b(transport_, etcd_.endpoint());
    Membership ma(*a.store, SystemClock::instance(), member("a"), {});
    Membership mb(*b.store, SystemClock::instance(), member("b"), {});
    ASSERT_TRUE(ma.start().is_ok());
    ASSERT_TRUE(mb.start().is_ok());
    ControllerOptions options{.tick = 200ms, .leadership_check = 50ms, .campaign_wait = 500ms};
    auto ca =
        std::make_unique<Controller>(*a.store, ma, SystemClock::instance(), NodeId("a"), options);
    ca->start();
    ASSERT_TRUE(eventually([&] { return ca->is_controller(); }));
    Controller cb(*b.store, mb, SystemClock::instance(), NodeId("b"), options);
    cb.start();
    ASSERT_TRUE(eventually([&] { return a.store->snapshot()->controller == NodeId("a"); }));
    std::optional<meta::Fence> old_fence = a.store->fence();
    ASSERT_TRUE(old_fence.has_value());
    EXPECT_FALSE(cb.is_controller());

    ca->stop();
    ASSERT_TRUE(eventually([&] { return cb.is_controller(); }));
    ASSERT_TRUE(eventually([&] { return b.store->snapshot()->controller == NodeId("b"); }));

    // The deposed controller's fence no longer holds: its topic write changes nothing.
    a.store->set_fence(old_fence);
    EXPECT_EQ(a.store->create_topic_on(topic("late", 3, "00000000000000cc"), NodeId("a")).code(),
              Errc::unavailable);
    a.store->set_fence(std::nullopt);
    EXPECT_EQ(b.client.range(b.store->keys().topic("late")).value().kvs.size(), 0u);
    cb.stop();
}

// Rule: a controller whose liveness lease expires (the node was cut off) loses office, and its
// fenced writes are refused, without any action of its own.
TEST_F(ClusterEtcdTest, ControllerWhoseLeaseExpiresIsDeposed) {
    NodeView a(transport_, etcd_.endpoint());
    NodeView b(transport_, etcd_.endpoint());
    Membership ma(*a.store, SystemClock::instance(), member("a"),
                  MembershipOptions{.keep_alive_interval = 50ms});
    Membership mb(*b.store, SystemClock::instance(), member("b"), {});
    ASSERT_TRUE(ma.start().is_ok());
    ASSERT_TRUE(mb.start().is_ok());
    ControllerOptions options{.tick = 200ms, .leadership_check = 50ms, .campaign_wait = 500ms};
    Controller ca(*a.store, ma, SystemClock::instance(), NodeId("a"), options);
    ca.start();
    ASSERT_TRUE(eventually([&] { return ca.is_controller(); }));
    Controller cb(*b.store, mb, SystemClock::instance(), NodeId("b"), options);
    cb.start();
    std::optional<meta::Fence> old_fence = a.store->fence();
    // The lease vanishing is what a partition from etcd looks like once the TTL passes.
    ASSERT_TRUE(a.client.lease_revoke(ma.lease()).is_ok());
    ASSERT_TRUE(eventually([&] { return cb.is_controller(); }));
    ASSERT_TRUE(eventually([&] { return !ca.is_controller(); }));
    meta::EtcdMetaStore& stale = *a.store;
    stale.set_fence(old_fence);
    EXPECT_EQ(stale.delete_topic("nothing").code(), Errc::not_found);
    EXPECT_EQ(stale.create_topic_on(topic("late", 3, "00000000000000dd"), NodeId("a")).code(),
              Errc::unavailable);
    stale.set_fence(std::nullopt);
    ca.stop();
    cb.stop();
}

double blocked_gauge(const char* reason) {
    return metrics::Registry::global()
        .gauge("narad_moves_blocked", "", {"reason"})
        .with({reason})
        .value();
}

// Rule: the controller measures on its own clock: it clears the target of a move to a node that
// is no member at once, of a move to a dead member only past the dead-target bound (reporting it
// as target_dead meanwhile), declares a member dead only once it has been down for the
// force-promote timeout, and clears that verdict when the member is live again.
TEST_F(ClusterEtcdTest, ControllerVerdictsAndDeadTargetsFollowItsOwnClock) {
    FakeClock clock;
    meta::EtcdClient client(transport_, meta::EtcdClientOptions{.endpoints = {etcd_.endpoint()}});
    auto store = meta::EtcdMetaStore::open(client, clock, {}).value();
    Membership membership(*store, clock, member("a"), MembershipOptions{});
    ASSERT_TRUE(membership.start().is_ok());
    ASSERT_TRUE(store->put_member(member("b")).is_ok());  // a member without a liveness key
    ASSERT_TRUE(store->create_topic_on(topic("t", 3, "00000000000000ee"), NodeId("a")).is_ok());
    meta::PartitionKey to_dead{"t", PartitionId(0)};
    meta::PartitionKey to_ghost{"t", PartitionId(1)};
    meta::Assignment owned{NodeId("a"), {}};
    ASSERT_EQ(
        store->set_targets({{to_dead, owned, NodeId("b")}, {to_ghost, owned, NodeId("ghost")}})
            .value(),
        2u);
    ControllerOptions options{.tick = 200ms,
                              .leadership_check = 20ms,
                              .dead_after = 30s,
                              .campaign_wait = 500ms,
                              .force_promote_after = 120s,
                              .dead_target_abort_after = 60s};
    Controller controller(*store, membership, clock, NodeId("a"), options);
    controller.start();
    auto target_of = [&](const meta::PartitionKey& key) {
        return store->snapshot()->find_assignment(key.topic, key.partition)->target;
    };
    auto dead_verdict = [&] { return store->snapshot()->declared_dead.count(NodeId("b")) > 0; };
    // After each jump the clock moves only a leadership check at a time (the controller and the
    // liveness keeper wait on it), far less than the margins the rules leave.
    auto stepping = [&](const std::function<bool()>& condition) {
        return eventually_stepping(clock, 2, options.leadership_check, condition);
    };
    ASSERT_TRUE(eventually([&] { return target_of(to_ghost).value().empty(); }))
        << "the move to a node that is no member was not cleared";
    clock.advance(59s);
    ASSERT_TRUE(stepping([&] { return blocked_gauge("target_dead") == 1; }));
    EXPECT_EQ(target_of(to_dead), NodeId("b")) << "cleared before the dead-target bound";
    clock.advance(2s);
    ASSERT_TRUE(stepping([&] { return target_of(to_dead).value().empty(); }));
    EXPECT_FALSE(dead_verdict()) << "declared dead before the force-promote timeout";
    clock.advance(60s);
    ASSERT_TRUE(stepping(dead_verdict)) << "not declared dead after 121 s down";
    ASSERT_TRUE(client.put(store->keys().live(NodeId("b")), "alive").is_ok());
    EXPECT_TRUE(stepping([&] { return !dead_verdict(); })) << "the verdict outlived the return";
    controller.stop();
}

double colocated_gauge() {
    return metrics::Registry::global().gauge("narad_colocated_child_partitions", "").get().value();
}

// Rule: the controller exports narad_colocated_child_partitions from the view it plans from (a
// child on the single node that owns its parent: every partition colocated), and 0 once it
// leaves office.
TEST_F(ClusterEtcdTest, ControllerExportsColocatedChildPartitions) {
    FakeClock clock;
    meta::EtcdClient client(transport_, meta::EtcdClientOptions{.endpoints = {etcd_.endpoint()}});
    auto store = meta::EtcdMetaStore::open(client, clock, {}).value();
    Membership membership(*store, clock, member("a"), MembershipOptions{});
    ASSERT_TRUE(membership.start().is_ok());
    meta::Topic parent = topic("orders", 3, "00000000000000f1");
    meta::Topic child = topic("audit", 2, "00000000000000f2");
    parent.role = meta::TopicRole::parent;
    parent.children = {"audit"};
    child.role = meta::TopicRole::child;
    child.parent = "orders";
    ASSERT_TRUE(store->create_topic_on(parent, NodeId("a")).is_ok());
    ASSERT_TRUE(store->create_topic_on(child, NodeId("a")).is_ok());
    Controller controller(*store, membership, clock, NodeId("a"),
                          ControllerOptions{.tick = 200ms, .leadership_check = 20ms});
    controller.start();
    EXPECT_TRUE(eventually([] { return colocated_gauge() == 2; })) << colocated_gauge();
    controller.stop();
    EXPECT_EQ(colocated_gauge(), 0);
}

// Rule: an election observer is told the current leader and then each new one, once each.
TEST_F(ClusterEtcdTest, ObserveReportsEachLeaderOnce) {
    NodeView a(transport_, etcd_.endpoint());
    Mutex mutex;
    std::vector<std::string> seen;
    auto observer = a.client.observe("/test/election", [&](const meta::LeaderInfo& leader) {
        MutexLock lock(mutex);
        seen.push_back(leader.value);
    });
    auto seen_count = [&] {
        MutexLock lock(mutex);
        return seen.size();
    };
    int64_t lease_a = a.client.lease_grant(10).value();
    int64_t lease_b = a.client.lease_grant(10).value();
    meta::LeaderInfo first =
        a.client.campaign("/test/election", lease_a, "a", Millis(5'000)).value();
    ASSERT_TRUE(eventually([&] { return seen_count() == 1; }));
    std::thread second([&] {
        EXPECT_TRUE(a.client.campaign("/test/election", lease_b, "b", Millis(10'000)).is_ok());
    });
    ASSERT_TRUE(a.client.resign(first).is_ok());
    second.join();
    ASSERT_TRUE(eventually([&] { return seen_count() == 2; }));
    observer.reset();
    MutexLock lock(mutex);
    EXPECT_EQ(seen, (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace narad::cluster
