// Helpers shared by the partition-move tests (move_test.cc, move_failure_test.cc,
// decommission_test.cc): the metastore's view of assignments and moves, /v1/cluster/moves and its
// detail, node logs, traffic recorded in a Ledger, prefill, the one-move fixture (a 4-partition
// topic at 2/1/1 on nodes 1-3, one move onto a joining node 4) and the failure fixtures. Test code
// only; every wait is on a condition with a deadline.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "base/mutex.h"
#include "cluster/harness.h"
#include "cluster/ledger.h"

namespace narad::testing {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kCompleted = "narad_moves_total{outcome=\"completed\"}";
constexpr const char* kEnded = "narad_moves_unfinished_total{outcome=\"ended\"}";
constexpr const char* kFreezeCount = "narad_moves_freeze_duration_seconds_count";
constexpr const char* kFreezeSum = "narad_moves_freeze_duration_seconds_sum";
constexpr const char* kNonConverged = "narad_moves_non_converged_total";
constexpr const char* kRerouted = "narad_dispatcher_rerouted_records_total";

// `nodes` nodes (the first three host etcd voters) with the fast failover tunables (their
// controller tick, 500 ms, is also the planner's) and the stale-copy sweep every 3 ticks, plus
// `env` on every node.
inline ClusterOptions move_cluster(int nodes, const std::map<std::string, std::string>& env = {}) {
    ClusterOptions options;
    options.nodes = nodes;
    options.env = fast_failover_env();
    options.env["NARAD_MOVE_SWEEP_EVERY"] = "3";
    for (const auto& [key, value] : env) options.env[key] = value;
    return options;
}

inline std::string describe(const Result<net::HttpResponse>& response) {
    if (!response.is_ok()) return "transport: " + response.status().to_string();
    return std::to_string(response->status) + " " + response->body;
}

// ---- The metastore's view ----------------------------------------------------------------------

inline std::string assignment_key(const std::string& topic, int partition) {
    char index[16];
    std::snprintf(index, sizeof index, "%05d", partition);
    return "/narad/narad/assign/" + topic + "/" + index;
}

struct Assignment {
    std::string owner;
    std::string target;
};

inline std::optional<Assignment> read_assignment(const Cluster& cluster, const std::string& topic,
                                                 int partition) {
    auto value = cluster.etcd_get(assignment_key(topic, partition));
    if (!value || !value->found) return std::nullopt;
    json body = json::parse(value->value, nullptr, false);
    if (!body.is_object()) return std::nullopt;
    return Assignment{body.value("owner", ""), body.value("target", "")};
}

// Every partition's assignment, or an empty map when one could not be read.
inline std::map<int, Assignment> read_assignments(const Cluster& cluster, const std::string& topic,
                                                  int partitions) {
    std::map<int, Assignment> out;
    for (int p = 0; p < partitions; ++p) {
        auto assignment = read_assignment(cluster, topic, p);
        if (!assignment) return {};
        out[p] = *assignment;
    }
    return out;
}

inline std::map<std::string, int> owner_counts(const std::map<int, Assignment>& assignments) {
    std::map<std::string, int> counts;
    for (const auto& [p, assignment] : assignments) ++counts[assignment.owner];
    return counts;
}

struct Move {
    std::string topic;
    int partition = 0;
    std::string from;
    std::string to;
    auto operator<=>(const Move&) const = default;
};

inline std::string to_string(const Move& move) {
    return move.topic + "/" + std::to_string(move.partition) + " " + move.from + "->" + move.to;
}

// GET /v1/cluster/moves through node `observer` (with ?detail=true when asked): the move entries,
// or nullopt when the node does not answer.
inline std::optional<json> moves_json(Cluster& cluster, int observer, bool detail = false) {
    auto client = cluster.node(observer).client(seconds(5));
    auto body = get_json(client, detail ? "/v1/cluster/moves?detail=true" : "/v1/cluster/moves");
    if (!body || !body->contains("moves") || !(*body)["moves"].is_array()) return std::nullopt;
    return (*body)["moves"];
}

inline std::optional<std::vector<Move>> list_moves(Cluster& cluster, int observer) {
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
inline std::optional<json> move_detail(Cluster& cluster, int observer, const Move& move) {
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
inline bool reaches_phase(Cluster& cluster, const Move& move, const std::string& phase) {
    return eventually(
        [&] {
            auto detail = move_detail(cluster, 4, move);
            return detail && detail->value("phase", "") == phase;
        },
        seconds(60), milliseconds(20));
}

// Waits until node `observer` lists exactly one move; returns it.
inline std::optional<Move> wait_single_move(Cluster& cluster, int observer, milliseconds timeout) {
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

inline bool wait_no_moves(Cluster& cluster, int observer, milliseconds timeout) {
    return eventually(
        [&] {
            auto moves = list_moves(cluster, observer);
            return moves && moves->empty();
        },
        timeout, milliseconds(100));
}

// A counter or histogram series of a node's /metrics; 0 when the node has not created it yet.
inline double metric(Cluster& cluster, int index, const char* series) {
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
        MutexLock lock(mutex_);
        return seen_;
    }

  private:
    void run() {
        while (!stopping_) {
            if (auto moves = list_moves(cluster_, observer_)) {
                MutexLock lock(mutex_);
                seen_.insert(moves->begin(), moves->end());
            }
            std::this_thread::sleep_for(milliseconds(50));  // the poll period
        }
    }

    Cluster& cluster_;
    int observer_;
    std::atomic<bool> stopping_{false};
    Mutex mutex_;
    std::set<Move> seen_ GUARDED_BY(mutex_);
    std::thread thread_;
};

// ---- Logs ---------------------------------------------------------------------------------------

// The lines of a node's log (stdout and stderr) that contain `needle`, at most `limit` of them.
inline std::vector<std::string> log_lines(const NodeProcess& node, std::string_view needle,
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

inline bool log_contains(const NodeProcess& node, std::string_view needle) {
    return !log_lines(node, needle, 1).empty();
}

// Every node's move lines, for a failure message.
inline std::string move_logs(Cluster& cluster) {
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
inline std::string payload(int id, size_t pad_bytes) {
    std::string body = "{\"id\":" + std::to_string(id);
    if (pad_bytes > 0) body += ",\"pad\":\"" + std::string(pad_bytes, 'x') + "\"";
    return body + "}";
}

// One batch produce of `count` messages with ids from `first`, all to `partition`.
inline Result<net::HttpResponse> produce_batch(net::HttpClient& client, const std::string& topic,
                                               int partition, int first, int count,
                                               size_t pad_bytes) {
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
            auto next = SteadyClock::now();
            while (!stop_producing_) {
                next += std::chrono::microseconds(1'000'000 / per_second);
                std::this_thread::sleep_until(next);  // the rate, not a synchronisation
                int id = next_id_++;
                if (id >= ledger_.capacity()) break;
                std::string target = "/v1/topics/" + topic_ + "/produce";
                if (!partitions_.empty()) {
                    target += "?partition=" + std::to_string(partitions_[id % partitions_.size()]);
                }
                auto response = client.post(target, payload(id, 0));
                if (response.is_ok() && response->status == 202) {
                    ledger_.accept(id);
                    continue;
                }
                note_refusal(index, describe(response));
                client = cluster_.node(index).client(seconds(10));
            }
        });
    }

    // Every delivery's (partition, offset) goes to `offsets` too (set before consumers start).
    void record_offsets(OffsetBook* offsets) { offsets_ = offsets; }
    // Producers started after this write only to these partitions, in turn (empty: unkeyed).
    void only_partitions(std::vector<int> partitions) { partitions_ = std::move(partitions); }

    void consume_through(int index) {
        consumers_.emplace_back([this, index] {
            auto client = cluster_.node(index).client(seconds(15));
            while (!stop_consuming_) {
                int got = consume_and_ack(client, topic_, ledger_, offsets_);
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
        MutexLock lock(mutex_);
        return refused_;
    }
    std::string refusal_samples() {
        MutexLock lock(mutex_);
        std::string out;
        for (const auto& sample : samples_) out += "\n  " + sample;
        return out;
    }

  private:
    void note_refusal(int index, std::string what) {
        MutexLock lock(mutex_);
        ++refused_;
        if (samples_.size() < 5) samples_.push_back("n" + std::to_string(index) + ": " + what);
    }

    Cluster& cluster_;
    std::string topic_;
    Ledger& ledger_;
    OffsetBook* offsets_ = nullptr;
    std::vector<int> partitions_;
    std::atomic<int> next_id_;
    std::atomic<bool> stop_producing_{false};
    std::atomic<bool> stop_consuming_{false};
    std::vector<std::thread> producers_;
    std::vector<std::thread> consumers_;
    Mutex mutex_;
    int refused_ GUARDED_BY(mutex_) = 0;
    std::vector<std::string> samples_ GUARDED_BY(mutex_);
};

// Waits until `count` more ids than now are accepted.
inline bool accepted_grows_by(Ledger& ledger, int count, milliseconds timeout = seconds(60)) {
    int target = ledger.accepted_count() + count;
    return eventually([&] { return ledger.accepted_count() >= target; }, timeout, milliseconds(20));
}

// Fills every partition of `topic` with `per_partition` messages of about `pad_bytes` each (ids
// from `first`, accepted into the ledger), through node `through`; returns the next free id.
inline int prefill(Cluster& cluster, int through, const std::string& topic, int partitions,
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
inline int64_t high_watermark(Cluster& cluster, int index, const std::string& topic,
                              int partition) {
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
inline std::map<int, Assignment> start_with_topic(Cluster& cluster, const std::string& topic,
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

// One move of a 4-partition topic (2/1/1 on nodes 1-3) onto a joining node 4, with traffic
// through nodes 1-3; the fixture of the failure tests below.
struct OneMove {
    std::map<int, Assignment> initial;
    Move move;
    int source = 0;  // the move's source node index
};

inline OneMove start_one_move(Cluster& cluster, const std::string& topic) {
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
inline bool wait_owned_by_n4(Cluster& cluster, const Move& move, milliseconds timeout) {
    return eventually(
        [&] {
            auto now = read_assignment(cluster, move.topic, move.partition);
            return now && now->owner == "n4" && now->target.empty();
        },
        timeout, milliseconds(100));
}

constexpr int kKillPrefill = 768;  // messages of 8 KiB per partition
inline ClusterOptions slow_copy_cluster() {
    ClusterOptions options = move_cluster(4);
    options.node_env[4] = {{"NARAD_MOVE_COPY_RATE", std::to_string(1 << 20)}};
    return options;
}

// Waits until the move is copying (catch_up with some bytes copied and some left), as node 4
// reports it.
inline bool wait_copying(Cluster& cluster, const Move& move) {
    std::optional<json> detail;
    auto started = SteadyClock::now();
    bool copying = eventually(
        [&] {
            detail = move_detail(cluster, 4, move);
            if (!detail || detail->value("phase", "") != "catch_up") return false;
            uint64_t copied = detail->value("bytes_copied", uint64_t{0});
            return copied >= (64u << 10) && copied < detail->value("bytes_total", uint64_t{0});
        },
        seconds(60), milliseconds(20));
    std::printf("after %.1f s: %s\n",
                std::chrono::duration<double>(SteadyClock::now() - started).count(),
                detail.value_or(json()).dump().c_str());
    return copying;
}

// ---- The failure fixtures (move_failure_test.cc, decommission_test.cc) -------------------------

// move_cluster() with the failure timeouts short: force-promote and dead-target after 8 s, the
// sweep every 3 ticks, freeze TTL 6 s.
inline ClusterOptions failure_cluster(int nodes) {
    return move_cluster(nodes, {{"NARAD_MOVE_FORCE_PROMOTE_AFTER", "8s"},
                                {"NARAD_MOVE_DEAD_TARGET_ABORT_AFTER", "8s"},
                                {"NARAD_MOVE_SWEEP_EVERY", "3"},
                                {"NARAD_MOVE_FREEZE_TTL", "6s"}});
}

// Prefills every partition with `count` messages (partition p holds ids [p * count, ...)) and
// waits until each is committed at its owner, so no ingress WAL still holds one.
inline int prefill_committed(Cluster& cluster, const std::string& topic, int partitions, int count,
                             size_t pad, Ledger& ledger) {
    int next = prefill(cluster, 1, topic, partitions, count, pad, ledger, 0);
    bool committed = eventually(
        [&] {
            for (int p = 0; p < partitions; ++p) {
                if (high_watermark(cluster, 1, topic, p) < count) return false;
            }
            return true;
        },
        seconds(60), milliseconds(50));
    EXPECT_TRUE(committed) << "the prefill was not committed";
    return next;
}

// The live nodes other than `excluded` among 1..3.
inline std::vector<int> others_than(int excluded) {
    std::vector<int> out;
    for (int index = 1; index <= 3; ++index) {
        if (index != excluded) out.push_back(index);
    }
    return out;
}

// The partitions `owner` held at the start besides the moving one: their records live only on
// its disk while it is dead.
inline std::set<int> held_only_by(const OneMove& setup, const std::string& owner) {
    std::set<int> out;
    for (const auto& [p, assignment] : setup.initial) {
        if (assignment.owner == owner && p != setup.move.partition) out.insert(p);
    }
    return out;
}

// Lost ids other than the prefill of `dead_partitions` (prefill_committed: partition p holds ids
// [p * per_partition, (p + 1) * per_partition) of the first 4 * per_partition).
inline std::vector<int> lost_beyond(Ledger& ledger, const std::set<int>& dead_partitions,
                                    int per_partition) {
    std::vector<int> out;
    for (int id : ledger.lost()) {
        bool on_dead_disk = id < 4 * per_partition && dead_partitions.count(id / per_partition) > 0;
        if (!on_dead_disk) out.push_back(id);
    }
    return out;
}

inline std::string ids(const std::vector<int>& list) {
    std::string out;
    for (size_t i = 0; i < list.size() && i < 10; ++i) out += " " + std::to_string(list[i]);
    return out;
}

// Nodes 1-3 with a 4-partition topic (2/1/1), each partition prefilled with `per_partition`
// committed messages of `pad` bytes, then node 4 joining and the one move planned onto it.
inline OneMove prefilled_move(Cluster& cluster, const std::string& topic, int per_partition,
                              size_t pad, Ledger& ledger) {
    OneMove setup;
    setup.initial = start_with_topic(cluster, topic, 4);
    EXPECT_EQ(setup.initial.size(), 4u);
    if (setup.initial.size() != 4u) return setup;
    prefill_committed(cluster, topic, 4, per_partition, pad, ledger);
    cluster.join(4);
    if (::testing::Test::HasFatalFailure()) return setup;
    auto move = wait_single_move(cluster, 1, seconds(30));
    if (!move) return setup;
    setup.move = *move;
    setup.source = cluster.index_of(move->from);
    return setup;
}

// Waits until node 4 reports the move's first pass complete (every listed byte copied).
inline bool first_pass_done(Cluster& cluster, const Move& move) {
    return eventually(
        [&] {
            auto detail = move_detail(cluster, 4, move);
            if (!detail) return false;
            uint64_t total = detail->value("bytes_total", uint64_t{0});
            return total > 0 && detail->value("bytes_copied", uint64_t{0}) >= total;
        },
        seconds(60), milliseconds(20));
}

// Waits for `bound` with the answer to `changed` staying false all along; false as soon as it
// turns true (a negative check, bounded).
inline bool stays_unchanged(const std::function<bool()>& changed, milliseconds bound) {
    return !eventually(changed, bound, milliseconds(200));
}

inline bool etcd_has(Cluster& cluster, const std::string& key) {
    auto value = cluster.etcd_get(key);
    return value && value->found;
}

}  // namespace narad::testing
