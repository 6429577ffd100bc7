#include "meta/etcd_supervisor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "base/log.h"
#include "base/metrics.h"
#include "base/mutex.h"
#include "base/thread_pool.h"

namespace narad::meta {
namespace {

constexpr Millis kHealthPoll{20};
constexpr Millis kHealthProbeTimeout{500};
constexpr size_t kHealthAnswerBytesMax = 4096;
constexpr size_t kLogTailBytes = 1500;

metrics::Counter& restarts_metric() {
    static auto& counter = metrics::Registry::global()
                               .counter("narad_etcd_restarts_total",
                                        "Times the local etcd member exited and was restarted")
                               .get();
    return counter;
}

bool executable(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
}

Result<std::string> find_binary(const std::string& binary) {
    if (binary.find('/') != std::string::npos) {
        if (executable(binary)) return binary;
    } else if (const char* path = std::getenv("PATH")) {
        std::string_view dirs(path);
        while (!dirs.empty()) {
            auto colon = dirs.find(':');
            std::string dir(dirs.substr(0, colon));
            dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
            std::string candidate = (dir.empty() ? "." : dir) + "/" + binary;
            if (executable(candidate)) return candidate;
        }
    }
    return Status(Errc::not_found, "etcd binary not found ('" + binary +
                                       "'): install etcd-server (scripts/install-deps.sh)");
}

std::string log_tail(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) return {};
    auto size = static_cast<size_t>(in.tellg());
    size_t from = size > kLogTailBytes ? size - kLogTailBytes : 0;
    in.seekg(static_cast<std::streamoff>(from));
    std::string tail(size - from, '\0');
    in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
    return tail;
}

// Whether the child has exited, without reaping it (the reap happens under the mutex, so a kill
// can never reach a recycled pid).
bool exited(pid_t child) {
    siginfo_t info{};
    int rc = ::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOHANG | WNOWAIT);
    return rc == 0 && info.si_pid == child;
}

std::string describe_exit(int status) {
    if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
    return "status " + std::to_string(status);
}

}  // namespace

Status probe_etcd_serving(const std::string& host, uint16_t port, Millis timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    auto remaining_ms = [&] {
        auto left = std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now());
        return static_cast<int>(std::max<int64_t>(0, left.count()));
    };
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) {
        return Status(Errc::invalid_argument, "etcd host must be an IPv4 address: " + host);
    }
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return Status(Errc::io_error, std::string("socket: ") + std::strerror(errno));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    auto wait_for = [&](short events) {
        pollfd p{fd, events, 0};
        return ::poll(&p, 1, remaining_ms()) == 1;
    };
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        if (errno != EINPROGRESS || !wait_for(POLLOUT)) {
            return Status(Errc::peer_error, "etcd /health: cannot connect");
        }
        int error = 0;
        socklen_t length = sizeof error;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
        if (error != 0) return Status(Errc::peer_error, "etcd /health: cannot connect");
    }
    std::string request = "GET /health HTTP/1.0\r\nHost: " + host + "\r\n\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
        return Status(Errc::peer_error, "etcd /health: send failed");
    }
    std::string answer;
    char buffer[1024];
    while (answer.size() < kHealthAnswerBytesMax && wait_for(POLLIN)) {
        ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        answer.append(buffer, static_cast<size_t>(n));
    }
    // etcd serves HTTP on its client URL only once it is ready (joined its cluster), so any
    // answer means it is up, healthy or not (a learner, or a member waiting for its quorum).
    if (answer.rfind("HTTP/1.", 0) == 0) return Status::ok();
    return Status(Errc::unavailable, "etcd does not serve its client URL yet");
}

