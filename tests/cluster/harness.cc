#include "cluster/harness.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/assert.h"
#include "base/base64.h"
#include "base/loopback_ports.h"

extern char** environ;

namespace narad::testing {

using nlohmann::json;

uint16_t free_port() { return unused_loopback_ports(1).front(); }

namespace {

std::string describe_wait_status(int status) {
    if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return std::string("signal ") + ::strsignal(WTERMSIG(status));
    return "wait status " + std::to_string(status);
}

// The last `lines` lines of a file ("" when it cannot be read).
std::string tail_of(const std::string& path, size_t lines) {
    std::ifstream in(path);
    std::deque<std::string> last;
    for (std::string line; std::getline(in, line);) {
        last.push_back(std::move(line));
        if (last.size() > lines) last.pop_front();
    }
    std::string out;
    for (const std::string& line : last) out += line + "\n";
    return out;
}

// The exit code the sanitizers use for a run that reported something (TSAN_OPTIONS'
// `exitcode`, also their default), so a node that halted on a report is told from other failures.
constexpr int kSanitizerExitCode = 66;

}  // namespace

TempDir::TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "narad-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
}

TempDir::~TempDir() {
    // NARAD_TEST_KEEP=1 keeps data and logs for a post-mortem.
    const char* keep = std::getenv("NARAD_TEST_KEEP");
    if (keep != nullptr && std::string_view(keep) == "1") {
        std::fprintf(stderr, "kept %s\n", path_.c_str());
        return;
    }
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
    std::filesystem::remove(path_ + ".log", ignored);
}

NodeProcess::NodeProcess(std::string data_directory, NodeOptions options)
    : data_directory_(std::move(data_directory)),
      options_(std::move(options)),
      port_(free_port()),
      cluster_port_(free_port()),
      etcd_client_port_(free_port()),
      etcd_peer_port_(free_port()) {}

NodeProcess::~NodeProcess() {
    if (pid_ > 0) kill();
}

std::vector<std::string> NodeProcess::serve_args() const {
    std::vector<std::string> args = {"serve",
                                     "--addr",
                                     api_address(),
                                     "--cluster-port",
                                     std::to_string(cluster_port_),
                                     "--etcd-client-port",
                                     std::to_string(etcd_client_port_),
                                     "--etcd-peer-port",
                                     std::to_string(etcd_peer_port_),
                                     "--data-dir",
                                     data_directory_,
                                     "--node-id",
                                     options_.node_id,
                                     "--log-format",
                                     "text"};
    if (!options_.join.empty() && !was_ready_) {
        args.push_back("--join");
        args.push_back(options_.join);
    }
    args.insert(args.end(), options_.args.begin(), options_.args.end());
    return args;
}

void NodeProcess::spawn() {
    ASSERT_LE(pid_, 0) << "node " << options_.node_id << " already running";
    std::vector<std::string> args = serve_args();
    args.insert(args.begin(), NARAD_BINARY);
    std::map<std::string, std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        std::string entry(*e);
        auto eq = entry.find('=');
        if (eq != std::string::npos && !entry.starts_with("NARAD_")) {
            env[entry.substr(0, eq)] = entry.substr(eq + 1);
        }
    }
    env["NARAD_SECURITY_ENABLED"] = "true";
    env["NARAD_ADMIN_PASSWORD"] = kTestAdminPassword;
    env["NARAD_CLUSTER_SECRET"] = kTestClusterSecret;
    for (const auto& [key, value] : options_.env) env[key] = value;
    std::vector<std::string> env_strings;
    for (const auto& [key, value] : env) env_strings.push_back(key + "=" + value);

    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    std::string log = log_path();
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (!options_.netns.empty()) {
        // `ip netns exec` execs the node in place, so the pid stays the node's.
        static char ip[] = "ip", netns[] = "netns", exec[] = "exec";
        argv.insert(argv.begin(), {ip, netns, exec, options_.netns.data()});
    }
    const char* program = options_.netns.empty() ? NARAD_BINARY : "/usr/sbin/ip";
    int rc = posix_spawn(&pid_, program, &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    paused_ = false;
    ASSERT_EQ(rc, 0) << "cannot start " << NARAD_BINARY;
}

bool NodeProcess::ready() const {
    net::HttpClient probe = client(std::chrono::milliseconds(500));
    auto response = probe.get("/readyz");
    return response.is_ok() && response->status == 200;
}

