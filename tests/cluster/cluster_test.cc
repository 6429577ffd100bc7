// Whole-cluster tests: three real `narad serve` processes on 127.0.0.1 sharing an etcd metastore
// (each hosts a voter). They check placement, any-node produce and consume, and what survives a
// SIGKILL or SIGSTOP of a node, of the controller and of an etcd voter: no accepted message lost,
// produce answering 202 on the survivors, one controller, one creation per topic. Failover
// tunables are short (lease TTL 2 s, dead after 3 s, controller tick 500 ms), so each test takes
// seconds; every wait is on a condition with a deadline.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "base/mutex.h"
#include "cluster/harness.h"
#include "cluster/ledger.h"

namespace narad::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

ClusterOptions three_nodes() {
    ClusterOptions options;
    options.nodes = 3;
    options.env = fast_failover_env();
    return options;
}

// One unkeyed produce of {"id":N}; the response (or the transport error).
Result<net::HttpResponse> produce(net::HttpClient& client, const std::string& topic, int id) {
    return client.post("/v1/topics/" + topic + "/produce", "{\"id\":" + std::to_string(id) + "}");
}

std::string describe(const Result<net::HttpResponse>& response) {
    if (!response.is_ok()) return "transport: " + response.status().to_string();
    return std::to_string(response->status) + " " + response->body;
}

// Consumes through every node in `nodes` at once until producing is over (`producing` false or
// null) and nothing accepted is missing, or `timeout` passes; returns how many messages each node
// delivered (by node index).
std::map<int, int> drain(Cluster& cluster, const std::vector<int>& nodes, const std::string& topic,
                         Ledger& ledger, milliseconds timeout,
                         const std::atomic<bool>* producing = nullptr) {
    std::atomic<bool> done{false};
    Mutex mutex;
    std::map<int, int> delivered;
    std::vector<std::thread> threads;
    for (int index : nodes) {
        threads.emplace_back([&, index] {
            auto client = cluster.node(index).client(seconds(15));
            int count = 0;
            while (!done) {
                int got = consume_and_ack(client, topic, ledger);
                if (got > 0) count += got;
                if (got < 0) client = cluster.node(index).client(seconds(15));
            }
            MutexLock lock(mutex);
            delivered[index] = count;
        });
    }
    eventually([&] { return (producing == nullptr || !*producing) && ledger.nothing_lost(); },
               timeout, milliseconds(100));
    done = true;
    for (auto& thread : threads) thread.join();
    return delivered;
}

// GET /v1/topics/{topic} through node `index` once the node knows the topic.
std::optional<json> describe_topic(Cluster& cluster, int index, const std::string& topic,
                                   size_t partitions) {
    std::optional<json> found;
    eventually(
        [&] {
            auto client = cluster.node(index).client(seconds(5));
            found = get_json(client, "/v1/topics/" + topic);
            return found && (*found)["partition_stats"].size() == partitions;
        },
        seconds(20), milliseconds(100));
    return found;
}

// Partitions per owner, from a topic's partition_stats.
std::map<std::string, int> owners_of(const json& topic) {
    std::map<std::string, int> owners;
    for (const auto& stats : topic["partition_stats"]) {
        ++owners[stats.value("owner_node", std::string("(none)"))];
    }
    return owners;
}

// A cluster the tests below share because they change nothing but data.
class HealthyClusterTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        cluster_ = new Cluster(three_nodes());
        cluster_->start();
    }
    static void TearDownTestSuite() {
        delete cluster_;
        cluster_ = nullptr;
    }
    void SetUp() override {
        ASSERT_EQ(cluster_->live().size(), 3u) << "the shared cluster did not start";
    }
    static Cluster* cluster_;
};

Cluster* HealthyClusterTest::cluster_ = nullptr;

