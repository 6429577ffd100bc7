// The chaos suite (docs/reliability.md): real `narad serve` processes under recorded produce and
// consume while a seeded nemesis injects faults and cluster operations, then the history checker
// (check_history.py) judges the whole history. Two legs:
// - strict: no faults, but a node joins (a rebalance) and is decommissioned again: no acked
//   message comes back, and every duplicate is explained by a nack, a refused ack or an expired
//   lease;
// - faults: kill -9 and restart, SIGSTOP/SIGCONT (also past the freeze TTL), a node cut off from
//   the others, one-way cuts (per-node network namespaces), a full disk (a small tmpfs), aborted
//   moves, kills aimed at a move's source or destination, a join and a decommission, for
//   NARAD_CHAOS_DURATION (default 180s).
// NARAD_CHAOS_SEED repeats a run (the seed is printed); NARAD_CHAOS_FAULTS=kill,pause,... limits
// the faults leg to those kinds (the join and the decommission always run). Histories go to
// NARAD_CHAOS_OUT (default ./chaos-histories), one JSON line per operation, with the checker's
// verdict beside them.
#include <filesystem>
#include <limits>
#include <random>
#include <sstream>

#include "chaos/nemesis.h"
#include "chaos/recorder.h"
#include "cluster/move_support.h"
#include "move/quarantine.h"
#include "storage/partition_log.h"