bool NodeProcess::wait_ready(std::chrono::milliseconds timeout) {
    bool done =
        eventually([&] { return !running() || ready(); }, timeout, std::chrono::milliseconds(25));
    if (done && running()) {
        was_ready_ = true;
        return true;
    }
    return false;
}

void NodeProcess::start() {
    spawn();
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_TRUE(wait_ready(options_.ready_timeout))
        << "node " << options_.node_id << " did not become ready; see " << log_path();
}

NodeProcess* SuiteNode::start(NodeOptions options) {
    dir_ = std::make_unique<TempDir>();
    node_ = std::make_unique<NodeProcess>(data_directory(), std::move(options));
    node_->start();
    return node_.get();
}

void SuiteNode::stop() {
    if (node_) EXPECT_EQ(node_->stop(), 0) << "the suite's node did not exit cleanly";
    node_.reset();
    dir_.reset();
}

int NodeProcess::stop() {
    if (pid_ <= 0) return -1;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    paused_ = false;
    exit_status_ = status;
    check_for_sanitizer_report(status);
    return status;
}

void NodeProcess::kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    paused_ = false;
    check_for_sanitizer_report(status);
}

void NodeProcess::restart() {
    if (running()) stop();
    start();
}

void NodeProcess::pause() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGSTOP);
    paused_ = true;
}

void NodeProcess::resume() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);
    paused_ = false;
}

bool NodeProcess::step_clock(std::chrono::seconds offset) {
    auto file = options_.env.find("FAKETIME_TIMESTAMP_FILE");
    if (file == options_.env.end()) return false;
    std::ofstream out(file->second, std::ios::trunc);
    out << (offset.count() >= 0 ? "+" : "") << offset.count() << "\n";
    return static_cast<bool>(out.flush());
}

bool NodeProcess::running() {
    if (pid_ <= 0) return false;
    int status = 0;
    pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
        pid_ = -1;
        paused_ = false;
        exit_status_ = status;
        check_for_sanitizer_report(status);
        return false;
    }
    return true;
}

void NodeProcess::check_for_sanitizer_report(int status) {
    // A report opens with "WARNING: ThreadSanitizer: ..." (or "ERROR: AddressSanitizer: ...");
    // the harness shows it from there, up to a bounded excerpt.
    constexpr size_t kExcerptLines = 80;
    std::ifstream in(log_path());
    in.seekg(static_cast<std::streamoff>(log_checked_bytes_));
    std::string report;
    size_t report_lines = 0;
    for (std::string line; std::getline(in, line);) {
        if (report_lines == 0 && line.find("Sanitizer: ") == std::string::npos) continue;
        if (report_lines++ < kExcerptLines) report += line + "\n";
    }
    std::error_code ignored;
    log_checked_bytes_ = std::filesystem::file_size(log_path(), ignored);
    if (!report.empty()) {
        ADD_FAILURE() << "node " << options_.node_id << " reported a sanitizer finding ("
                      << log_path() << "):\n"
                      << report;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == kSanitizerExitCode) {
        ADD_FAILURE() << "node " << options_.node_id << " exited with the sanitizers' exit code "
                      << kSanitizerExitCode << "; see " << log_path();
    }
}

net::HttpClient NodeProcess::client(std::chrono::milliseconds timeout) const {
    return net::HttpClient(client_options(timeout));
}

net::ClientOptions NodeProcess::client_options(std::chrono::milliseconds timeout) const {
    net::ClientOptions options;
    options.host = options_.host;
    options.port = port_;
    options.request_timeout = timeout;
    options.connect_timeout = std::min(timeout, std::chrono::milliseconds(5000));
    options.basic_auth = credentials();
    if (!options_.api_ca_file.empty()) {
        options.tls = net::ClientTls{{"", "", options_.api_ca_file}, net::HostCheck::name};
    }
    return options;
}

std::string NodeProcess::credentials() const {
    auto security = options_.env.find("NARAD_SECURITY_ENABLED");
    if (security != options_.env.end() && security->second == "false") return "";
    auto password = options_.env.find("NARAD_ADMIN_PASSWORD");
    if (password == options_.env.end()) return std::string("admin:") + kTestAdminPassword;
    return password->second.empty() ? "" : "admin:" + password->second;
}

