#include "cluster/harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

extern char** environ;

namespace narad::testing {

uint16_t free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    socklen_t length = sizeof address;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    ::close(fd);
    return ntohs(address.sin_port);
}

TempDir::TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "narad-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
}

TempDir::~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
    std::filesystem::remove(path_ + ".log", ignored);
}

NodeProcess::NodeProcess(std::string data_directory, NodeOptions options)
    : data_directory_(std::move(data_directory)),
      options_(std::move(options)),
      port_(free_port()) {}

NodeProcess::~NodeProcess() {
    if (pid_ > 0) kill();
}

void NodeProcess::start() {
    ASSERT_LE(pid_, 0) << "node already running";
    std::vector<std::string> args = {NARAD_BINARY,     "serve",
                                     "--addr",         "127.0.0.1:" + std::to_string(port_),
                                     "--cluster-port", std::to_string(free_port()),
                                     "--data-dir",     data_directory_,
                                     "--node-id",      options_.node_id,
                                     "--log-format",   "text"};
    args.insert(args.end(), options_.args.begin(), options_.args.end());
    std::map<std::string, std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        std::string entry(*e);
        auto eq = entry.find('=');
        if (eq != std::string::npos && !entry.starts_with("NARAD_")) {
            env[entry.substr(0, eq)] = entry.substr(eq + 1);
        }
    }
    env["NARAD_SECURITY_ENABLED"] = "false";
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
    int rc = posix_spawn(&pid_, NARAD_BINARY, &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ASSERT_EQ(rc, 0) << "cannot start " << NARAD_BINARY;

    bool ready = eventually(
        [&] {
            if (!running()) return true;  // exited: fail below
            net::HttpClient probe = client(std::chrono::milliseconds(500));
            auto response = probe.get("/readyz");
            return response.is_ok() && response->status == 200;
        },
        std::chrono::seconds(60), std::chrono::milliseconds(25));
    ASSERT_TRUE(ready && running()) << "node did not become ready; see " << log;
}

int NodeProcess::stop() {
    if (pid_ <= 0) return -1;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
}

void NodeProcess::kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
}

void NodeProcess::pause() { ::kill(pid_, SIGSTOP); }
void NodeProcess::resume() { ::kill(pid_, SIGCONT); }

bool NodeProcess::running() {
    if (pid_ <= 0) return false;
    int status = 0;
    pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
        pid_ = -1;
        return false;
    }
    return true;
}

net::HttpClient NodeProcess::client(std::chrono::milliseconds timeout) const {
    net::ClientOptions options;
    options.host = "127.0.0.1";
    options.port = port_;
    options.request_timeout = timeout;
    options.connect_timeout = std::min(timeout, std::chrono::milliseconds(5000));
    return net::HttpClient(options);
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

}  // namespace narad::testing