namespace narad::testing {
namespace {

constexpr int kPartitions = 12;
constexpr int kVisibilityMs = 5'000;
// How long after a fault its effects may still explain an anomaly: a lease it cut short runs out
// (the visibility timeout) and a restarted node is found live again (the lease TTL).
constexpr int kFaultGraceMs = 8'000;

uint64_t chaos_seed() {
    const char* value = std::getenv("NARAD_CHAOS_SEED");
    if (value != nullptr && *value != '\0') return std::strtoull(value, nullptr, 10);
    return std::random_device{}();
}

// A duration from the environment, as `<n>s` or `<n>m`; `fallback` when unset or unreadable.
milliseconds env_duration(const char* name, milliseconds fallback) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') return fallback;
    char* end = nullptr;
    long long amount = std::strtoll(value, &end, 10);
    if (amount <= 0 || end == nullptr) return fallback;
    if (std::string_view(end) == "m") return std::chrono::minutes(amount);
    if (std::string_view(end) == "s" || *end == '\0') return seconds(amount);
    return fallback;
}

std::string history_path(const std::string& leg, uint64_t seed) {
    const char* out = std::getenv("NARAD_CHAOS_OUT");
    std::string directory = out != nullptr && *out != '\0' ? out : "chaos-histories";
    std::filesystem::create_directories(directory);
    return directory + "/" + leg + "-" + std::to_string(seed) + ".jsonl";
}

void create_chaos_topic(Cluster& cluster, const std::string& topic) {
    auto client = cluster.node(1).client();
    auto created = http(
        client, "POST", "/v1/topics",
        json{{"name", topic}, {"partitions", kPartitions}, {"visibility_timeout_ms", kVisibilityMs}}
            .dump());
    ASSERT_TRUE(created.is_ok() && created->status == 201) << describe(created);
    ASSERT_TRUE(eventually([&] { return !read_assignments(cluster, topic, kPartitions).empty(); }));
}

double summed_metric(Cluster& cluster, const char* series) {
    double total = 0;
    for (int index : cluster.live()) total += metric(cluster, index, series);
    return total;
}

// Upper bounds of the p50 and p99 freeze durations in ms, from the live nodes' histogram buckets
// (-1 when no freeze was recorded).
std::pair<double, double> freeze_quantiles(Cluster& cluster) {
    std::map<double, double> buckets;  // le -> cumulative count, summed over the nodes
    const std::string prefix = "narad_moves_freeze_duration_seconds_bucket{le=\"";
    for (int index : cluster.live()) {
        auto client = cluster.node(index).client(seconds(5));
        auto response = client.get("/metrics");
        if (!response.is_ok() || response->status != 200) continue;
        std::istringstream lines(response->body);
        std::string line;
        while (std::getline(lines, line)) {
            if (!line.starts_with(prefix)) continue;
            std::string le =
                line.substr(prefix.size(), line.find('"', prefix.size()) - prefix.size());
            double bound = le == "+Inf" ? std::numeric_limits<double>::infinity()
                                        : std::strtod(le.c_str(), nullptr);
            buckets[bound] += std::strtod(line.substr(line.rfind(' ') + 1).c_str(), nullptr);
        }
    }
    double total = buckets.empty() ? 0 : buckets.rbegin()->second;
    auto quantile = [&](double q) {
        for (const auto& [bound, count] : buckets) {
            if (count >= q * total) return bound * 1000;
        }
        return -1.0;
    };
    if (total <= 0) return {-1, -1};
    return {quantile(0.5), quantile(0.99)};
}

// Records, as one `quarantined` meta line per copy, what every copy a node set aside holds:
// (offset, message id) pairs read from a scratch copy of it (opening a log may cut a torn tail).
// The checker uses them to tell records a force-promote left on a source that only looked dead
// (kept on disk, the spec's window) from records that are gone.
void record_quarantined(Cluster& cluster, History& history) {
    io::FileSystem& fs = io::posix_file_system();
    SystemClock& clock = SystemClock::instance();
    for (int index = 1; index <= cluster.size(); ++index) {
        const std::string data = cluster.node(index).data_directory();
        for (const move::QuarantinedCopy& copy : move::list_quarantined(fs, data)) {
            if (copy.partition < 0) continue;  // a deleted topic incarnation
            const std::string scratch = copy.directory + ".chaos-read";
            std::filesystem::copy(copy.directory, scratch,
                                  std::filesystem::copy_options::recursive);
            json records = json::array();
            {
                auto log = storage::PartitionLog::open(fs, clock, scratch, storage::LogOptions{});
                Offset next;
                while (log.is_ok()) {
                    auto read = (*log)->read(next, 1000, 4 << 20);
                    if (!read.is_ok() || read->records.empty()) break;
                    for (const auto& record : read->records) {
                        PayloadCheck payload =
                            check_payload(json::parse(record.value, nullptr, false));
                        if (payload.id >= 0) records.push_back({record.offset.value(), payload.id});
                    }
                    next = read->next;
                }
            }
            std::filesystem::remove_all(scratch);
            history.meta("quarantined", {{"node", index},
                                         {"kind", copy.kind},
                                         {"topic", copy.topic},
                                         {"partition", copy.partition},
                                         {"directory", copy.directory},
                                         {"records", std::move(records)}});
        }
    }
}

// The figures of a run, printed for docs/reliability.md.
void report(Cluster& cluster, const std::string& leg, uint64_t seed, History& history,
            Ledger& ledger, const Nemesis& nemesis, double seconds_run) {
    double freezes = summed_metric(cluster, kFreezeCount);
    auto [p50, p99] = freeze_quantiles(cluster);
    std::printf(
        "chaos %s seed=%llu: %.0f s, %lld history lines; %s; faults: %s; moves completed %.0f, "
        "force-promoted %.0f, aborted %.0f, non-converged %.0f; freezes %.0f (mean %.0f ms, p50 <= "
        "%.0f ms, p99 <= %.0f ms); quarantined copies %.0f\n",
        leg.c_str(), static_cast<unsigned long long>(seed), seconds_run,
        static_cast<long long>(history.lines()), ledger.summary().c_str(),
        nemesis.counts().summary().c_str(), summed_metric(cluster, kCompleted),
        summed_metric(cluster, "narad_moves_total{outcome=\"force_promoted\"}"),
        summed_metric(cluster, "narad_moves_unfinished_total{outcome=\"aborted\"}"),
        summed_metric(cluster, kNonConverged), freezes,
        freezes > 0 ? 1000 * summed_metric(cluster, kFreezeSum) / freezes : 0.0, p50, p99,
        summed_metric(cluster, "narad_quarantined_copies"));
    std::printf("history: %s\n", history.path().c_str());
}

// One leg: its cluster, history, ledger and nemesis. begin() starts the first nodes, creates the
// topic and writes the start record; finish() heals the history and drains the traffic; judge()
// prints the figures and runs the checker.
struct Leg {
    Leg(const std::string& leg_mode, ClusterOptions options)
        : mode(leg_mode),
          seed(chaos_seed()),
          cluster(std::move(options)),
          history(history_path(mode, seed)),
          nemesis(cluster, history, seed, kTopic) {
        std::printf("chaos %s seed=%llu (NARAD_CHAOS_SEED=%llu repeats it)\n", mode.c_str(),
                    static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
    }

    void begin(int first) {
        cluster.start_first(first);
        ASSERT_FALSE(::testing::Test::HasFatalFailure());
        ASSERT_NO_FATAL_FAILURE(create_chaos_topic(cluster, kTopic));
        history.meta("start", {{"seed", seed},
                               {"mode", mode},
                               {"visibility_ms", kVisibilityMs},
                               {"fault_grace_ms", kFaultGraceMs},
                               {"min_produced", 500}});
        started = SteadyClock::now();
    }

    TrafficOptions traffic_options() const { return TrafficOptions{.topic = kTopic, .seed = seed}; }

    void finish(RecordedTraffic& traffic, milliseconds drain_timeout) {
        history.meta("healed");
        bool drained = traffic.drain(drain_timeout);
        record_quarantined(cluster, history);
        history.meta("end", {{"drained", drained}});
    }

    void judge() {
        report(cluster, mode, seed, history, ledger, nemesis,
               std::chrono::duration<double>(SteadyClock::now() - started).count());
        EXPECT_EQ(run_checker(history.path()), 0) << "the checker did not pass the history";
    }

    static constexpr const char* kTopic = "chaos";
    std::string mode;
    uint64_t seed;
    Cluster cluster;
    History history;
    Ledger ledger{2'000'000};
    Nemesis nemesis;
    SteadyClock::time_point started = SteadyClock::now();
};

// Rule: with no faults, a rebalance onto a joining node and its decommission redeliver no acked
// message, lose nothing and produce no duplicate that a nack, a refused ack or an expired lease
// does not explain.
TEST(ChaosTest, StrictLegJoinAndDecommissionWithoutFaults) {
    Leg leg("strict", move_cluster(4, {{"NARAD_MOVE_COPY_RATE", std::to_string(256 << 10)}}));
    ASSERT_NO_FATAL_FAILURE(leg.begin(3));
    Cluster& cluster = leg.cluster;
    {
        RecordedTraffic traffic(cluster, leg.history, leg.ledger, leg.traffic_options());
        traffic.produce({1, 2, 3});
        traffic.consume({1, 2, 3});
        ASSERT_TRUE(accepted_grows_by(leg.ledger, 3'000));
        leg.nemesis.join(4);
        // The rebalance gives the new node its share (12 partitions over 4 nodes).
        EXPECT_TRUE(eventually(
            [&] {
                auto moves = list_moves(cluster, 1);
                return moves && moves->empty() &&
                       owned_partitions(cluster, 1)["n4"] == kPartitions / 4;
            },
            seconds(120), milliseconds(200)))
            << move_logs(cluster);
        ASSERT_TRUE(accepted_grows_by(leg.ledger, 2'000));
        EXPECT_TRUE(leg.nemesis.decommission(4, seconds(180))) << move_logs(cluster);
        ASSERT_TRUE(accepted_grows_by(leg.ledger, 2'000));
        leg.finish(traffic, seconds(120));
    }
    leg.judge();
}

ClusterOptions faults_cluster() {
    ClusterOptions options = move_cluster(
        // A slow copy keeps the join's moves in flight for the faults aimed at them.
        5, {{"NARAD_MOVE_COPY_RATE", std::to_string(48 << 10)}, {"NARAD_MOVE_FREEZE_TTL", "6s"}});
    options.network_namespaces = true;  // so the nemesis can cut links
    options.small_disks[4] = "192m";    // n4 hosts no etcd member: its disk can run full
    options.env["NARAD_TEST_POWER_CUT"] = kPowerCutTrigger;  // the power_cut fault
    options.steppable_clocks = true;                         // the clock_step fault
    // NARAD_CHAOS_FORCE_PROMOTE_AFTER shortens move.force_promote_after so that a paused source
    // can be force-promoted over (the pause_past_force_promote fault).
    milliseconds force_promote = env_duration("NARAD_CHAOS_FORCE_PROMOTE_AFTER", milliseconds(0));
    if (force_promote.count() > 0) {
        options.env["NARAD_MOVE_FORCE_PROMOTE_AFTER"] =
            std::to_string(force_promote.count()) + "ms";
    }
    return options;
}

// Rule: under kill -9, SIGSTOP (also past the freeze TTL), cut links, a full disk, aborted moves,
// kills aimed at a move's source or destination, a join and a decommission, nothing accepted is
// lost, nothing is corrupted, no offset holds two messages, nothing refused is delivered, and
// every anomaly the checker tolerates falls inside a fault window.
TEST(ChaosTest, FaultsLegKillsPausesAndMoves) {
    const milliseconds duration = env_duration("NARAD_CHAOS_DURATION", seconds(180));
    Leg leg("faults", faults_cluster());
    ASSERT_FALSE(::testing::Test::HasFailure()) << "no network namespaces (root is needed)";
    std::printf("for %lld s\n", static_cast<long long>(duration.count() / 1000));
    ASSERT_NO_FATAL_FAILURE(leg.begin(4));
    Nemesis& nemesis = leg.nemesis;
    {
        RecordedTraffic traffic(leg.cluster, leg.history, leg.ledger, leg.traffic_options());
        traffic.produce({1, 2, 3, 4});
        traffic.consume({1, 2, 3, 4});
        ASSERT_TRUE(accepted_grows_by(leg.ledger, 300));
        bool joined = false;
        bool decommissioned = false;
        int disk_fills = 0;
        while (SteadyClock::now() - leg.started < duration) {
            auto elapsed = SteadyClock::now() - leg.started;
            if (!joined && elapsed > duration / 5) {
                // A rebalance starts: aim the next faults at its moves.
                nemesis.join(5);
                joined = true;
                if (nemesis.allows("kill_move_side")) nemesis.kill_a_move_side(seconds(10));
                nemesis.gap(milliseconds(500), seconds(2));
                if (nemesis.allows("abort")) nemesis.abort_a_move(seconds(10));
                // A crash at each phase of the protocol while the rebalance lasts.
                for (int phase = 0; phase < 6 && nemesis.allows("kill_at_move_phase"); ++phase) {
                    if (!nemesis.kill_at_move_phase(seconds(15))) break;
                    nemesis.gap(milliseconds(200), seconds(1));
                }
                if (nemesis.allows("pause_past_force_promote")) {
                    nemesis.pause_a_move_source(
                        env_duration("NARAD_CHAOS_FORCE_PROMOTE_AFTER", seconds(0)) + seconds(35));
                }
            } else if (nemesis.allows("disk_full") && disk_fills < 2 &&
                       elapsed > duration * (2 + 2 * disk_fills) / 5) {
                nemesis.fill_disk(4, nemesis.between(seconds(3), seconds(10)));
                ++disk_fills;
            } else if (joined && !decommissioned && elapsed > duration * 3 / 5) {
                // The node's partitions grow with the run and copy at 48 KiB/s: a long run's
                // decommission needs longer than a short one's.
                const milliseconds deadline = std::max<milliseconds>(seconds(180), duration / 3);
                EXPECT_TRUE(nemesis.decommission(5, deadline)) << move_logs(leg.cluster);
                decommissioned = true;
            } else {
                nemesis.random_fault({1, 2, 3, 4});
            }
            // Quiet stretches between faults, so the checker sees the cluster outside fault
            // windows too.
            nemesis.gap(seconds(8), seconds(20));
        }
        leg.finish(traffic, seconds(180));
    }
    leg.judge();
}

}  // namespace
}  // namespace narad::testing
