// Partition-move tests (docs/moves.md; spec "Rebalance and decommission"): real `narad serve`
// processes on 127.0.0.1, a node joining while producers and consumers run, and the planner moving
// the surplus partitions onto it. They check the planner's plan (the fewest moves, all to the new
// node), that no accepted message is lost across a move (the ledger), produce answering 202
// throughout, and the hard cases: a copy slower than the writes (a non-converged cutover), a
// freeze that lapses mid-drain, a re-plan between the copy and the flip, and a SIGKILL of either
// side during the copy. Failover tunables are short (lease TTL 2 s, dead after 3 s, controller
// tick 500 ms); every wait is on a condition with a deadline. When a test fails, it prints the
// move lines of the nodes' logs (NARAD_TEST_KEEP=1 keeps the whole data directories).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "cluster/harness.h"
#include "cluster/ledger.h"

namespace narad::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr const char* kCompleted = "narad_moves_total{outcome=\"completed\"}";
constexpr const char* kEnded = "narad_moves_total{outcome=\"ended\"}";
constexpr const char* kFreezeCount = "narad_moves_freeze_duration_seconds_count";
constexpr const char* kFreezeSum = "narad_moves_freeze_duration_seconds_sum";
constexpr const char* kNonConverged = "narad_moves_non_converged_total";
constexpr const char* kRerouted = "narad_dispatcher_rerouted_records_total";

// `nodes` nodes (the first three host etcd voters) with the fast failover tunables (their
// controller tick, 500 ms, is also the planner's), plus `env` on every node.
ClusterOptions move_cluster(int nodes, const std::map<std::string, std::string>& env = {}) {
    ClusterOptions options;
    options.nodes = nodes;
    options.env = fast_failover_env();
    for (const auto& [key, value] : env) options.env[key] = value;
    return options;
}

std::string describe(const Result<net::HttpResponse>& response) {
    if (!response.is_ok()) return "transport: " + response.status().to_string();
    return std::to_string(response->status) + " " + response->body;
}

// ---- The metastore's view ----------------------------------------------------------------------

std::string assignment_key(const std::string& topic, int partition) {
    char index[16];
    std::snprintf(index, sizeof index, "%05d", partition);
    return "/narad/narad/assign/" + topic + "/" + index;
}

struct Assignment {
    std::string owner;
    std::string target;
};

std::optional<Assignment> read_assignment(const Cluster& cluster, const std::string& topic,
                                          int partition) {
    auto value = cluster.etcd_get(assignment_key(topic, partition));
    if (!value || !value->found) return std::nullopt;
    json body = json::parse(value->value, nullptr, false);
    if (!body.is_object()) return std::nullopt;
    return Assignment{body.value("owner", ""), body.value("target", "")};
}

// Every partition's assignment, or an empty map when one could not be read.
std::map<int, Assignment> read_assignments(const Cluster& cluster, const std::string& topic,
                                           int partitions) {
    std::map<int, Assignment> out;
    for (int p = 0; p < partitions; ++p) {
        auto assignment = read_assignment(cluster, topic, p);
        if (!assignment) return {};
        out[p] = *assignment;
    }
    return out;
}

std::map<std::string, int> owner_counts(const std::map<int, Assignment>& assignments) {
    std::map<std::string, int> counts;
    for (const auto& [p, assignment] : assignments) ++counts[assignment.owner];
    return counts;
}

// Per-member owned_partitions, from one node's /v1/cluster/members.
std::map<std::string, int> owned_partitions(const Cluster& cluster, int observer) {
    std::map<std::string, int> owned;
    auto body = cluster.members(observer);
    if (!body) return owned;
    for (const auto& member : (*body)["members"]) {
        owned[member.value("id", "")] = member.value("owned_partitions", -1);
    }
    return owned;
}

struct Move {
    std::string topic;
    int partition = 0;
    std::string from;
    std::string to;
    auto operator<=>(const Move&) const = default;
};

std::string to_string(const Move& move) {
    return move.topic + "/" + std::to_string(move.partition) + " " + move.from + "->" + move.to;
}

// GET /v1/cluster/moves through node `observer` (with ?detail=true when asked): the move entries,
// or nullopt when the node does not answer.
std::optional<json> moves_json(Cluster& cluster, int observer, bool detail = false) {
    auto client = cluster.node(observer).client(seconds(5));
    auto body = get_json(client, detail ? "/v1/cluster/moves?detail=true" : "/v1/cluster/moves");
    if (!body || !body->contains("moves") || !(*body)["moves"].is_array()) return std::nullopt;
    return (*body)["moves"];
}