std::pair<int, std::string> run_narad_cli(const std::string& args, const std::string& input) {
    TempDir dir;
    const std::string input_path = dir.path() + "/stdin";
    std::ofstream(input_path) << input;
    const std::string command =
        std::string(NARAD_BINARY) + " " + args + " < " + input_path + " 2>&1";
    std::string out;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return {-1, "popen failed"};
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
    return {::pclose(pipe), out};
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds poll) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) return true;
        std::this_thread::sleep_for(poll);
    }
    return condition();
}

Result<net::HttpResponse> http(net::HttpClient& client, std::string_view method,
                               std::string_view target, std::string_view body) {
    return client.request(method, target, body, body.empty() ? "" : "application/json");
}

void create_topic(net::HttpClient& client, const std::string& name, int partitions) {
    auto response = client.post("/v1/topics", R"({"name":")" + name + R"(","partitions":)" +
                                                  std::to_string(partitions) + "}");
    ASSERT_TRUE(response.is_ok()) << response.status().to_string();
    ASSERT_EQ(response->status, 201) << response->body;
}

std::optional<json> get_json(net::HttpClient& client, std::string_view target) {
    auto response = client.get(target);
    if (!response.is_ok() || response->status != 200) return std::nullopt;
    json body = json::parse(response->body, nullptr, false);
    if (body.is_discarded()) return std::nullopt;
    return body;
}

std::map<std::string, std::string> fast_failover_env() {
    // NARAD_TEST_LEASE_TTL, NARAD_TEST_DEAD_AFTER and NARAD_TEST_CONTROLLER_TICK in the test's own
    // environment override the defaults (a slow machine, or a node bug to work around).
    auto setting = [](const char* name, const char* fallback) {
        const char* value = std::getenv(name);
        return std::string(value != nullptr && *value != '\0' ? value : fallback);
    };
    std::string lease_ttl = setting("NARAD_TEST_LEASE_TTL", "2s");
    std::string dead_after = setting("NARAD_TEST_DEAD_AFTER", "3s");
    std::string tick = setting("NARAD_TEST_CONTROLLER_TICK", "500ms");
    return {{"NARAD_CLUSTER_LEASE_TTL", lease_ttl},
            {"NARAD_CLUSTER_DEAD_AFTER", dead_after},
            {"NARAD_CLUSTER_CONTROLLER_TICK", tick}};
}

Network::Network(int nodes) : nodes_(nodes) {
    int pid = static_cast<int>(::getpid());
    prefix_ = "nr" + std::to_string(pid % 100000);
    subnet_ = "10." + std::to_string(100 + pid % 100) + "." + std::to_string(pid / 100 % 250) + ".";
    std::string bridge = prefix_ + "b";
    ready_ = run("ip link add " + bridge + " type bridge") &&
             run("ip addr add " + subnet_ + "254/24 dev " + bridge) &&
             run("ip link set " + bridge + " up");
    for (int index = 1; ready_ && index <= nodes_; ++index) {
        std::string ns = netns(index);
        std::string veth = prefix_ + "v" + std::to_string(index);
        ready_ = run("ip netns add " + ns) &&
                 run("ip link add " + veth + " type veth peer name " + veth + "p") &&
                 run("ip link set " + veth + "p netns " + ns) &&
                 run("ip link set " + veth + " master " + bridge + " up") &&
                 run("ip -n " + ns + " addr add " + host(index) + "/24 dev " + veth + "p") &&
                 run("ip -n " + ns + " link set " + veth + "p up") &&
                 run("ip -n " + ns + " link set lo up");
    }
}

Network::~Network() {
    for (int index = 1; index <= nodes_; ++index) {
        (void)run("ip netns del " + netns(index) + " 2>/dev/null");
    }
    (void)run("ip link del " + prefix_ + "b 2>/dev/null");
}

bool Network::run(const std::string& command) {
    if (std::system(command.c_str()) == 0) return true;
    if (error_.empty()) error_ = "failed: " + command;
    return false;
}

std::string Network::host(int index) const { return subnet_ + std::to_string(index); }
std::string Network::netns(int index) const { return prefix_ + "n" + std::to_string(index); }

bool Network::cut_one_way(int from, int to) {
    if (!cuts_[from].insert(to).second) return true;
    return run("ip -n " + netns(from) + " route add blackhole " + host(to) + "/32");
}