// Rule: a 12-partition topic on 3 live nodes gets 4 partitions per node, and every node reports
// the same owners (owner_node) and owned_partitions = 4 for each member.
TEST_F(HealthyClusterTest, TwelvePartitionsSpreadFourPerNode) {
    Cluster& cluster = *cluster_;
    {
        auto client = cluster.node(1).client();
        create_topic(client, "spread", 12);
    }
    const std::map<std::string, int> even = {{"n1", 4}, {"n2", 4}, {"n3", 4}};
    std::optional<json> first;
    for (int index = 1; index <= 3; ++index) {
        auto topic = describe_topic(cluster, index, "spread", 12);
        ASSERT_TRUE(topic) << "n" << index << " does not describe the topic";
        EXPECT_EQ(owners_of(*topic), even) << "as n" << index << " sees it: " << topic->dump();
        if (!first) {
            first = topic;
            continue;
        }
        for (size_t p = 0; p < 12; ++p) {
            EXPECT_EQ((*topic)["partition_stats"][p]["owner_node"],
                      (*first)["partition_stats"][p]["owner_node"])
                << "n" << index << " disagrees with n1 on partition " << p;
        }
    }
    for (int index = 1; index <= 3; ++index) {
        std::map<std::string, int> owned;
        bool spread = eventually(
            [&] {
                owned = owned_partitions(cluster, index);
                return owned == even;
            },
            seconds(20), milliseconds(100));
        EXPECT_TRUE(spread) << "owned_partitions as n" << index
                            << " sees them: " << json(owned).dump();
    }
}

// Rule: messages produced through every node are consumed (and acked) through every node with
// nothing lost; every produce answers 202 and every node's consumer receives messages.
TEST_F(HealthyClusterTest, ProduceAndConsumeThroughEveryNode) {
    Cluster& cluster = *cluster_;
    constexpr int kPerNode = 1'500;
    {
        auto client = cluster.node(2).client();
        create_topic(client, "everywhere", 6);
    }
    for (int index = 1; index <= 3; ++index) {
        ASSERT_TRUE(describe_topic(cluster, index, "everywhere", 6));
    }
    Ledger ledger(3 * kPerNode);
    std::atomic<int> refused{0};
    Mutex mutex;
    std::string first_refusal;
    std::vector<std::thread> producers;
    for (int index = 1; index <= 3; ++index) {
        producers.emplace_back([&, index] {
            auto client = cluster.node(index).client(seconds(10));
            for (int i = 0; i < kPerNode; ++i) {
                int id = (index - 1) * kPerNode + i;
                auto response = produce(client, "everywhere", id);
                if (response.is_ok() && response->status == 202) {
                    ledger.accept(id);
                    continue;
                }
                if (refused++ == 0) {
                    MutexLock lock(mutex);
                    first_refusal = "n" + std::to_string(index) + ": " + describe(response);
                }
                client = cluster.node(index).client(seconds(10));
            }
        });
    }
    // Consumers run while the producers do: the drain ends once producing ended and nothing is
    // missing.
    std::atomic<bool> producing{true};
    std::thread joiner([&] {
        for (auto& thread : producers) thread.join();
        producing = false;
    });
    std::map<int, int> delivered =
        drain(cluster, {1, 2, 3}, "everywhere", ledger, seconds(120), &producing);
    joiner.join();
    std::printf("%s; per node delivered n1=%d n2=%d n3=%d\n", ledger.summary().c_str(),
                delivered[1], delivered[2], delivered[3]);
    EXPECT_EQ(refused.load(), 0) << "first refusal: " << first_refusal;
    EXPECT_EQ(ledger.accepted_count(), 3 * kPerNode);
    EXPECT_TRUE(ledger.nothing_lost()) << ledger.summary();
    EXPECT_EQ(ledger.strays(), 0);
    for (int index = 1; index <= 3; ++index) {
        EXPECT_GT(delivered[index], 0) << "nothing was consumed through n" << index;
    }
}

