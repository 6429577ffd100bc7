#include "cli/dev_cluster_runner.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "net/http_client.h"

namespace narad::cli {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kPoll{200};
constexpr milliseconds kProbeTimeout{500};
constexpr size_t kLogTailLines = 15;

std::string seconds_since(Clock::time_point start) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1fs",
                  std::chrono::duration<double>(Clock::now() - start).count());
    return text;
}

net::HttpClient probe_client(uint16_t port) {
    net::ClientOptions options;
    options.host = "127.0.0.1";
    options.port = port;
    options.connect_timeout = kProbeTimeout;
    options.request_timeout = kProbeTimeout;
    return net::HttpClient(options);
}

}  // namespace

DevClusterRunner::DevClusterRunner(std::vector<DevNodePlan> nodes, DevClusterRunnerOptions options,
                                   std::ostream& out)
    : nodes_(std::move(nodes)), options_(std::move(options)), out_(out), children_(nodes_.size()) {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    sigaddset(&signals_, SIGCHLD);
    sigemptyset(&previous_mask_);
}

DevClusterRunner::~DevClusterRunner() {
    for (Child& child : children_) {
        if (child.pid <= 0) continue;
        ::kill(-child.pid, SIGKILL);
        ::waitpid(child.pid, nullptr, 0);
    }
    pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

Status DevClusterRunner::spawn(size_t index) {
    const DevNodePlan& node = nodes_[index];
    std::vector<std::string> args = {options_.binary, "serve"};
    args.insert(args.end(), node.args.begin(), node.args.end());
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::vector<std::string> environment = options_.environment;
    std::vector<char*> envp;
    for (std::string& entry : environment) envp.push_back(entry.data());
    envp.push_back(nullptr);

    const int log = ::open(node.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log < 0) {
        return Status(Errc::io_error, "open " + node.log_path + ": " + std::strerror(errno));
    }
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
        // The child: only async-signal-safe calls until exec. Its own process group keeps a
        // terminal's Ctrl-C away from it (the runner stops it in order); the parent-death signal
        // stops it if the runner is killed.
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() != parent) ::_exit(127);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        const int null_input = ::open("/dev/null", O_RDONLY);
        if (null_input >= 0) ::dup2(null_input, 0);
        ::dup2(log, 1);
        ::dup2(log, 2);
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    const int fork_errno = errno;
    ::close(log);
    if (pid < 0) return Status(Errc::internal, std::string("fork: ") + std::strerror(fork_errno));
    children_[index].pid = pid;
    return Status::ok();
}

void DevClusterRunner::reap() {
    for (size_t i = 0; i < children_.size(); ++i) {
        Child& child = children_[i];
        if (child.pid <= 0) continue;
        int status = 0;
        if (::waitpid(child.pid, &status, WNOHANG) == child.pid) {
            child.pid = -1;
            child.exit_status = status;
        }
    }
}

void DevClusterRunner::take_signals(milliseconds timeout) {
    timespec wait{};
    wait.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    wait.tv_nsec = static_cast<long>((timeout.count() % 1000) * 1'000'000);
    siginfo_t info;
    int signal_number = ::sigtimedwait(&signals_, &info, &wait);
    // Take whatever else is pending without waiting, so a burst is handled at once.
    timespec zero{};
    while (signal_number > 0) {
        if (signal_number == SIGINT || signal_number == SIGTERM) {
            interrupted_ = true;
            ++interrupts_;
        }
        signal_number = ::sigtimedwait(&signals_, &info, &zero);
    }
    reap();
}

bool DevClusterRunner::ready(size_t index) const {
    net::HttpClient client = probe_client(nodes_[index].api_port);
    auto response = client.get("/readyz");
    return response.is_ok() && response->status == 200;
}

