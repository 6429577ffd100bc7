// The multi-process test harness: starts real `narad` processes on 127.0.0.1, each with its own
// data directory and free ports, and can SIGKILL, SIGSTOP/SIGCONT, stop and restart them. Waits are
// on conditions (a probe that succeeds) with a bounded deadline, never fixed sleeps.
//
// NodeProcess is one node; it picks its API, cluster and etcd ports once and keeps them (and its
// data directory) across restarts, so a restarted node is the same member to its cluster. Each
// time a node's process ends, a sanitizer report in its log (or the sanitizers' exit code) fails
// the test, so a node built with ThreadSanitizer (`make tsan`) fails on any race it meets. Cluster
// owns N NodeProcesses in one temporary directory: node 1 bootstraps, the others join through it
// one at a time (only one etcd learner may exist at once). One harness per test, driven from the
// test's main thread; client() hands out a new HttpClient that one other thread may use.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/ledger.h"
#include "net/http_client.h"

namespace narad::testing {

// A port nobody listens on right now, claimed against other test processes (base/loopback_ports.h).
uint16_t free_port();

// A fresh temporary directory, removed by the destructor (kept when NARAD_TEST_KEEP=1).
class TempDir {
  public:
    TempDir();
    ~TempDir();
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

// The cluster secret every harness node shares unless a test sets NARAD_CLUSTER_SECRET itself.
inline constexpr const char* kTestClusterSecret = "narad-test-cluster-secret";
// Harness nodes run secured, as `narad serve` does by default, with this root password unless a
// test sets NARAD_ADMIN_PASSWORD (or NARAD_SECURITY_ENABLED=false) itself.
inline constexpr const char* kTestAdminPassword = "narad-test-admin-password";

struct NodeOptions {
    std::string node_id = "n1";
    std::map<std::string, std::string> env;  // extra environment (NARAD_FAILPOINTS, tunables...)
    std::vector<std::string> args;           // extra `narad serve` flags
    // "127.0.0.1:<cluster port>" of a member to join through; empty bootstraps a new cluster. Used
    // only until the node has once become ready: a restart finds its cluster in its data dir.
    std::string join;
    std::chrono::milliseconds ready_timeout = std::chrono::seconds(90);
    // The address the node binds and advertises, and the network namespace it runs in (empty:
    // the test's own). See Network.
    std::string host = "127.0.0.1";
    std::string netns;
    // Set when the node serves its API over TLS (NARAD_TLS_CERT_FILE): the harness's clients then
    // speak https to it, trusting this PEM authority.
    std::string api_ca_file;
};

class NodeProcess {
  public:
    NodeProcess(std::string data_directory, NodeOptions options);
    ~NodeProcess();  // kills the process if it still runs
    NodeProcess(const NodeProcess&) = delete;
    NodeProcess& operator=(const NodeProcess&) = delete;

    // Starts `narad serve` and waits until /readyz answers 200 (or the process exits: a fatal
    // gtest failure either way).
    void start();
    // Starts `narad serve` without waiting; pair with wait_ready().
    void spawn();
    // Waits until /readyz answers 200; false if the process exited or the timeout passed.
    bool wait_ready(std::chrono::milliseconds timeout);
    // One /readyz probe.
    bool ready() const;
    // SIGTERM, then waits for a clean exit; returns the wait status (0 = exited with 0).
    int stop();
    // SIGKILL (as a crash), then reaps the process.
    void kill();
    // Stops the node if it runs (SIGTERM), then starts it again with the same ports and data.
    void restart();
    void pause();   // SIGSTOP
    void resume();  // SIGCONT
    bool running();
    // The extra environment of the node's next start (e.g. to arm a failpoint for one run).
    std::map<std::string, std::string>& env() { return options_.env; }
    // Steps the node's wall clock to `offset` from the real time (ClusterOptions::steppable_clocks;
    // takes effect within a second). False when the node's clock cannot be stepped.
    bool step_clock(std::chrono::seconds offset);
    bool paused() const { return paused_; }
    // The wait status of the last run, once it ended (running() false); -1 before.
    int exit_status() const { return exit_status_; }