std::optional<std::vector<Move>> list_moves(Cluster& cluster, int observer) {
    auto entries = moves_json(cluster, observer);
    if (!entries) return std::nullopt;
    std::vector<Move> out;
    for (const auto& entry : *entries) {
        out.push_back(Move{entry.value("topic", ""), entry.value("partition", -1),
                           entry.value("from", ""), entry.value("to", "")});
    }
    return out;
}

// The detail entry of one move, as node `observer` reports it (nullopt: no such move).
std::optional<json> move_detail(Cluster& cluster, int observer, const Move& move) {
    auto entries = moves_json(cluster, observer, /*detail=*/true);
    if (!entries) return std::nullopt;
    for (const auto& entry : *entries) {
        if (entry.value("topic", "") == move.topic &&
            entry.value("partition", -1) == move.partition)
            return entry;
    }
    return std::nullopt;
}

// Whether the destination (node 4) reports `phase` for the move within a minute.
bool reaches_phase(Cluster& cluster, const Move& move, const std::string& phase) {
    return eventually(
        [&] {
            auto detail = move_detail(cluster, 4, move);
            return detail && detail->value("phase", "") == phase;
        },
        seconds(60), milliseconds(20));
}

// Waits until node `observer` lists exactly one move; returns it.
std::optional<Move> wait_single_move(Cluster& cluster, int observer, milliseconds timeout) {
    std::optional<Move> found;
    eventually(
        [&] {
            auto moves = list_moves(cluster, observer);
            if (!moves || moves->size() != 1) return false;
            found = moves->front();
            return true;
        },
        timeout, milliseconds(20));
    return found;
}

bool wait_no_moves(Cluster& cluster, int observer, milliseconds timeout) {
    return eventually(
        [&] {
            auto moves = list_moves(cluster, observer);
            return moves && moves->empty();
        },
        timeout, milliseconds(100));
}

// A counter or histogram series of a node's /metrics; 0 when the node has not created it yet.
double metric(Cluster& cluster, int index, const char* series) {
    return scrape_metric(cluster.node(index), series).value_or(0);
}

// Records polls of /v1/cluster/moves on a thread of its own: every move seen in flight.
class MoveWatcher {
  public:
    MoveWatcher(Cluster& cluster, int observer)
        : cluster_(cluster), observer_(observer), thread_([this] { run(); }) {}
    ~MoveWatcher() { stop(); }
    void stop() {
        stopping_ = true;
        if (thread_.joinable()) thread_.join();
    }
    std::set<Move> seen() {
        std::lock_guard lock(mutex_);
        return seen_;
    }

  private:
    void run() {
        while (!stopping_) {
            if (auto moves = list_moves(cluster_, observer_)) {
                std::lock_guard lock(mutex_);
                seen_.insert(moves->begin(), moves->end());
            }
            std::this_thread::sleep_for(milliseconds(50));  // the poll period
        }
    }

    Cluster& cluster_;
    int observer_;
    std::atomic<bool> stopping_{false};
    std::mutex mutex_;
    std::set<Move> seen_;  // GUARDED_BY(mutex_)
    std::thread thread_;
};

// ---- Logs ---------------------------------------------------------------------------------------

// The lines of a node's log (stdout and stderr) that contain `needle`, at most `limit` of them.
std::vector<std::string> log_lines(const NodeProcess& node, std::string_view needle,
                                   size_t limit = 40) {
    std::ifstream in(node.log_path());
    std::vector<std::string> out;
    std::string line;
    while (std::getline(in, line)) {
        if (line.find(needle) == std::string::npos) continue;
        out.push_back(line);
        if (out.size() > limit) out.erase(out.begin());
    }
    return out;
}

bool log_contains(const NodeProcess& node, std::string_view needle) {
    return !log_lines(node, needle, 1).empty();
}

// Every node's move lines, for a failure message.
std::string move_logs(Cluster& cluster) {
    std::string out;
    for (int index = 1; index <= cluster.size(); ++index) {
        for (const auto& line : log_lines(cluster.node(index), "move")) {
            out += "\n  n" + std::to_string(index) + ": " + line;
        }
    }
    return out;
}

// ---- Traffic
// -------------------------------------------------------------------------------------

// A message body: {"id":N} padded to about `pad_bytes` more.
std::string payload(int id, size_t pad_bytes) {
    std::string body = "{\"id\":" + std::to_string(id);
    if (pad_bytes > 0) body += ",\"pad\":\"" + std::string(pad_bytes, 'x') + "\"";
    return body + "}";
}