bool DevClusterRunner::promoted(size_t index) const {
    net::HttpClient client = probe_client(nodes_.front().api_port);
    auto response = client.get("/v1/cluster/status");
    if (!response.is_ok() || response->status != 200) return false;
    auto body = nlohmann::json::parse(response->body, nullptr, false);
    if (body.is_discarded() || !body.contains("members")) return false;
    bool voter = false;
    for (const auto& member : body["members"]) {
        if (member.value("id", "") == nodes_[index].id) {
            voter = member.value("etcd_role", "") == "voter";
        }
    }
    if (!voter) return false;
    if (body.contains("etcd") && body["etcd"].contains("members")) {
        for (const auto& member : body["etcd"]["members"]) {
            if (member.value("is_learner", false)) return false;
        }
    }
    return true;
}

Result<DevClusterRunner::Wait> DevClusterRunner::wait_for(size_t index,
                                                          const std::function<bool()>& condition) {
    const auto deadline = Clock::now() + options_.ready_timeout;
    while (true) {
        if (interrupted_) return Wait::interrupted;
        if (children_[index].pid <= 0) {
            return Status(Errc::unavailable, nodes_[index].id + " " + describe_exit(index) +
                                                 " before it was ready; the end of " +
                                                 nodes_[index].log_path + ":\n" + log_tail(index));
        }
        if (condition()) return Wait::done;
        if (Clock::now() >= deadline) return Wait::timed_out;
        take_signals(kPoll);
    }
}

std::string DevClusterRunner::describe_exit(size_t index) const {
    const int status = children_[index].exit_status;
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
               ::strsignal(WTERMSIG(status)) + ")";
    }
    return "ended";
}

std::string DevClusterRunner::log_tail(size_t index) const {
    std::ifstream log(nodes_[index].log_path);
    std::deque<std::string> lines;
    std::string line;
    while (std::getline(log, line)) {
        lines.push_back("    " + line);
        if (lines.size() > kLogTailLines) lines.pop_front();
    }
    std::string out;
    for (const std::string& kept : lines) out += kept + "\n";
    return out;
}

void DevClusterRunner::stop_all() {
    size_t running = 0;
    for (const Child& child : children_) running += child.pid > 0 ? 1 : 0;
    if (running == 0) return;
    const auto grace_seconds =
        std::chrono::duration_cast<std::chrono::seconds>(options_.stop_grace).count();
    out_ << "stopping " << running << " node" << (running == 1 ? "" : "s") << " (SIGTERM; SIGKILL "
         << "after " << grace_seconds << "s or a second Ctrl-C)" << std::endl;
    // All at once: stopped one by one, the last etcd voters would lose their quorum and wait
    // out etcd timeouts in their shutdown.
    std::vector<bool> stopping(children_.size(), false);
    for (size_t i = 0; i < children_.size(); ++i) {
        if (children_[i].pid <= 0) continue;
        ::kill(children_[i].pid, SIGTERM);
        stopping[i] = true;
    }
    const auto start = Clock::now();
    const int interrupts_before = interrupts_;
    while (true) {
        take_signals(milliseconds(100));
        bool left = false;
        for (size_t i = 0; i < children_.size(); ++i) {
            if (!stopping[i]) continue;
            if (children_[i].pid > 0) {
                left = true;
                continue;
            }
            out_ << nodes_[i].id << " stopped (" << describe_exit(i) << ", " << seconds_since(start)
                 << ")" << std::endl;
            stopping[i] = false;
        }
        if (!left) break;
        if (Clock::now() - start >= options_.stop_grace || interrupts_ > interrupts_before) {
            for (size_t i = 0; i < children_.size(); ++i) {
                if (!stopping[i] || children_[i].pid <= 0) continue;
                out_ << nodes_[i].id << " did not stop after " << seconds_since(start)
                     << ": SIGKILL" << std::endl;
                // The whole group: the node's own etcd child goes too.
                ::kill(-children_[i].pid, SIGKILL);
                ::waitpid(children_[i].pid, &children_[i].exit_status, 0);
                children_[i].pid = -1;
                stopping[i] = false;
            }
            break;
        }
    }
    out_ << "all nodes stopped" << std::endl;
}