// Rule: a topic-wide consume through one node reaches the partitions owned elsewhere even while
// the node's own partitions never run dry (each other owner gets a turn at least every 50 ms of
// consumes; the order itself is OwnerTurnsTest's).
TEST_F(HealthyClusterTest, TopicWideConsumeReachesEveryOwnerWhileLocalPartitionsStayFull) {
    Cluster& cluster = *cluster_;
    constexpr int kPartitions = 6;
    constexpr int kPerPartition = 1'000;
    constexpr int kMaxConsumes = 300;  // fewer than n1's own 2,000 messages
    auto client = cluster.node(1).client(seconds(10));
    create_topic(client, "turns", kPartitions);
    ASSERT_TRUE(describe_topic(cluster, 1, "turns", kPartitions));
    for (int p = 0; p < kPartitions; ++p) {
        for (int sent = 0; sent < kPerPartition; sent += 100) {
            json batch = {{"messages", json::array()}};
            for (int i = 0; i < 100; ++i) {
                batch["messages"].push_back({{"payload", {{"id", sent + i}}}, {"partition", p}});
            }
            auto response = client.post("/v1/topics/turns/produce/batch", batch.dump());
            ASSERT_TRUE(response.is_ok() && response->status == 202) << describe(response);
        }
    }
    std::optional<json> topic;
    bool committed = eventually(
        [&] {
            topic = describe_topic(cluster, 1, "turns", kPartitions);
            if (!topic) return false;
            for (const auto& stats : (*topic)["partition_stats"]) {
                if (stats.value("high_watermark", 0) < kPerPartition) return false;
            }
            return true;
        },
        seconds(30), milliseconds(100));
    ASSERT_TRUE(committed) << (topic ? topic->dump() : "no topic");
    std::map<int, std::string> owner;
    for (const auto& stats : (*topic)["partition_stats"]) {
        owner[stats["index"].get<int>()] = stats["owner_node"].get<std::string>();
    }
    std::map<std::string, int> served;
    for (int i = 0; i < kMaxConsumes && served.size() < 3; ++i) {
        auto response = client.get("/v1/topics/turns/consume");
        ASSERT_TRUE(response.is_ok() && response->status == 200) << describe(response);
        auto message = json::parse(response->body);
        ++served[owner.at(message["partition"].get<int>())];
    }
    for (const std::string node : {"n1", "n2", "n3"}) {
        EXPECT_GT(served[node], 0) << "consumes through n1 by owner: " << json(served).dump();
    }
}

