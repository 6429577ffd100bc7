#include "chaos/nemesis.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "cluster/move_support.h"

namespace narad::testing {

std::string NemesisCounts::summary() const {
    std::string out;
    for (const auto& [kind, count] : faults) {
        out += (out.empty() ? "" : ", ") + kind + " " + std::to_string(count);
    }
    return out.empty() ? "none" : out;
}

Nemesis::Nemesis(Cluster& cluster, History& history, uint64_t seed, std::string topic)
    : cluster_(cluster), history_(history), random_(seed), topic_(std::move(topic)) {}

milliseconds Nemesis::between(milliseconds low, milliseconds high) {
    std::uniform_int_distribution<int64_t> pick(low.count(), high.count());
    return milliseconds(pick(random_));
}

void Nemesis::gap(milliseconds low, milliseconds high) {
    std::this_thread::sleep_for(between(low, high));  // the schedule, not a synchronisation
}

void Nemesis::kill_and_restart(int node, milliseconds down, const std::string& why) {
    HistoryTime start = history_.now();
    cluster_.kill(node);
    std::this_thread::sleep_for(down);  // how long the node stays down: the fault itself
    cluster_.restart(node);
    history_.fault("kill", node, start, history_.now(),
                   why.empty() ? "down " + std::to_string(down.count()) + " ms" : why);
    count("kill");
}

void Nemesis::power_cut_and_restart(int node, milliseconds down) {
    HistoryTime start = history_.now();
    NodeProcess& process = cluster_.node(node);
    const std::string trigger = process.data_directory() + "/" + kPowerCutTrigger;
    bool cut = false;
    if (FILE* file = std::fopen(trigger.c_str(), "w"); file != nullptr) {
        std::fclose(file);
        cut = eventually([&] { return !process.running(); }, seconds(10), milliseconds(5));
    }
    EXPECT_TRUE(cut) << "n" << node << " did not cut its power (NARAD_TEST_POWER_CUT unset?)";
    if (!cut) cluster_.kill(node);
    std::this_thread::sleep_for(down);  // how long the node stays down: the fault itself
    cluster_.restart(node);
    history_.fault(
        "lose_unsynced", node, start, history_.now(),
        "power cut: unsynced writes dropped, down " + std::to_string(down.count()) + " ms");
    count("power_cut");
}

namespace {

// How far node `process`'s wall clock is from ours, in seconds, by the Date header of its answer.
std::optional<int64_t> wall_offset(const NodeProcess& process) {
    auto client = process.client(seconds(2));
    auto response = client.get("/healthz");
    if (!response.is_ok()) return std::nullopt;
    for (const auto& [name, value] : response->headers) {
        if (name != "date") continue;  // names are lower-cased
        std::tm tm{};
        if (::strptime(value.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm) == nullptr) break;
        return static_cast<int64_t>(::timegm(&tm)) - static_cast<int64_t>(std::time(nullptr));
    }
    return std::nullopt;
}

// Steps the node's clock and waits until its answers show it (within 2 s).
bool step_and_see(NodeProcess& process, seconds offset) {
    return process.step_clock(offset) && eventually(
                                             [&] {
                                                 auto seen = wall_offset(process);
                                                 return seen &&
                                                        std::abs(*seen - offset.count()) <= 2;
                                             },
                                             seconds(10), milliseconds(100));
}

}  // namespace

void Nemesis::step_clock(int node, seconds offset, milliseconds held) {
    HistoryTime start = history_.now();
    bool stepped = step_and_see(cluster_.node(node), offset);
    std::this_thread::sleep_for(held);  // how long the clock stays off: the fault itself
    bool restored = step_and_see(cluster_.node(node), seconds(0));
    EXPECT_TRUE(stepped && restored) << "n" << node << "'s clock was not seen to step";
    history_.fault("clock_step", node, start, history_.now(),
                   "wall clock " + std::string(offset.count() >= 0 ? "+" : "") +
                       std::to_string(offset.count()) + " s for " + std::to_string(held.count()) +
                       " ms");
    count("clock_step");
}

void Nemesis::pause_and_resume(int node, milliseconds stopped) {
    HistoryTime start = history_.now();
    cluster_.pause(node);
    std::this_thread::sleep_for(stopped);  // how long the node stays stopped: the fault itself
    cluster_.resume(node);
    history_.fault("pause", node, start, history_.now(),
                   "stopped " + std::to_string(stopped.count()) + " ms");
    count(stopped >= seconds(6) ? "pause_past_freeze_ttl" : "pause");
}

std::optional<Move> Nemesis::a_move_in_flight(milliseconds within) {
    std::optional<std::vector<Move>> moves;
    eventually(
        [&] {
            moves = list_moves(cluster_, cluster_.live().front());
            return moves && !moves->empty();
        },
        within, milliseconds(50));
    if (!moves || moves->empty()) return std::nullopt;
    return (*moves)[random_() % moves->size()];
}

bool Nemesis::abort_a_move(milliseconds within) {
    std::optional<Move> picked = a_move_in_flight(within);
    if (!picked) return false;
    const Move& move = *picked;
    HistoryTime start = history_.now();
    auto client = cluster_.node(cluster_.live().front()).client(seconds(15));
    auto answer = http(client, "POST",
                       "/v1/cluster/moves/" + move.topic + "/" + std::to_string(move.partition) +
                           "/abort?target=" + move.to);
    history_.fault("abort", cluster_.index_of(move.to), start, history_.now(),
                   to_string(move) + ": " + describe(answer));
    count("abort");
    return true;
}

bool Nemesis::kill_a_move_side(milliseconds within) {
    std::optional<Move> picked = a_move_in_flight(within);
    if (!picked) return false;
    const Move& move = *picked;
    bool source = random_() % 2 == 0;
    int node = cluster_.index_of(source ? move.from : move.to);
    if (node == 0) return false;
    kill_and_restart(node, between(milliseconds(500), seconds(4)),
                     std::string(source ? "source" : "destination") + " of " + to_string(move));
    count(source ? "kill_move_source" : "kill_move_destination");
    return true;
}

void Nemesis::restart_with_failpoints(int node, const std::string& failpoints) {
    NodeProcess& process = cluster_.node(node);
    if (failpoints.empty()) {
        process.env().erase("NARAD_FAILPOINTS");
        cluster_.restart(node);
        return;
    }
    process.env()["NARAD_FAILPOINTS"] = failpoints;
    // An armed node may reach its crash point while it starts (resuming the move it had in
    // flight) before /readyz ever answers: exiting then is the crash asked for, not a failed start.
    if (process.running()) process.stop();
    process.spawn();
    if (::testing::Test::HasFatalFailure()) return;
    EXPECT_TRUE(process.wait_ready(seconds(90)) || !process.running())
        << "node " << process.node_id() << " neither became ready nor crashed; see "
        << process.log_path();
}

bool Nemesis::kill_at_move_phase(milliseconds within) {
    struct Phase {
        const char* failpoint;
        bool on_source;
    };
    static constexpr Phase kPhases[] = {
        {"move.after_catch_up_pass", false}, {"move.source.before_final_listing", true},
        {"move.finalize_pass", false},       {"move.before_fence", false},
        {"move.before_flip", false},         {"move.install", false},
    };
    // NARAD_CHAOS_MOVE_PHASE=<failpoint> keeps only that phase (a row of the fault matrix).
    const char* only = std::getenv("NARAD_CHAOS_MOVE_PHASE");
    std::vector<Phase> phases;
    for (const Phase& phase : kPhases) {
        if (only == nullptr || *only == '\0' || std::string_view(only) == phase.failpoint) {
            phases.push_back(phase);
        }
    }
    if (phases.empty()) return false;
    std::optional<Move> picked = a_move_in_flight(within);
    if (!picked) return false;
    const Move& move = *picked;
    const Phase phase = phases[next_phase_++ % phases.size()];
    int node = cluster_.index_of(phase.on_source ? move.from : move.to);
    if (node == 0) return false;
    HistoryTime start = history_.now();
    cluster_.kill(node);  // a crash too: the checker sees one window for both
    restart_with_failpoints(node, std::string(phase.failpoint) + "=crash@1");
    bool crashed =
        eventually([&] { return !cluster_.node(node).running(); }, seconds(30), milliseconds(20));
    if (crashed) std::this_thread::sleep_for(between(milliseconds(500), seconds(3)));  // down
    restart_with_failpoints(node, "");
    history_.fault("kill", node, start, history_.now(),
                   std::string(phase.on_source ? "source" : "destination") + " of " +
                       to_string(move) + (crashed ? " crashed at " : " never reached ") +
                       phase.failpoint);
    count(std::string(crashed ? "crashed_at:" : "missed:") + phase.failpoint);
    return true;
}

bool Nemesis::pause_a_move_source(milliseconds duration) {
    std::optional<Move> picked = a_move_in_flight(seconds(15));
    if (!picked) return false;
    const Move& move = *picked;
    int node = cluster_.index_of(move.from);
    int destination = cluster_.index_of(move.to);
    if (node == 0 || destination == 0) return false;
    // Once the copy has caught up, so the destination may force-promote it (a copy behind the
    // source's high watermark waits for the source instead).
    eventually(
        [&] {
            auto detail = move_detail(cluster_, destination, move);
            if (!detail) return false;
            uint64_t total = detail->value("bytes_total", uint64_t{0});
            return total > 0 && detail->value("bytes_copied", uint64_t{0}) >= total;
        },
        seconds(30), milliseconds(20));
    const char* promoted_series = "narad_moves_total{outcome=\"force_promoted\"}";
    double promoted_before = metric(cluster_, destination, promoted_series);
    HistoryTime start = history_.now();
    cluster_.pause(node);
    std::this_thread::sleep_for(duration);  // how long the source stays stopped: the fault
    cluster_.resume(node);
    bool promoted = metric(cluster_, destination, promoted_series) > promoted_before;
    history_.fault("pause", node, start, history_.now(),
                   "source of " + to_string(move) + " stopped " + std::to_string(duration.count()) +
                       " ms; " + (promoted ? "force-promoted" : "not force-promoted"));
    count(promoted ? "pause_past_force_promote" : "pause_past_force_promote (not promoted)");
    return true;
}

namespace {

// The pid of the etcd member `parent` runs as its child, or -1.
pid_t etcd_child(pid_t parent) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        if (!std::getline(stat, line)) continue;
        // pid (comm) state ppid ...: comm may hold spaces, so read from the last ')'.
        size_t close = line.rfind(')');
        size_t open = line.find('(');
        if (close == std::string::npos || open == std::string::npos) continue;
        std::istringstream rest(line.substr(close + 2));
        char state = 0;
        pid_t ppid = -1;
        rest >> state >> ppid;
        if (ppid == parent && line.substr(open + 1, close - open - 1) == "etcd") {
            return static_cast<pid_t>(std::stol(name));
        }
    }
    return -1;
}

}  // namespace