bool Network::heal(int from) {
    bool healed = true;
    for (int to : cuts_[from]) {
        healed &= run("ip -n " + netns(from) + " route del blackhole " + host(to) + "/32");
    }
    cuts_.erase(from);
    return healed;
}

Cluster::Cluster(ClusterOptions options) : options_(std::move(options)) {
    NARAD_ASSERT(options_.nodes >= 1 && options_.nodes <= 9, "a test cluster has 1 to 9 nodes");
    if (options_.network_namespaces) {
        network_ = std::make_unique<Network>(options_.nodes);
        EXPECT_TRUE(network_->ready()) << "network namespaces: " << network_->error();
    }
    for (const auto& [index, size] : options_.small_disks) {
        std::string path = directory_.path() + "/n" + std::to_string(index);
        std::filesystem::create_directories(path);
        std::string mount = "mount -t tmpfs -o size=" + size + " tmpfs '" + path + "'";
        EXPECT_EQ(std::system(mount.c_str()), 0) << mount;
        mounts_.push_back(path);
    }
    for (int index = 1; index <= options_.nodes; ++index) {
        NodeOptions node = node_options(index);
        if (options_.steppable_clocks) {
            node.env["LD_PRELOAD"] = kFaketimeLibrary;
            node.env["FAKETIME_TIMESTAMP_FILE"] =
                directory_.path() + "/n" + std::to_string(index) + ".clock";
            node.env["FAKETIME_CACHE_DURATION"] = "1";  // re-read the offset once a second
            node.env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1";
            std::ofstream(node.env["FAKETIME_TIMESTAMP_FILE"]) << "+0\n";
        }
        if (network_ != nullptr && network_->ready()) {
            node.host = network_->host(index);
            node.netns = network_->netns(index);
        }
        // Node 1 bootstraps; every other node joins through node 1's cluster port.
        if (index > 1) node.join = nodes_.front()->cluster_address();
        nodes_.push_back(std::make_unique<NodeProcess>(
            directory_.path() + "/n" + std::to_string(index), std::move(node)));
    }
}

Cluster::~Cluster() {
    // A node that exited on its own (no stop() or kill() by the test) is the likeliest cause of a
    // failure that reads as refused connections: say so, with the end of its log.
    for (auto& node : nodes_) {
        if (node->pid() <= 0 || node->running()) continue;
        std::fprintf(stderr, "node %s exited on its own (%s); the end of %s:\n%s\n",
                     node->node_id().c_str(), describe_wait_status(node->exit_status()).c_str(),
                     node->log_path().c_str(), tail_of(node->log_path(), 40).c_str());
    }
    for (auto& node : nodes_) node->kill();
    nodes_.clear();
    network_.reset();  // after the nodes: their namespaces go last
    for (const std::string& path : mounts_) (void)std::system(("umount '" + path + "'").c_str());
}

NodeOptions Cluster::node_options(int index) const {
    NodeOptions node;
    node.node_id = "n" + std::to_string(index);
    node.env = options_.env;
    if (auto extra = options_.node_env.find(index); extra != options_.node_env.end()) {
        for (const auto& [key, value] : extra->second) node.env[key] = value;
    }
    node.args = options_.args;
    node.ready_timeout = options_.ready_timeout;
    node.api_ca_file = options_.api_ca_file;
    return node;
}

void Cluster::start() { start_first(size()); }

void Cluster::start_first(int count) {
    NARAD_ASSERT(count >= 1 && count <= size(), "start_first: count out of range");
    for (int index = 1; index <= count; ++index) {
        join(index);
        if (::testing::Test::HasFatalFailure()) return;
    }
    ASSERT_NE(wait_for_controller(0, options_.ready_timeout), 0)
        << "the nodes never agreed on a controller";
}

void Cluster::join(int index) {
    NodeProcess& joining = node(index);
    joining.start();
    if (::testing::Test::HasFatalFailure()) return;
    // Only one etcd learner at a time: wait for this one's promotion before the next joins.
    if (index > 1 && index <= options_.voters) {
        ASSERT_TRUE(wait_voter(1, joining.node_id(), options_.ready_timeout))
            << joining.node_id() << "'s etcd member was not promoted to voter";
    }
}

NodeProcess& Cluster::node(int index) {
    NARAD_ASSERT(index >= 1 && index <= size(), "node index out of range");
    return *nodes_[index - 1];
}