    const std::string& node_id() const { return options_.node_id; }
    uint16_t port() const { return port_; }
    uint16_t cluster_port() const { return cluster_port_; }
    uint16_t etcd_client_port() const { return etcd_client_port_; }
    uint16_t etcd_peer_port() const { return etcd_peer_port_; }
    const std::string& host() const { return options_.host; }
    std::string api_address() const { return host() + ":" + std::to_string(port_); }
    std::string cluster_address() const { return host() + ":" + std::to_string(cluster_port_); }
    pid_t pid() const { return pid_; }
    const std::string& data_directory() const { return data_directory_; }
    std::string log_path() const { return data_directory_ + ".log"; }
    // The `narad serve` arguments the next start uses (after the binary).
    std::vector<std::string> serve_args() const;
    // A fresh client for this node (one per thread).
    // A client of this node's API, signed in as its root user when the node is secured.
    net::HttpClient client(std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
    // What client() is made from (https when NodeOptions::api_ca_file is set).
    net::ClientOptions client_options(
        std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
    // "admin:<password>" of a secured node whose root password the harness knows; empty when
    // security is off or the password was generated.
    std::string credentials() const;

  private:
    // The process ended with `status`: a sanitizer's report in the log written since the last
    // check, or the sanitizers' exit code, is a test failure.
    void check_for_sanitizer_report(int status);

    std::string data_directory_;
    NodeOptions options_;
    uint16_t port_;
    uint16_t cluster_port_;
    uint16_t etcd_client_port_;
    uint16_t etcd_peer_port_;
    pid_t pid_ = -1;
    int exit_status_ = -1;
    bool paused_ = false;
    bool was_ready_ = false;           // once ready, the data dir names the cluster: no more --join
    uintmax_t log_checked_bytes_ = 0;  // of the log, already searched for sanitizer reports
};

// Debian's libfaketime (package faketime), preloaded by ClusterOptions::steppable_clocks.
inline constexpr const char* kFaketimeLibrary =
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

// Polls `condition` until it returns true or `timeout` passes; returns whether it became true.
bool eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds timeout = std::chrono::seconds(30),
                std::chrono::milliseconds poll = std::chrono::milliseconds(20));

// Shortcuts for tests.
Result<net::HttpResponse> http(net::HttpClient& client, std::string_view method,
                               std::string_view target, std::string_view body = {});
void create_topic(net::HttpClient& client, const std::string& name, int partitions);
// GET `target` and parse the JSON body; nullopt on a transport error, a status other than 200 or
// a body that is not JSON.
std::optional<nlohmann::json> get_json(net::HttpClient& client, std::string_view target);

// Per-node network namespaces on one bridge, so links between nodes can be cut: node i runs in
// its own namespace at 10.<a>.<b>.i, the test reaches every node through the bridge (.254), and
// a cut is a blackhole route inside a namespace (no firewall needed). Names and the subnet come
// from the test's pid, so concurrent tests do not collide. Root only; torn down by the destructor.
class Network {
  public:
    explicit Network(int nodes);
    ~Network();
    Network(const Network&) = delete;
    Network& operator=(const Network&) = delete;

    // Whether the namespaces were built (false: not root, or `ip` failed; see error()).
    bool ready() const { return ready_; }
    const std::string& error() const { return error_; }
    std::string host(int index) const;
    std::string netns(int index) const;
    // Node `from` can no longer send to node `to` (one way: `to`'s packets still arrive, but
    // nothing `from` sends, replies included, reaches `to`).
    bool cut_one_way(int from, int to);
    // Both directions.
    bool cut(int a, int b) { return cut_one_way(a, b) && cut_one_way(b, a); }
    // Every cut of node `from`'s namespace goes.
    bool heal(int from);

  private:
    bool run(const std::string& command);

    int nodes_;
    std::string prefix_;  // of the namespace, bridge and veth names
    std::string subnet_;  // "10.<a>.<b>."
    bool ready_ = false;
    std::string error_;
    std::map<int, std::set<int>> cuts_;  // from -> to
};

// One node that every test of a suite shares, in a temporary data directory: a suite's
// SetUpTestSuite() starts it, its TearDownTestSuite() stops it and fails the suite unless the node
// exited cleanly.
class SuiteNode {
  public:
    // Starts the node (a fatal gtest failure if it does not become ready) and returns it.
    NodeProcess* start(NodeOptions options = {});
    // Stops the node (expecting exit code 0) and removes its directory.
    void stop();
    // The node's data directory.
    std::string data_directory() const { return dir_->path() + "/data"; }

  private:
    std::unique_ptr<TempDir> dir_;
    std::unique_ptr<NodeProcess> node_;
};

struct ClusterOptions {
    int nodes = 3;
    // Run every node in its own network namespace (Cluster::network()), so links can be cut.
    bool network_namespaces = false;
    // Nodes (by index) whose data directory is a tmpfs of this size (mount's `size=`, e.g.
    // "256m"), so a test can fill it: a disk that runs full. Root only.
    std::map<int, std::string> small_disks;
    int voters = 3;  // the first `voters` nodes host etcd members (the node's cluster.voters)
    // Applied to every node, over the harness defaults (security off, the shared secret).
    std::map<std::string, std::string> env;
    std::vector<std::string> args;  // extra `narad serve` flags for every node
    std::chrono::milliseconds ready_timeout = std::chrono::seconds(90);
    // Extra environment of single nodes (by index), applied over `env`: a failpoint or a tunable
    // on one node only.
    std::map<int, std::map<std::string, std::string>> node_env;
    // NodeOptions::api_ca_file of every node.
    std::string api_ca_file;
    // Run every node under Debian's libfaketime, its wall clock offset by a file the harness owns
    // (NodeProcess::step_clock); the monotonic clock stays real.
    bool steppable_clocks = false;
};

// Runs the narad CLI through the shell with `args` (quoted by the caller), standard input fed
// from `input`; its exit status (as pclose's) and what it wrote to stdout and stderr.
std::pair<int, std::string> run_narad_cli(const std::string& args, const std::string& input = "");

// The value of one series in a node's /metrics: `series` is the exact name and labels as the node
// renders them (`narad_moves_total{outcome="completed"}`). nullopt if the node does not answer or
// has no such series.
std::optional<double> scrape_metric(const NodeProcess& node, std::string_view series);

// The test tunables that keep failover short: lease TTL 2 s, dead after 3 s, controller tick
// 500 ms (NARAD_TEST_LEASE_TTL, NARAD_TEST_DEAD_AFTER, NARAD_TEST_CONTROLLER_TICK override them).
std::map<std::string, std::string> fast_failover_env();

class Cluster {
  public:
    explicit Cluster(ClusterOptions options);
    ~Cluster();  // kills every node still running
    Cluster(const Cluster&) = delete;
    Cluster& operator=(const Cluster&) = delete;