// One batch produce of `count` messages with ids from `first`, all to `partition`.
Result<net::HttpResponse> produce_batch(net::HttpClient& client, const std::string& topic,
                                        int partition, int first, int count, size_t pad_bytes) {
    std::string body = "{\"messages\":[";
    for (int i = 0; i < count; ++i) {
        if (i > 0) body += ',';
        body += "{\"partition\":" + std::to_string(partition) +
                ",\"payload\":" + payload(first + i, pad_bytes) + "}";
    }
    body += "]}";
    return client.post("/v1/topics/" + topic + "/produce/batch", body);
}

// Producers and consumers on threads of their own, through chosen nodes, recording into one
// ledger. Producers send unkeyed single produces of {"id":N} at a set rate and count every answer
// other than 202; consumers consume and ack until stopped.
class Traffic {
  public:
    Traffic(Cluster& cluster, std::string topic, Ledger& ledger, int first_id = 0)
        : cluster_(cluster), topic_(std::move(topic)), ledger_(ledger), next_id_(first_id) {}
    ~Traffic() {
        stop_producers();
        stop_consumers();
    }

    // Ids handed out so far are below this.
    int next_id() const { return next_id_.load(); }

    // Producers (100 per second each) and consumers through nodes 1 to 3.
    void through_first_three() {
        for (int index = 1; index <= 3; ++index) {
            produce_through(index, 100);
            consume_through(index);
        }
    }
    void produce_through(int index, int per_second) {
        producers_.emplace_back([this, index, per_second] {
            auto client = cluster_.node(index).client(seconds(10));
            auto next = Clock::now();
            while (!stop_producing_) {
                next += std::chrono::microseconds(1'000'000 / per_second);
                std::this_thread::sleep_until(next);  // the rate, not a synchronisation
                int id = next_id_++;
                if (id >= ledger_.capacity()) break;
                auto response = client.post("/v1/topics/" + topic_ + "/produce", payload(id, 0));
                if (response.is_ok() && response->status == 202) {
                    ledger_.accept(id);
                    continue;
                }
                note_refusal(index, describe(response));
                client = cluster_.node(index).client(seconds(10));
            }
        });
    }

    void consume_through(int index) {
        consumers_.emplace_back([this, index] {
            auto client = cluster_.node(index).client(seconds(15));
            while (!stop_consuming_) {
                int got = consume_and_ack(client, topic_, ledger_);
                if (got < 0) {
                    std::this_thread::sleep_for(milliseconds(100));  // retry pacing
                    client = cluster_.node(index).client(seconds(15));
                }
            }
        });
    }

    void stop_producers() {
        stop_producing_ = true;
        for (auto& thread : producers_) thread.join();
        producers_.clear();
    }

    void stop_consumers() {
        stop_consuming_ = true;
        for (auto& thread : consumers_) thread.join();
        consumers_.clear();
    }

    // Once the producers stopped: lets the consumers run until nothing accepted is missing or
    // `timeout` passes, then stops them; returns whether nothing is missing.
    bool drain(milliseconds timeout) {
        stop_producers();
        bool complete =
            eventually([&] { return ledger_.nothing_lost(); }, timeout, milliseconds(100));
        stop_consumers();
        return complete;
    }

    int refused() {
        std::lock_guard lock(mutex_);
        return refused_;
    }
    std::string refusal_samples() {
        std::lock_guard lock(mutex_);
        std::string out;
        for (const auto& sample : samples_) out += "\n  " + sample;
        return out;
    }

  private:
    void note_refusal(int index, std::string what) {
        std::lock_guard lock(mutex_);
        ++refused_;
        if (samples_.size() < 5) samples_.push_back("n" + std::to_string(index) + ": " + what);
    }

    Cluster& cluster_;
    std::string topic_;
    Ledger& ledger_;
    std::atomic<int> next_id_;
    std::atomic<bool> stop_producing_{false};
    std::atomic<bool> stop_consuming_{false};
    std::vector<std::thread> producers_;
    std::vector<std::thread> consumers_;
    std::mutex mutex_;
    int refused_ = 0;                   // GUARDED_BY(mutex_)
    std::vector<std::string> samples_;  // GUARDED_BY(mutex_)
};

// Waits until `count` more ids than now are accepted.
bool accepted_grows_by(Ledger& ledger, int count, milliseconds timeout = seconds(60)) {
    int target = ledger.accepted_count() + count;
    return eventually([&] { return ledger.accepted_count() >= target; }, timeout, milliseconds(20));
}

// Fills every partition of `topic` with `per_partition` messages of about `pad_bytes` each (ids
// from `first`, accepted into the ledger), through node `through`; returns the next free id.
int prefill(Cluster& cluster, int through, const std::string& topic, int partitions,
            int per_partition, size_t pad_bytes, Ledger& ledger, int first) {
    auto client = cluster.node(through).client(seconds(30));
    constexpr int kBatch = 32;
    int id = first;
    for (int p = 0; p < partitions; ++p) {
        for (int done = 0; done < per_partition; done += kBatch) {
            int count = std::min(kBatch, per_partition - done);
            auto response = produce_batch(client, topic, p, id, count, pad_bytes);
            EXPECT_TRUE(response.is_ok() && response->status == 202) << describe(response);
            if (response.is_ok() && response->status == 202) {
                for (int i = 0; i < count; ++i) ledger.accept(id + i);
            }
            id += count;
        }
    }
    return id;
}