int Cluster::index_of(const std::string& node_id) const {
    for (int index = 1; index <= size(); ++index) {
        if (nodes_[index - 1]->node_id() == node_id) return index;
    }
    return 0;
}

std::vector<int> Cluster::live() const {
    std::vector<int> out;
    for (int index = 1; index <= size(); ++index) {
        NodeProcess& process = *nodes_[index - 1];
        if (process.running() && !process.paused()) out.push_back(index);
    }
    return out;
}

void Cluster::restart(int index) {
    NodeProcess& process = node(index);
    if (process.running()) process.stop();
    process.start();
}

std::optional<json> Cluster::status(int index) const {
    auto client = nodes_[index - 1]->client(std::chrono::seconds(2));
    return get_json(client, "/v1/cluster/status");
}

std::optional<json> Cluster::members(int index) const {
    auto client = nodes_[index - 1]->client(std::chrono::seconds(2));
    return get_json(client, "/v1/cluster/members");
}

std::string Cluster::controller_seen_by(int observer) const {
    auto body = status(observer);
    if (!body || !body->contains("controller") || !(*body)["controller"].is_string()) return "";
    return (*body)["controller"].get<std::string>();
}

int Cluster::controller() const {
    std::vector<int> up = live();
    if (up.empty()) return 0;
    std::string agreed;
    for (int index : up) {
        std::string seen = controller_seen_by(index);
        if (seen.empty() || (!agreed.empty() && seen != agreed)) return 0;
        agreed = seen;
    }
    int index = index_of(agreed);
    if (index == 0) return 0;
    auto body = status(index);
    if (!body || !body->value("is_controller", false)) return 0;
    return index;
}

int Cluster::wait_for_controller(int not_index, std::chrono::milliseconds timeout) const {
    int found = 0;
    eventually(
        [&] {
            found = controller();
            return found != 0 && found != not_index;
        },
        timeout, std::chrono::milliseconds(100));
    return found != not_index ? found : 0;
}

bool Cluster::wait_member_status(int observer, const std::string& node_id,
                                 const std::string& wanted,
                                 std::chrono::milliseconds timeout) const {
    return eventually(
        [&] {
            auto body = members(observer);
            if (!body) return false;
            for (const auto& member : (*body)["members"]) {
                if (member.value("id", "") == node_id) return member.value("status", "") == wanted;
            }
            return false;
        },
        timeout, std::chrono::milliseconds(100));
}

bool Cluster::wait_voter(int observer, const std::string& node_id,
                         std::chrono::milliseconds timeout) const {
    return eventually(
        [&] {
            auto body = status(observer);
            if (!body) return false;
            bool voter = false;
            for (const auto& member : (*body)["members"]) {
                if (member.value("id", "") == node_id) {
                    voter = member.value("etcd_role", "") == "voter";
                }
            }
            if (!voter) return false;
            if (body->contains("etcd") && (*body)["etcd"].contains("members")) {
                for (const auto& member : (*body)["etcd"]["members"]) {
                    if (member.value("is_learner", false)) return false;
                }
            }
            return true;
        },
        timeout, std::chrono::milliseconds(100));
}

namespace {

// A client of `node`'s etcd member (its JSON gateway).
net::HttpClient etcd_client(const NodeProcess& node) {
    net::ClientOptions options;
    options.host = node.host();
    options.port = node.etcd_client_port();
    options.request_timeout = std::chrono::seconds(2);
    options.connect_timeout = std::chrono::seconds(2);
    return net::HttpClient(options);
}

}  // namespace

int Cluster::etcd_leader() const {
    for (int index : live()) {
        net::HttpClient etcd = etcd_client(*nodes_[index - 1]);
        auto response = etcd.post("/v3/maintenance/status", "{}");
        if (!response.is_ok() || response->status != 200) continue;
        json body = json::parse(response->body, nullptr, false);
        if (body.is_discarded() || !body.contains("header")) continue;
        // The gateway writes uint64 ids as decimal strings.
        std::string member = body["header"].value("member_id", "");
        std::string leader = body.value("leader", "");
        if (!member.empty() && member == leader) return index;
    }
    return 0;
}

namespace {

// The gateway writes int64 fields as decimal strings.
int64_t gateway_int(const json& value) {
    if (value.is_number_integer()) return value.get<int64_t>();
    if (value.is_string()) return std::strtoll(value.get<std::string>().c_str(), nullptr, 10);
    return 0;
}

}  // namespace