    // Starts node 1 (bootstrap), then each other node joining through node 1, one at a time:
    // each waits for /readyz, and an etcd-hosting joiner also for its learner's promotion before
    // the next starts; then until every node names the same controller. Fatal gtest failure if
    // a node does not make it.
    void start();
    // As start(), for nodes 1..count only; the others stay down until join() starts them.
    void start_first(int count);
    // Starts node `index` for the first time, joining through node 1, and waits until it is ready
    // (and, when it hosts an etcd member, promoted to voter). Fatal gtest failure otherwise.
    void join(int index);

    int size() const { return static_cast<int>(nodes_.size()); }
    // Nodes are numbered from 1, as their ids: node(1) is "n1".
    NodeProcess& node(int index);
    // The index of the node with this id, or 0.
    int index_of(const std::string& node_id) const;
    // Indices of nodes that run and are not paused.
    std::vector<int> live() const;

    void kill(int index) { node(index).kill(); }
    void pause(int index) { node(index).pause(); }
    void resume(int index) { node(index).resume(); }
    // Starts a killed or stopped node again (same ports and data) and waits until it is ready.
    void restart(int index);

    // GET /v1/cluster/status or /v1/cluster/members of one node (nullopt if it does not answer).
    std::optional<nlohmann::json> status(int index) const;
    std::optional<nlohmann::json> members(int index) const;
    // The controller as node `observer` sees it ("" if it does not answer or names none).
    std::string controller_seen_by(int observer) const;
    // The controller's index when every live node names the same one and that node says
    // is_controller; 0 otherwise.
    int controller() const;
    // Waits until controller() names a node other than `not_index` (0 = any); returns its index or
    // 0 after the timeout.
    int wait_for_controller(int not_index = 0,
                            std::chrono::milliseconds timeout = std::chrono::seconds(20)) const;
    // Waits until node `observer` reports `node_id` with this status ("alive", "dead", ...).
    bool wait_member_status(int observer, const std::string& node_id, const std::string& status,
                            std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
    // Waits until `node_id`'s etcd member is a voter and no etcd learner is left (node
    // `observer`'s view).
    bool wait_voter(int observer, const std::string& node_id,
                    std::chrono::milliseconds timeout = std::chrono::seconds(60)) const;
    // The node hosting the etcd leader (asked of every live node's etcd port), or 0.
    int etcd_leader() const;
    // Moves etcd leadership to node `to` (which hosts a voter) and waits until it leads.
    bool transfer_etcd_leadership(int to);

    // One key of the metastore, through the etcd JSON gateway of a live node hosting etcd: its
    // value, "" (with `found` false) when absent; nullopt when no etcd member answered.
    struct EtcdValue {
        bool found = false;
        std::string value;
        int64_t mod_revision = 0;
    };
    std::optional<EtcdValue> etcd_get(const std::string& key) const;
    // Writes one key as a plain put (no lease, no compare); false when no etcd member took it.
    bool etcd_put(const std::string& key, const std::string& value) const;

    const std::string& directory() const { return directory_.path(); }
    // The namespaces, when ClusterOptions::network_namespaces asked for them (else nullptr).
    Network* network() { return network_.get(); }

  private:
    NodeOptions node_options(int index) const;

    ClusterOptions options_;
    TempDir directory_;
    std::unique_ptr<Network> network_;
    std::vector<std::string> mounts_;  // tmpfs data directories, unmounted by the destructor
    std::vector<std::unique_ptr<NodeProcess>> nodes_;
};

// Per-member owned_partitions, from node `observer`'s /v1/cluster/members (empty when it does not
// answer).
std::map<std::string, int> owned_partitions(const Cluster& cluster, int observer);

// Consumes up to 100 messages of `topic` through `client` (waiting up to 500 ms), records them in
// the ledger (and, given one, each one's partition and offset in `offsets`) and acks them. Returns
// how many came back, or -1 when the node did not answer 200/204.
int consume_and_ack(net::HttpClient& client, const std::string& topic, Ledger& ledger,
                    OffsetBook* offsets = nullptr);

}  // namespace narad::testing