EtcdSupervisor::EtcdSupervisor(EtcdSupervisorOptions options, Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

EtcdSupervisor::~EtcdSupervisor() { stop(); }

std::string EtcdSupervisor::client_url() const {
    std::string scheme = options_.tls_cert_file.empty() ? "http://" : "https://";
    return scheme + options_.host + ":" + std::to_string(options_.client_port);
}

std::string EtcdSupervisor::peer_url() const {
    std::string scheme = options_.tls_cert_file.empty() ? "http://" : "https://";
    return scheme + options_.host + ":" + std::to_string(options_.peer_port);
}

pid_t EtcdSupervisor::pid() const {
    MutexLock lock(mutex_);
    return pid_;
}

uint64_t EtcdSupervisor::starts() const {
    MutexLock lock(mutex_);
    return starts_;
}

Status EtcdSupervisor::wait_started(uint64_t count, Millis timeout) {
    MutexLock lock(mutex_);
    if (!clock_.wait_for(lock, changed_, timeout,
                         [&]()
                             REQUIRES(mutex_) { return serving_starts_ >= count || stopping_; }) ||
        serving_starts_ < count) {
        return Status(Errc::timeout, "etcd was not started " + std::to_string(count) +
                                         " times within " + std::to_string(timeout.count()) +
                                         " ms");
    }
    return Status::ok();
}

std::vector<std::string> EtcdSupervisor::arguments() const {
    std::string cluster = options_.initial_cluster.empty() ? options_.name + "=" + peer_url()
                                                           : options_.initial_cluster;
    std::vector<std::string> args = {
        "--name=" + options_.name,
        "--data-dir=" + options_.data_dir,
        "--listen-client-urls=" + client_url(),
        "--advertise-client-urls=" + client_url(),
        "--listen-peer-urls=" + peer_url(),
        "--initial-advertise-peer-urls=" + peer_url(),
        "--initial-cluster=" + cluster,
        std::string("--initial-cluster-state=") +
            (options_.initial_cluster_state == InitialClusterState::new_cluster ? "new"
                                                                                : "existing"),
        "--initial-cluster-token=" + options_.cluster_token,
        "--heartbeat-interval=" + std::to_string(options_.heartbeat_interval_ms),
        "--election-timeout=" + std::to_string(options_.election_timeout_ms),
        "--logger=zap",
        "--log-outputs=stderr",
        // A topic record carries its schema history (up to 4 MiB, JSON-escaped): above etcd's
        // default 1.5 MiB request cap.
        "--max-request-bytes=10485760",
        "--max-txn-ops=" + std::to_string(options_.max_txn_ops),
    };
    if (!options_.tls_cert_file.empty()) {
        // Every client and every peer must present a certificate the authority signed.
        for (std::string flag :
             {"--cert-file=" + options_.tls_cert_file, "--key-file=" + options_.tls_key_file,
              "--trusted-ca-file=" + options_.tls_ca_file, std::string("--client-cert-auth"),
              "--peer-cert-file=" + options_.tls_cert_file,
              "--peer-key-file=" + options_.tls_key_file,
              "--peer-trusted-ca-file=" + options_.tls_ca_file,
              std::string("--peer-client-cert-auth")}) {
            args.push_back(std::move(flag));
        }
    }
    args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
    return args;
}

Status EtcdSupervisor::start() {
    NARAD_ASSERT(!thread_.joinable(), "EtcdSupervisor::start called twice");
    if (options_.data_dir.empty()) return Status(Errc::invalid_argument, "etcd data_dir is empty");
    NARAD_ASSIGN_OR_RETURN(auto binary, find_binary(options_.binary));
    {
        MutexLock lock(mutex_);
        stopping_ = false;
        first_done_ = false;
    }
    struct stat info {};
    bool rejoining = ::stat((options_.data_dir + "/member").c_str(), &info) == 0;
    NARAD_LOG_INFO("starting etcd member {} ({}) at {}{}", options_.name, binary, client_url(),
                   rejoining ? ", rejoining with its stored data" : "");
    // The supervising thread forks every child: PR_SET_PDEATHSIG fires when the thread that
    // forked dies, and this one lives until stop().
    thread_ = named_thread("narad-etcd-sup", [this, binary] { supervise(binary); });
    MutexLock lock(mutex_);
    changed_.wait(lock, [&]() REQUIRES(mutex_) { return first_done_; });
    Status outcome = first_start_;
    lock.unlock();
    if (!outcome.is_ok()) thread_.join();  // the thread has ended
    return outcome;
}

void EtcdSupervisor::stop() {
    if (!thread_.joinable()) return;
    {
        MutexLock lock(mutex_);
        stopping_ = true;
        if (pid_ != 0) ::kill(pid_, SIGTERM);
        changed_.notify_all();
        if (!clock_.wait_for(lock, changed_, options_.stop_grace,
                             [&]() REQUIRES(mutex_) { return pid_ == 0; })) {
            NARAD_LOG_WARN("etcd {} ignored SIGTERM for {} ms; killing it", options_.name,
                           options_.stop_grace.count());
            ::kill(pid_, SIGKILL);
        }
    }
    thread_.join();
}

Result<pid_t> EtcdSupervisor::spawn(const std::string& binary) {
    auto args = arguments();
    std::vector<std::string> argv_strings;
    argv_strings.push_back(binary);
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& arg : argv_strings) argv.push_back(arg.data());
    argv.push_back(nullptr);

    std::string log_path =
        options_.log_path.empty() ? options_.data_dir + ".log" : options_.log_path;
    int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
        return Status(Errc::io_error,
                      "cannot open etcd log " + log_path + ": " + std::strerror(errno));
    }
    int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_t parent = ::getpid();
    pid_t child = ::fork();
    if (child == 0) {
        // Only async-signal-safe calls from here to exec: the parent has other threads.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
        if (null_fd >= 0) ::dup2(null_fd, 0);
        ::dup2(log_fd, 1);
        ::dup2(log_fd, 2);
        ::close_range(3, ~0U, 0);
        sigset_t all;
        ::sigfillset(&all);
        ::sigprocmask(SIG_UNBLOCK, &all, nullptr);
        struct sigaction default_action {};
        default_action.sa_handler = SIG_DFL;
        for (int signal_number : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD}) {
            ::sigaction(signal_number, &default_action, nullptr);
        }
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    int fork_errno = errno;
    ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    if (child < 0) return Status(Errc::internal, std::string("fork: ") + std::strerror(fork_errno));
    return child;
}