std::optional<Cluster::EtcdValue> Cluster::etcd_get(const std::string& key) const {
    for (int index : live()) {
        net::HttpClient etcd = etcd_client(*nodes_[index - 1]);
        auto response = etcd.post("/v3/kv/range", json{{"key", base64_encode(key)}}.dump());
        if (!response.is_ok() || response->status != 200) continue;
        json body = json::parse(response->body, nullptr, false);
        if (body.is_discarded()) continue;
        EtcdValue out;
        if (!body.contains("kvs") || body["kvs"].empty()) return out;
        const json& kv = body["kvs"][0];
        auto value = base64_decode(kv.value("value", ""));
        if (!value) continue;
        out.found = true;
        out.value = *value;
        out.mod_revision = gateway_int(kv.value("mod_revision", json()));
        return out;
    }
    return std::nullopt;
}

bool Cluster::etcd_put(const std::string& key, const std::string& value) const {
    for (int index : live()) {
        net::HttpClient etcd = etcd_client(*nodes_[index - 1]);
        auto response =
            etcd.post("/v3/kv/put",
                      json{{"key", base64_encode(key)}, {"value", base64_encode(value)}}.dump());
        if (response.is_ok() && response->status == 200) return true;
    }
    return false;
}

bool Cluster::transfer_etcd_leadership(int to) {
    int leader = etcd_leader();
    if (leader == 0) return false;
    if (leader == to) return true;
    net::HttpClient etcd = etcd_client(*nodes_[leader - 1]);
    auto listed = etcd.post("/v3/cluster/member/list", "{}");
    if (!listed.is_ok() || listed->status != 200) return false;
    json body = json::parse(listed->body, nullptr, false);
    if (body.is_discarded() || !body.contains("members")) return false;
    for (const auto& member : body["members"]) {
        if (member.value("name", "") != node(to).node_id()) continue;
        auto moved = etcd.post("/v3/maintenance/transferleadership",
                               json{{"targetID", member.value("ID", "")}}.dump());
        if (!moved.is_ok() || moved->status != 200) return false;
        return eventually([&] { return etcd_leader() == to; }, std::chrono::seconds(20));
    }
    return false;
}

std::optional<double> scrape_metric(const NodeProcess& node, std::string_view series) {
    net::HttpClient client = node.client(std::chrono::seconds(5));
    auto response = client.get("/metrics");
    if (!response.is_ok() || response->status != 200) return std::nullopt;
    std::string_view text = response->body;
    while (!text.empty()) {
        size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
        if (line.size() > series.size() && line.starts_with(series) && line[series.size()] == ' ') {
            return std::strtod(std::string(line.substr(series.size() + 1)).c_str(), nullptr);
        }
    }
    return std::nullopt;
}

int consume_and_ack(net::HttpClient& client, const std::string& topic, Ledger& ledger,
                    OffsetBook* offsets) {
    auto response = client.get("/v1/topics/" + topic + "/consume?max=100&wait=500ms");
    if (!response.is_ok()) return -1;
    if (response->status == 204) return 0;
    if (response->status != 200) return -1;
    auto body = nlohmann::json::parse(response->body, nullptr, false);
    if (body.is_discarded() || !body.contains("messages")) return -1;
    auto handles = nlohmann::json::array();
    for (const auto& message : body["messages"]) {
        const auto& payload = message["payload"];
        int id = payload.is_object() && payload.contains("id") ? payload["id"].get<int>() : -1;
        ledger.deliver(id);
        if (offsets != nullptr) {
            offsets->record(message.value("partition", -1), message.value("offset", int64_t{-1}),
                            id);
        }
        handles.push_back(message["receipt_handle"]);
    }
    // A lost ack only means a redelivery, which the ledger counts as a duplicate.
    if (!handles.empty()) {
        (void)client.post("/v1/topics/" + topic + "/ack/batch",
                          nlohmann::json{{"receipt_handles", handles}}.dump());
    }
    return static_cast<int>(handles.size());
}

std::map<std::string, int> owned_partitions(const Cluster& cluster, int observer) {
    std::map<std::string, int> owned;
    auto body = cluster.members(observer);
    if (!body) return owned;
    for (const auto& member : (*body)["members"]) {
        owned[member.value("id", "")] = member.value("owned_partitions", -1);
    }
    return owned;
}

}  // namespace narad::testing