Status DevClusterRunner::run() {
    std::error_code error;
    for (const DevNodePlan& node : nodes_) {
        std::filesystem::create_directories(std::filesystem::path(node.log_path).parent_path(),
                                            error);
        if (error) {
            return Status(Errc::io_error,
                          "create the directory of " + node.log_path + ": " + error.message());
        }
    }
    pthread_sigmask(SIG_BLOCK, &signals_, &previous_mask_);

    // The start-up order: nodes with data first, all together (each etcd member needs a quorum
    // of the others to be ready); then each new node alone, waiting for its learner's promotion,
    // since a cluster takes one etcd learner at a time.
    std::vector<std::vector<size_t>> steps;
    std::vector<size_t> restarting;
    for (size_t i = 0; i < nodes_.size(); ++i) {
        if (nodes_[i].has_data) restarting.push_back(i);
    }
    if (!restarting.empty()) steps.push_back(restarting);
    for (size_t i = 0; i < nodes_.size(); ++i) {
        if (!nodes_[i].has_data) steps.push_back({i});
    }

    auto fail = [&](Status status) {
        stop_all();
        return status;
    };
    for (const std::vector<size_t>& step : steps) {
        const auto start = Clock::now();
        for (size_t index : step) {
            const DevNodePlan& node = nodes_[index];
            out_ << node.id << ": starting on " << node.api_address()
                 << (node.has_data       ? " (existing data in " + node.data_dir + ")"
                     : node.join.empty() ? " (new cluster)"
                                         : " (joining through " + node.join + ")")
                 << std::endl;
            Status spawned = spawn(index);
            if (!spawned.is_ok()) return fail(spawned);
        }
        for (size_t index : step) {
            auto waited = wait_for(index, [&] { return ready(index); });
            if (!waited.is_ok()) return fail(waited.status());
            if (*waited == Wait::interrupted) return fail(Status::ok());
            if (*waited == Wait::timed_out) {
                return fail(Status(Errc::timeout, nodes_[index].id + " was not ready within " +
                                                      seconds_since(start) + "; see " +
                                                      nodes_[index].log_path));
            }
            out_ << nodes_[index].id << ": ready (" << seconds_since(start) << ")" << std::endl;
            if (nodes_[index].has_data || !nodes_[index].hosts_etcd || index == 0) continue;
            waited = wait_for(index, [&] { return promoted(index); });
            if (!waited.is_ok()) return fail(waited.status());
            if (*waited == Wait::interrupted) return fail(Status::ok());
            if (*waited == Wait::timed_out) {
                return fail(Status(Errc::timeout, nodes_[index].id +
                                                      "'s etcd learner was not promoted within " +
                                                      seconds_since(start)));
            }
            out_ << nodes_[index].id << ": etcd member promoted to voter (" << seconds_since(start)
                 << ")" << std::endl;
        }
    }

    out_ << "\n" << format_dev_cluster_table(nodes_) << "\n";
    const std::string first = "http://" + nodes_.front().api_address();
    out_ << "Try:  narad -s " << first << " topic add demo --partitions 12\n"
         << "      narad -s " << first << " cluster members\n"
         << "Ctrl-C stops every node." << std::endl;

    std::vector<bool> reported(children_.size(), false);
    while (!interrupted_) {
        take_signals(milliseconds(1'000));
        size_t running = 0;
        for (size_t i = 0; i < children_.size(); ++i) {
            if (children_[i].pid > 0) {
                ++running;
            } else if (!reported[i]) {
                reported[i] = true;
                out_ << nodes_[i].id << " " << describe_exit(i) << "; see " << nodes_[i].log_path
                     << std::endl;
            }
        }
        if (running == 0) return Status(Errc::unavailable, "every node exited");
    }
    out_ << "\ninterrupted" << std::endl;
    stop_all();
    return Status::ok();
}

}  // namespace narad::cli