Status EtcdSupervisor::wait_serving(pid_t child, MonoTime deadline) {
    while (true) {
        Status serving = options_.probe ? options_.probe(kHealthProbeTimeout)
                                        : probe_etcd_serving(options_.host, options_.client_port,
                                                             kHealthProbeTimeout);
        if (serving.is_ok()) {
            return Status::ok();
        }
        if (exited(child)) {
            std::string log_path =
                options_.log_path.empty() ? options_.data_dir + ".log" : options_.log_path;
            return Status(Errc::unavailable, "etcd exited during start-up; the end of " + log_path +
                                                 ":\n" + log_tail(log_path));
        }
        if (clock_.now() >= deadline) {
            return Status(Errc::timeout, "etcd did not serve its client URL within " +
                                             std::to_string(options_.ready_timeout.count()) +
                                             " ms");
        }
        MutexLock lock(mutex_);
        if (clock_.wait_for(lock, changed_, kHealthPoll,
                            [&]() REQUIRES(mutex_) { return stopping_; })) {
            return Status(Errc::shutting_down, "stopping");
        }
    }
}

void EtcdSupervisor::supervise(std::string binary) {
    Millis backoff = options_.restart_backoff_first;
    bool first = true;
    while (true) {
        auto spawned = spawn(binary);
        if (!spawned.is_ok()) {
            MutexLock lock(mutex_);
            if (first) {
                first_start_ = spawned.status();
                first_done_ = true;
                changed_.notify_all();
                return;
            }
            NARAD_LOG_ERROR("cannot restart etcd: {}", spawned.status().to_string());
            if (clock_.wait_for(lock, changed_, backoff,
                                [&]() REQUIRES(mutex_) { return stopping_; })) {
                return;
            }
            backoff = std::min(backoff * 2, options_.restart_backoff_max);
            continue;
        }
        pid_t child = *spawned;
        {
            MutexLock lock(mutex_);
            pid_ = child;
            ++starts_;
            if (stopping_) ::kill(child, SIGTERM);
        }
        Status serving = wait_serving(child, clock_.now() + options_.ready_timeout);
        {
            MutexLock lock(mutex_);
            if (serving.is_ok()) {
                ++serving_starts_;
                backoff = options_.restart_backoff_first;
            }
            if (first) {
                first_start_ = serving;
                first_done_ = true;
                if (!serving.is_ok()) {
                    stopping_ = true;
                    ::kill(child, SIGKILL);
                }
            }
            changed_.notify_all();
        }
        first = false;
        // Wait for the child to exit without reaping it, then reap it under the mutex.
        siginfo_t info{};
        while (::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) != 0 &&
               errno == EINTR) {
        }
        int status = 0;
        MutexLock lock(mutex_);
        ::waitpid(child, &status, 0);
        pid_ = 0;
        changed_.notify_all();
        if (stopping_) return;
        NARAD_LOG_WARN("etcd member {} exited ({}); restarting in {} ms", options_.name,
                       describe_exit(status), backoff.count());
        restarts_metric().inc();
        if (clock_.wait_for(lock, changed_, backoff,
                            [&]() REQUIRES(mutex_) { return stopping_; })) {
            return;
        }
        backoff = std::min(backoff * 2, options_.restart_backoff_max);
    }
}

}  // namespace narad::meta