bool Nemesis::pause_etcd_member(int node, milliseconds duration) {
    pid_t member = etcd_child(cluster_.node(node).pid());
    if (member <= 0) return false;
    HistoryTime start = history_.now();
    ::kill(member, SIGSTOP);
    std::this_thread::sleep_for(duration);  // how long the member stays stopped: the fault itself
    ::kill(member, SIGCONT);
    history_.fault("etcd_pause", node, start, history_.now(),
                   "n" + std::to_string(node) + "'s etcd member stopped for " +
                       std::to_string(duration.count()) + " ms");
    count("etcd_pause");
    return true;
}

void Nemesis::recreate_topic() {
    HistoryTime start = history_.now();
    const int incarnation = ++incarnation_;
    const std::string base = std::string("/v1/topics/") + kChurnTopic;
    auto via = [&] { return cluster_.node(cluster_.live().front()).client(seconds(10)); };
    bool deleted = eventually(
        [&] {
            auto client = via();
            auto answer = http(client, "DELETE", base);
            return answer.is_ok() && (answer->status == 204 || answer->status == 404);
        },
        seconds(30), milliseconds(200));
    // A create can meet the old incarnation's purge (409 or 503 for a while).
    bool created =
        deleted &&
        eventually(
            [&] {
                auto client = via();
                auto answer = http(
                    client, "POST", "/v1/topics",
                    json{{"name", kChurnTopic}, {"partitions", 4}, {"visibility_timeout_ms", 5'000}}
                        .dump());
                return answer.is_ok() && answer->status == 201;
            },
            seconds(30), milliseconds(200));
    constexpr int kMessages = 20;
    int produced = 0;
    for (int n = 0; created && n < kMessages; ++n) {
        bool accepted = eventually(
            [&] {
                auto client = via();
                auto answer = client.post(base + "/produce",
                                          json{{"incarnation", incarnation}, {"n", n}}.dump());
                return answer.is_ok() && answer->status == 202;
            },
            seconds(30), milliseconds(200));
        produced += accepted ? 1 : 0;
    }
    std::set<int> received;
    std::vector<int> stale;  // messages of an earlier incarnation, or left over: should be gone
    eventually(
        [&] {
            auto client = via();
            auto answer = client.get(base + "/consume?max=50&wait=500ms");
            if (!answer.is_ok() || answer->status != 200) return false;
            json body = json::parse(answer->body, nullptr, false);
            json handles = json::array();
            for (const json& message : body.value("messages", json::array())) {
                json payload = message.value("payload", json());
                if (payload.is_string())
                    payload = json::parse(payload.get<std::string>(), nullptr, false);
                int from = payload.is_object() ? payload.value("incarnation", -1) : -1;
                int n = payload.is_object() ? payload.value("n", -1) : -1;
                if (from == incarnation && n < kMessages) {
                    received.insert(n);
                } else {
                    stale.push_back(from);
                }
                handles.push_back(message.value("receipt_handle", ""));
            }
            if (!handles.empty()) {
                (void)client.post(base + "/ack/batch", json{{"receipt_handles", handles}}.dump());
            }
            return static_cast<int>(received.size()) >= produced;
        },
        seconds(60), milliseconds(0));
    // Left unconsumed: the next incarnation must never deliver them.
    for (int n = kMessages; created && n < kMessages + 5; ++n) {
        auto client = via();
        (void)client.post(base + "/produce", json{{"incarnation", incarnation}, {"n", n}}.dump());
    }
    EXPECT_TRUE(deleted && created) << "topic " << kChurnTopic << " was not recreated";
    EXPECT_EQ(produced, kMessages) << "produce to the recreated topic was refused";
    EXPECT_EQ(static_cast<int>(received.size()), produced)
        << "the recreated topic did not deliver every message produced to it";
    EXPECT_TRUE(stale.empty()) << "the recreated topic delivered " << stale.size()
                               << " message(s) of an earlier incarnation";
    history_.fault("topic_recreate", 0, start, history_.now(),
                   std::string(kChurnTopic) + " incarnation " + std::to_string(incarnation) + ": " +
                       std::to_string(received.size()) + "/" + std::to_string(produced) +
                       " delivered, " + std::to_string(stale.size()) + " stale");
    count("topic_recreate");
}

void Nemesis::isolate(int node, milliseconds duration) {
    Network* network = cluster_.network();
    HistoryTime start = history_.now();
    bool cut = true;
    for (int other = 1; other <= cluster_.size(); ++other) {
        if (other != node) cut &= network->cut(node, other);
    }
    std::this_thread::sleep_for(duration);  // how long the cut lasts: the fault itself
    bool healed = network->heal(node);
    for (int other = 1; other <= cluster_.size(); ++other) {
        if (other != node) healed &= network->heal(other);
    }
    EXPECT_TRUE(cut && healed) << network->error();
    history_.fault("isolate", node, start, history_.now(),
                   "cut off from every node for " + std::to_string(duration.count()) + " ms");
    count("isolate");
}

void Nemesis::cut_one_way(int from, int to, milliseconds duration) {
    Network* network = cluster_.network();
    HistoryTime start = history_.now();
    bool cut = network->cut_one_way(from, to);
    std::this_thread::sleep_for(duration);  // how long the cut lasts: the fault itself
    bool healed = network->heal(from);
    EXPECT_TRUE(cut && healed) << network->error();
    history_.fault("cut_one_way", from, start, history_.now(),
                   "n" + std::to_string(from) + " cannot send to n" + std::to_string(to) + " for " +
                       std::to_string(duration.count()) + " ms");
    count("cut_one_way");
}

void Nemesis::fill_disk(int node, milliseconds duration) {
    HistoryTime start = history_.now();
    const std::string ballast = cluster_.node(node).data_directory() + "/ballast";
    struct statvfs disk {};
    bool filled = false;
    if (::statvfs(cluster_.node(node).data_directory().c_str(), &disk) == 0) {
        auto free_bytes = static_cast<off_t>(disk.f_bavail * disk.f_frsize);
        int fd = ::open(ballast.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
        filled = fd >= 0 && ::posix_fallocate(fd, 0, std::max<off_t>(free_bytes - 16384, 1)) == 0;
        if (fd >= 0) ::close(fd);
    }
    std::this_thread::sleep_for(duration);  // how long the disk stays full: the fault itself
    std::remove(ballast.c_str());
    EXPECT_TRUE(filled) << "could not fill " << ballast;
    history_.fault("disk_full", node, start, history_.now(),
                   "full for " + std::to_string(duration.count()) + " ms");
    count("disk_full");
}

void Nemesis::join(int index) {
    HistoryTime start = history_.now();
    cluster_.join(index);
    history_.fault("join", index, start, history_.now(), "n" + std::to_string(index) + " joins");
    count("join");
}

bool Nemesis::decommission(int index, milliseconds timeout) {
    HistoryTime start = history_.now();
    const std::string id = cluster_.node(index).node_id();
    int via = index == 1 ? 2 : 1;
    auto client = cluster_.node(via).client(seconds(30));
    auto accepted = http(client, "POST", "/v1/cluster/members/" + id + "/decommission");
    bool left =
        accepted.is_ok() && accepted->status == 204 &&
        eventually([&] { return !cluster_.node(index).running(); }, timeout, milliseconds(200));
    history_.fault("decommission", index, start, history_.now(),
                   id + ": " + describe(accepted) + (left ? ", left" : ", still a member"));
    count("decommission");
    return left;
}

std::vector<std::string> Nemesis::fault_kinds() const {
    std::vector<std::string> kinds = {
        "kill",     "power_cut",      "clock_step",         "pause",      "pause_past_freeze_ttl",
        "abort",    "kill_move_side", "kill_at_move_phase", "etcd_pause", "topic_recreate",
        "disk_full"};
    if (cluster_.network() != nullptr && cluster_.network()->ready()) {
        kinds.push_back("isolate");
        kinds.push_back("cut_one_way");
    }
    // Only with a short force-promote timeout (chaos_test.cc, NARAD_CHAOS_FORCE_PROMOTE_AFTER).
    const char* force_promote = std::getenv("NARAD_CHAOS_FORCE_PROMOTE_AFTER");
    if (force_promote != nullptr && *force_promote != '\0') {
        kinds.push_back("pause_past_force_promote");
    }
    // NARAD_CHAOS_FAULTS=kill,pause,... keeps only those (a row of the fault matrix).
    const char* chosen = std::getenv("NARAD_CHAOS_FAULTS");
    if (chosen == nullptr || *chosen == '\0') return kinds;
    std::string list = std::string(",") + chosen + ",";
    std::erase_if(kinds, [&](const std::string& kind) {
        return list.find("," + kind + ",") == std::string::npos;
    });
    return kinds;
}

bool Nemesis::allows(const std::string& kind) const {
    auto kinds = fault_kinds();
    return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

void Nemesis::random_fault(const std::vector<int>& targets) {
    std::vector<std::string> kinds = fault_kinds();
    // Scheduled by the test: on the node with a small disk, and on a move's source.
    std::erase(kinds, "disk_full");
    std::erase(kinds, "pause_past_force_promote");
    if (kinds.empty()) return;
    const std::string kind = kinds[random_() % kinds.size()];
    int node = targets[random_() % targets.size()];
    if (kind == "kill") {
        kill_and_restart(node, between(milliseconds(500), seconds(5)));
    } else if (kind == "power_cut") {
        power_cut_and_restart(node, between(milliseconds(500), seconds(5)));
    } else if (kind == "clock_step") {
        auto magnitude = std::chrono::duration_cast<seconds>(between(seconds(30), seconds(600)));
        step_clock(node, random_() % 2 == 0 ? magnitude : -magnitude,
                   between(seconds(3), seconds(15)));
    } else if (kind == "pause") {
        pause_and_resume(node, between(milliseconds(500), seconds(3)));
    } else if (kind == "pause_past_freeze_ttl") {
        pause_and_resume(node, between(seconds(7), seconds(9)));  // the freeze TTL is 6 s
    } else if (kind == "abort") {
        abort_a_move();  // nothing when no move is in flight
    } else if (kind == "kill_move_side") {
        kill_a_move_side();
    } else if (kind == "kill_at_move_phase") {
        kill_at_move_phase();
    } else if (kind == "topic_recreate") {
        recreate_topic();
    } else if (kind == "etcd_pause") {
        // On a node hosting a member (n1 to n3 host the voters).
        pause_etcd_member(1 + static_cast<int>(random_() % 3), between(seconds(2), seconds(10)));
    } else if (kind == "isolate") {
        isolate(node, between(seconds(1), seconds(8)));
    } else {
        std::vector<int> others;
        for (int target : targets) {
            if (target != node) others.push_back(target);
        }
        cut_one_way(node, others[random_() % others.size()], between(seconds(1), seconds(6)));
    }
}

}  // namespace narad::testing