// Rule: while one node is SIGKILLed (and until it is seen dead and after), unkeyed produce through
// the two others keeps answering 202; after the node restarts, everything accepted anywhere —
// including what the killed node accepted before it died — is consumed: lost = 0.
TEST(ClusterFailoverTest, KillNodeUnderProduceLoadLosesNothing) {
    Cluster cluster(three_nodes());
    ASSERT_NO_FATAL_FAILURE(cluster.start());
    {
        auto client = cluster.node(1).client();
        create_topic(client, "load", 12);
    }
    for (int index = 1; index <= 3; ++index)
        ASSERT_TRUE(describe_topic(cluster, index, "load", 12));
    // Kill a node that is not the controller: this test is about data, the next ones about
    // control.
    int controller = cluster.wait_for_controller();
    ASSERT_NE(controller, 0);
    int victim = controller == 3 ? 2 : 3;
    std::vector<int> survivors;
    for (int index = 1; index <= 3; ++index) {
        if (index != victim) survivors.push_back(index);
    }
    const std::string victim_id = cluster.node(victim).node_id();

    constexpr int kCapacity = 200'000;
    Ledger ledger(kCapacity);
    std::atomic<int> next_id{0};
    std::atomic<bool> stop{false};
    std::atomic<int> failures{0};
    Mutex mutex;
    std::vector<std::string> failure_samples;
    std::vector<std::thread> producers;
    for (int index : survivors) {
        producers.emplace_back([&, index] {
            auto client = cluster.node(index).client(seconds(10));
            while (!stop) {
                int id = next_id++;
                if (id >= kCapacity) break;
                auto response = produce(client, "load", id);
                if (response.is_ok() && response->status == 202) {
                    ledger.accept(id);
                    continue;
                }
                ++failures;
                MutexLock lock(mutex);
                if (failure_samples.size() < 5) {
                    failure_samples.push_back("n" + std::to_string(index) + ": " +
                                              describe(response));
                }
                client = cluster.node(index).client(seconds(10));
            }
        });
    }
    // The victim produces too until it dies: what it accepted must survive the kill.
    std::atomic<bool> victim_down{false};
    std::thread victim_producer([&] {
        auto client = cluster.node(victim).client(seconds(5));
        while (!stop && !victim_down) {
            int id = next_id++;
            if (id >= kCapacity) break;
            auto response = produce(client, "load", id);
            if (response.is_ok() && response->status == 202) {
                ledger.accept(id);
            } else {
                break;  // the kill
            }
        }
    });
    auto accepted_grows_by = [&](int count) {
        int target = ledger.accepted_count() + count;
        return eventually([&] { return ledger.accepted_count() >= target; }, seconds(60),
                          milliseconds(20));
    };
    EXPECT_TRUE(accepted_grows_by(1'000));
    cluster.kill(victim);
    victim_down = true;
    std::printf("killed %s at %d accepted\n", victim_id.c_str(), ledger.accepted_count());
    EXPECT_TRUE(cluster.wait_member_status(survivors[0], victim_id, "dead"))
        << victim_id << " was never reported dead";
    // Produce goes on while the owner of a third of the partitions is dead.
    EXPECT_TRUE(accepted_grows_by(1'000));
    std::printf("restarting %s at %d accepted\n", victim_id.c_str(), ledger.accepted_count());
    ASSERT_NO_FATAL_FAILURE(cluster.restart(victim));
    EXPECT_TRUE(cluster.wait_member_status(survivors[0], victim_id, "alive"));
    EXPECT_TRUE(accepted_grows_by(500));
    stop = true;
    for (auto& thread : producers) thread.join();
    victim_producer.join();

    std::map<int, int> delivered = drain(cluster, {1, 2, 3}, "load", ledger, seconds(120));
    std::printf("%s; per node delivered n1=%d n2=%d n3=%d\n", ledger.summary().c_str(),
                delivered[1], delivered[2], delivered[3]);
    std::string samples;
    for (const auto& sample : failure_samples) samples += "\n  " + sample;
    EXPECT_EQ(failures.load(), 0) << "produce through a survivor did not answer 202:" << samples;
    EXPECT_TRUE(ledger.nothing_lost()) << ledger.summary();
    EXPECT_EQ(ledger.strays(), 0);
}

// Rule: when the controller is SIGKILLed another node holds the election within 20 s, all live
// nodes agree on it, and topics created afterwards through each live node are placed on live
// nodes only, evenly.
TEST(ClusterFailoverTest, KillControllerAnotherTakesOver) {
    Cluster cluster(three_nodes());
    ASSERT_NO_FATAL_FAILURE(cluster.start());
    int old_controller = cluster.wait_for_controller();
    ASSERT_NE(old_controller, 0) << "no controller agreed on";
    const std::string old_id = cluster.node(old_controller).node_id();
    cluster.kill(old_controller);
    int new_controller = cluster.wait_for_controller(old_controller, seconds(20));
    ASSERT_NE(new_controller, 0) << "no node took over from " << old_id << " within 20 s";
    std::printf("controller %s -> %s\n", old_id.c_str(),
                cluster.node(new_controller).node_id().c_str());
    ASSERT_TRUE(cluster.wait_member_status(new_controller, old_id, "dead"));

    std::vector<int> live = cluster.live();
    std::set<std::string> live_ids;
    for (int index : live) live_ids.insert(cluster.node(index).node_id());
    for (int through : live) {
        const std::string name = "after-kill-" + std::to_string(through);
        auto client = cluster.node(through).client();
        auto response = client.post("/v1/topics", json{{"name", name}, {"partitions", 6}}.dump());
        ASSERT_TRUE(response.is_ok()) << response.status().to_string();
        EXPECT_EQ(response->status, 201) << "create through n" << through << ": " << response->body;
        for (int index : live) {
            auto topic = describe_topic(cluster, index, name, 6);
            ASSERT_TRUE(topic) << "n" << index << " does not describe " << name;
            std::map<std::string, int> owners = owners_of(*topic);
            for (const auto& [owner, count] : owners) {
                EXPECT_TRUE(live_ids.contains(owner))
                    << name << " partition owned by " << owner << ", not a live node";
                EXPECT_EQ(count, 3) << name << " is not spread evenly: " << topic->dump();
            }
        }
    }
}

// Rule: with an owner dead, GET topic on a survivor still answers 200, marked `partial`, with a
// zero placeholder (`status` owner_unavailable, `owner_liveness` dead) for each of the dead node's
// partitions and the live owners' real statistics; `narad server report` marks the topic
// `[k of n partitions unavailable]`, `narad replay` of a placeholder fails naming its owner, and a
// consume pinned there is refused 503 with Retry-After: 1.
TEST(ClusterFailoverTest, TopicReadWithAnOwnerDownIsPartial) {
    Cluster cluster(three_nodes());
    ASSERT_NO_FATAL_FAILURE(cluster.start());
    auto client = cluster.node(1).client();
    create_topic(client, "partial", 6);
    for (int id = 0; id < 60; ++id) {
        auto response = produce(client, "partial", id);
        ASSERT_TRUE(response.is_ok() && response->status == 202) << describe(response);
    }
    auto whole = describe_topic(cluster, 1, "partial", 6);
    ASSERT_TRUE(whole);
    const std::string dead_id = cluster.node(3).node_id();
    ASSERT_EQ(owners_of(*whole)[dead_id], 2) << whole->dump();
    ASSERT_TRUE(eventually(
        [&] {
            auto topic = get_json(client, "/v1/topics/partial");
            if (!topic) return false;
            int64_t messages = 0;
            for (const auto& stats : (*topic)["partition_stats"]) {
                messages += stats.value("high_watermark", int64_t{0});
            }
            return messages == 60;
        },
        seconds(30)));
    EXPECT_FALSE(whole->contains("partial")) << whole->dump();

    cluster.kill(3);
    ASSERT_TRUE(cluster.wait_member_status(1, dead_id, "dead"));
    std::optional<json> partial;
    ASSERT_TRUE(eventually(
        [&] {
            partial = get_json(client, "/v1/topics/partial");
            return partial && partial->value("partial", false);
        },
        seconds(20)))
        << (partial ? partial->dump() : "no answer");
    int placeholders = 0;
    int placeholder_index = -1;
    for (const auto& stats : (*partial)["partition_stats"]) {
        if (stats.value("owner_node", "") == dead_id) {
            ++placeholders;
            placeholder_index = stats.value("index", -1);
            EXPECT_EQ(stats.value("status", ""), "owner_unavailable") << stats.dump();
            EXPECT_EQ(stats.value("owner_liveness", ""), "dead") << stats.dump();
            EXPECT_EQ(stats.value("high_watermark", int64_t{-1}), 0) << stats.dump();
        } else {
            EXPECT_EQ(stats.value("status", ""), "ok") << stats.dump();
            EXPECT_GT(stats.value("high_watermark", int64_t{0}), 0) << stats.dump();
        }
    }
    EXPECT_EQ(placeholders, 2) << partial->dump();

    // A consume pinned to such a partition is refused 503 naming the owner, with Retry-After: 1.
    auto refused =
        client.get("/v1/topics/partial/consume?partition=" + std::to_string(placeholder_index));
    ASSERT_TRUE(refused.is_ok()) << refused.status().to_string();
    EXPECT_EQ(refused->status, 503) << refused->body;
    EXPECT_NE(refused->body.find(dead_id + " is down"), std::string::npos) << refused->body;
    bool retry_after = false;
    for (const auto& [name, value] : refused->headers) {
        retry_after |= name == "retry-after" && value == "1";
    }
    EXPECT_TRUE(retry_after) << "no Retry-After: 1 on the owner-down refusal";

    const std::string server =
        "-s http://" + cluster.node(1).api_address() + " -u admin -p " + kTestAdminPassword;
    auto [report_status, report] = run_narad_cli(server + " server report");
    EXPECT_EQ(report_status, 0) << report;
    EXPECT_NE(report.find("[2 of 6 partitions unavailable]"), std::string::npos) << report;
    EXPECT_NE(report.find("1 topic(s) partial"), std::string::npos) << report;
    auto [replay_status, replay] =
        run_narad_cli(server + " replay partial --partition " + std::to_string(placeholder_index));
    EXPECT_NE(replay_status, 0) << replay;
    EXPECT_NE(replay.find("partition " + std::to_string(placeholder_index) +
                          " of \"partial\" is unavailable: its owner " + dead_id + " is dead"),
              std::string::npos)
        << replay;
}

// Rule: a controller SIGSTOPped past its lease loses the election to another node; after SIGCONT
// it does not act as controller (every node, itself included, names the new one), and a topic
// created through it is created once or refused cleanly — never twice (one incarnation on every
// node, a second create is 409, owned_partitions add up to the partitions that exist).
TEST(ClusterFailoverTest, PausedControllerIsDeposedAndStaysDeposed) {
    Cluster cluster(three_nodes());
    ASSERT_NO_FATAL_FAILURE(cluster.start());
    int old_controller = cluster.wait_for_controller();
    ASSERT_NE(old_controller, 0);
    const std::string old_id = cluster.node(old_controller).node_id();
    cluster.pause(old_controller);
    int new_controller = cluster.wait_for_controller(old_controller, seconds(20));
    // Resume before asserting so a failure does not leave a stopped process behind.
    bool took_over = new_controller != 0;
    if (took_over) {
        // Let the new controller's term be visible past the old lease before waking the old one.
        EXPECT_TRUE(cluster.wait_member_status(new_controller, old_id, "dead"));
    }
    cluster.resume(old_controller);
    ASSERT_TRUE(took_over) << "no node took over from the paused " << old_id;
    const std::string new_id = cluster.node(new_controller).node_id();
    std::printf("controller %s -> %s\n", old_id.c_str(), new_id.c_str());

    bool settled = eventually(
        [&] {
            for (int index = 1; index <= 3; ++index) {
                if (cluster.controller_seen_by(index) != new_id) return false;
            }
            auto old_status = cluster.status(old_controller);
            return old_status && !old_status->value("is_controller", true);
        },
        seconds(20), milliseconds(100));
    ASSERT_TRUE(settled) << "after SIGCONT: n1 sees " << cluster.controller_seen_by(1)
                         << ", n2 sees " << cluster.controller_seen_by(2) << ", n3 sees "
                         << cluster.controller_seen_by(3) << "; " << old_id
                         << "'s status: " << cluster.status(old_controller).value_or(json()).dump();
    ASSERT_EQ(cluster.controller(), new_controller);

    const std::string name = "after-pause";
    auto client = cluster.node(old_controller).client();
    auto created = client.post("/v1/topics", json{{"name", name}, {"partitions", 6}}.dump());
    ASSERT_TRUE(created.is_ok()) << "create through the deposed controller: "
                                 << created.status().to_string();
    std::printf("create through the deposed %s: %d %s", old_id.c_str(), created->status,
                created->body.c_str());
    if (created->status != 201) {
        // A clean refusal: an error status with an error body.
        EXPECT_GE(created->status, 400);
        EXPECT_NE(created->body.find("\"error\""), std::string::npos) << created->body;
        return;
    }
    // One incarnation everywhere: every node describes the same topic with the same owners.
    std::optional<json> first;
    for (int index = 1; index <= 3; ++index) {
        auto topic = describe_topic(cluster, index, name, 6);
        ASSERT_TRUE(topic) << "n" << index << " does not describe " << name;
        if (!first) {
            first = topic;
            continue;
        }
        for (const char* field : {"created_at", "incarnation", "partitions"}) {
            EXPECT_EQ(topic->value(field, json()), first->value(field, json()))
                << field << " differs between n1 and n" << index;
        }
        EXPECT_EQ(owners_of(*topic), owners_of(*first));
    }
    auto again = cluster.node(new_controller)
                     .client()
                     .post("/v1/topics", json{{"name", name}, {"partitions", 6}}.dump());
    ASSERT_TRUE(again.is_ok());
    EXPECT_EQ(again->status, 409) << again->body;
    // Exactly 6 partitions are owned in the whole cluster (this is the only topic).
    for (int index = 1; index <= 3; ++index) {
        std::map<std::string, int> owned;
        bool adds_up = eventually(
            [&] {
                owned = owned_partitions(cluster, index);
                int total = 0;
                for (const auto& [id, count] : owned) total += count;
                return total == 6;
            },
            seconds(10), milliseconds(100));
        EXPECT_TRUE(adds_up) << "owned_partitions as n" << index
                             << " sees them: " << json(owned).dump();
    }
}

// Rule: with the node hosting the etcd leader SIGKILLed, the two remaining voters keep quorum:
// a controller is (re)established, a topic can be created, and messages produced through both
// survivors are all consumed through them.
TEST(ClusterFailoverTest, KillEtcdLeaderVoterClusterKeepsWorking) {
    Cluster cluster(three_nodes());
    ASSERT_NO_FATAL_FAILURE(cluster.start());
    int leader = 0;
    ASSERT_TRUE(eventually([&] { return (leader = cluster.etcd_leader()) != 0; }, seconds(10)))
        << "no etcd member says it leads";
    const std::string leader_id = cluster.node(leader).node_id();
    std::printf("killing %s, host of the etcd leader (controller: %s)\n", leader_id.c_str(),
                cluster.controller_seen_by(leader).c_str());
    cluster.kill(leader);
    std::vector<int> survivors = cluster.live();
    ASSERT_EQ(survivors.size(), 2u);
    int controller = cluster.wait_for_controller(leader, seconds(30));
    ASSERT_NE(controller, 0) << "no controller among the survivors";
    ASSERT_TRUE(cluster.wait_member_status(survivors[0], leader_id, "dead"));
    {
        auto client = cluster.node(survivors[0]).client();
        create_topic(client, "quorum", 6);
    }
    for (int index : survivors) ASSERT_TRUE(describe_topic(cluster, index, "quorum", 6));

    constexpr int kPerNode = 300;
    Ledger ledger(2 * kPerNode);
    int refused = 0;
    std::string first_refusal;
    for (size_t s = 0; s < survivors.size(); ++s) {
        auto client = cluster.node(survivors[s]).client();
        for (int i = 0; i < kPerNode; ++i) {
            int id = static_cast<int>(s) * kPerNode + i;
            auto response = produce(client, "quorum", id);
            if (response.is_ok() && response->status == 202) {
                ledger.accept(id);
            } else if (refused++ == 0) {
                first_refusal = describe(response);
            }
        }
    }
    EXPECT_EQ(refused, 0) << "first refusal: " << first_refusal;
    drain(cluster, survivors, "quorum", ledger, seconds(60));
    std::printf("%s\n", ledger.summary().c_str());
    EXPECT_EQ(ledger.accepted_count(), 2 * kPerNode);
    EXPECT_TRUE(ledger.nothing_lost()) << ledger.summary();
    // The dead voter is still a member: the metastore runs on 2 of 3.
    auto status = cluster.status(survivors[0]);
    ASSERT_TRUE(status);
    EXPECT_EQ((*status)["etcd"]["members"].size(), 3u) << status->dump();
}

bool topic_directory_exists(Cluster& cluster, int index, const std::string& topic) {
    return std::filesystem::exists(cluster.node(index).data_directory() + "/topics/" + topic);
}

// Rule: deleting a topic removes its data on every node, and a node that was down when it was
// deleted removes its copy when it returns; a recreated topic of the same name starts empty there.
TEST(ClusterFailoverTest, DeletePurgesEveryNodeIncludingOneThatWasDown) {
    Cluster cluster(three_nodes());
    ASSERT_NO_FATAL_FAILURE(cluster.start());
    {
        auto client = cluster.node(1).client();
        create_topic(client, "gone", 6);
        for (int id = 0; id < 60; ++id) {
            auto response = produce(client, "gone", id);
            ASSERT_TRUE(response.is_ok() && response->status == 202) << describe(response);
        }
    }
    // Every node owns two partitions, so every node gets a directory once its commits land.
    for (int index = 1; index <= 3; ++index) {
        ASSERT_TRUE(eventually([&] { return topic_directory_exists(cluster, index, "gone"); }))
            << "n" << index << " never stored its partitions";
    }
    cluster.kill(3);
    {
        auto client = cluster.node(1).client();
        auto removed = http(client, "DELETE", "/v1/topics/gone");
        ASSERT_TRUE(removed.is_ok() && removed->status == 204) << describe(removed);
    }
    for (int index = 1; index <= 2; ++index) {
        EXPECT_TRUE(eventually([&] { return !topic_directory_exists(cluster, index, "gone"); }))
            << "n" << index << " kept the deleted topic's data";
    }
    EXPECT_TRUE(topic_directory_exists(cluster, 3, "gone"));  // down: nothing could reach it
    {
        auto client = cluster.node(1).client();
        create_topic(client, "gone", 6);  // a new incarnation while n3 is still down
    }
    ASSERT_NO_FATAL_FAILURE(cluster.restart(3));
    // n3 holds the old incarnation's records: they must never be served under the new topic.
    auto client = cluster.node(3).client();
    auto consumed = http(client, "GET", "/v1/topics/gone/consume?max=100&wait=1s");
    ASSERT_TRUE(consumed.is_ok());
    EXPECT_EQ(consumed->status, 204) << "the recreated topic served old data: " << consumed->body;
}

// Rule: nodes beyond cluster.voters join as etcd clients only, take their share of partitions
// and serve produce and consume like the others.
TEST(ClusterGrowthTest, FourthNodeJoinsAsAnEtcdClient) {
    ClusterOptions options = three_nodes();
    options.nodes = 4;
    Cluster cluster(options);
    ASSERT_NO_FATAL_FAILURE(cluster.start());
    auto status = cluster.status(4);
    ASSERT_TRUE(status);
    EXPECT_EQ((*status)["etcd"]["members"].size(), 3u) << status->dump();
    std::map<std::string, std::string> roles;
    for (const auto& member : (*status)["members"]) {
        roles[member.value("id", "")] = member.value("etcd_role", "");
    }
    EXPECT_EQ(roles, (std::map<std::string, std::string>{
                         {"n1", "voter"}, {"n2", "voter"}, {"n3", "voter"}, {"n4", "none"}}));
    {
        auto client = cluster.node(4).client();
        create_topic(client, "wide", 8);
    }
    auto topic = describe_topic(cluster, 4, "wide", 8);
    ASSERT_TRUE(topic);
    EXPECT_EQ(owners_of(*topic),
              (std::map<std::string, int>{{"n1", 2}, {"n2", 2}, {"n3", 2}, {"n4", 2}}));
    Ledger ledger(200);
    {
        auto client = cluster.node(4).client();
        for (int id = 0; id < 200; ++id) {
            auto response = produce(client, "wide", id);
            ASSERT_TRUE(response.is_ok() && response->status == 202) << describe(response);
            ledger.accept(id);
        }
    }
    drain(cluster, {4}, "wide", ledger, seconds(60));
    EXPECT_TRUE(ledger.nothing_lost()) << ledger.summary();
}

}  // namespace
}  // namespace narad::testing