// The partition's high watermark as node `index` reports it (-1 when it does not answer).
int64_t high_watermark(Cluster& cluster, int index, const std::string& topic, int partition) {
    auto client = cluster.node(index).client(seconds(5));
    auto body = get_json(client, "/v1/topics/" + topic);
    if (!body || !body->contains("partition_stats")) return -1;
    for (const auto& stats : (*body)["partition_stats"]) {
        if (stats.value("index", -1) == partition) return stats.value("high_watermark", -1);
    }
    return -1;
}

// Starts nodes 1-3, creates `topic` through node 1 and waits until its assignments are in the
// metastore; returns them.
std::map<int, Assignment> start_with_topic(Cluster& cluster, const std::string& topic,
                                           int partitions) {
    cluster.start_first(3);
    if (::testing::Test::HasFatalFailure()) return {};
    {
        auto client = cluster.node(1).client();
        create_topic(client, topic, partitions);
    }
    std::map<int, Assignment> assignments;
    eventually(
        [&] {
            assignments = read_assignments(cluster, topic, partitions);
            return !assignments.empty();
        },
        seconds(20), milliseconds(100));
    return assignments;
}

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

// One move of a 4-partition topic (2/1/1 on nodes 1-3) onto a joining node 4, with traffic
// through nodes 1-3; the fixture of the failure tests below.
struct OneMove {
    std::map<int, Assignment> initial;
    Move move;
    int source = 0;  // the move's source node index
};

OneMove start_one_move(Cluster& cluster, const std::string& topic) {
    OneMove out;
    out.initial = start_with_topic(cluster, topic, 4);
    EXPECT_EQ(out.initial.size(), 4u);
    if (out.initial.size() != 4u) return out;
    cluster.join(4);
    if (::testing::Test::HasFatalFailure()) return out;
    auto move = wait_single_move(cluster, 1, seconds(30));
    EXPECT_TRUE(move) << "no single move was planned: "
                      << moves_json(cluster, 1).value_or(json()).dump();
    if (!move) return out;
    out.move = *move;
    out.source = cluster.index_of(move->from);
    EXPECT_EQ(move->to, "n4");
    return out;
}

// Waits until the move's partition is owned by node 4 with no target left.
bool wait_owned_by_n4(Cluster& cluster, const Move& move, milliseconds timeout) {
    return eventually(
        [&] {
            auto now = read_assignment(cluster, move.topic, move.partition);
            return now && now->owner == "n4" && now->target.empty();
        },
        timeout, milliseconds(100));
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
constexpr int kKillPrefill = 768;  // messages of 8 KiB per partition
ClusterOptions slow_copy_cluster() {
    ClusterOptions options = move_cluster(4);
    options.node_env[4] = {{"NARAD_MOVE_COPY_RATE", std::to_string(1 << 20)}};
    return options;
}

// Waits until the move is copying (catch_up with some bytes copied and some left), as node 4
// reports it.
bool wait_copying(Cluster& cluster, const Move& move) {
    std::optional<json> detail;
    auto started = Clock::now();
    bool copying = eventually(
        [&] {
            detail = move_detail(cluster, 4, move);
            if (!detail || detail->value("phase", "") != "catch_up") return false;
            uint64_t copied = detail->value("bytes_copied", uint64_t{0});
            return copied >= (64u << 10) && copied < detail->value("bytes_total", uint64_t{0});
        },
        seconds(60), milliseconds(20));
    std::printf("after %.1f s: %s\n", std::chrono::duration<double>(Clock::now() - started).count(),
                detail.value_or(json()).dump().c_str());
    return copying;
}

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
    cluster.kill(4);
    EXPECT_TRUE(accepted_grows_by(ledger, 200));
    ASSERT_NO_FATAL_FAILURE(cluster.restart(4));
    EXPECT_TRUE(wait_owned_by_n4(cluster, *move, seconds(90)))
        << "the move did not complete after the destination's restart: " << move_logs(cluster);
    EXPECT_TRUE(wait_no_moves(cluster, 1, seconds(30)));
    EXPECT_TRUE(accepted_grows_by(ledger, 200));
    bool drained = traffic.drain(seconds(120));
    std::printf("%s; moved %s\n", ledger.summary().c_str(), to_string(*move).c_str());
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
