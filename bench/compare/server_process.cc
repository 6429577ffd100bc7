#include "compare/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace narad::compare {
ServerProcess::~ServerProcess() { stop(2'000); }

Status ServerProcess::start(const ProcessSpec& spec) {
    NARAD_ASSIGN_OR_RETURN(std::string path, find_executable(spec.executable));
    log_path_ = spec.log_path;
    // Everything the child needs is built before fork: after it only async-signal-safe calls.
    std::vector<std::string> args;
    args.push_back(path);
    args.insert(args.end(), spec.args.begin(), spec.args.end());
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string entry(*e);
        bool replaced = false;
        for (const auto& [key, value] : spec.env) replaced |= entry.starts_with(key + "=");
        if (!replaced) env_strings.push_back(entry);
    }
    for (const auto& [key, value] : spec.env) env_strings.push_back(key + "=" + value);
    std::vector<char*> envp;
    for (std::string& entry : env_strings) envp.push_back(entry.data());
    envp.push_back(nullptr);

    const int log_fd =
        ::open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) {
        return Status(Errc::io_error, spec.log_path + ": " + std::strerror(errno));
    }
    const pid_t parent = ::getpid();
    const pid_t child = ::fork();
    if (child < 0) {
        ::close(log_fd);
        return Status(Errc::internal, std::string("fork: ") + std::strerror(errno));
    }
    if (child == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(127);
        ::dup2(log_fd, STDOUT_FILENO);
        ::dup2(log_fd, STDERR_FILENO);
        const int null_fd = ::open("/dev/null", O_RDONLY);
        if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    ::close(log_fd);
    pid_ = child;
    reaped_ = false;
    exit_description_.clear();
    return Status::ok();
}

void ServerProcess::reap(bool block) {
    if (reaped_ || pid_.load() <= 0) return;
    int status = 0;
    const pid_t r = ::waitpid(pid_.load(), &status, block ? 0 : WNOHANG);
    if (r == 0) return;
    reaped_ = true;
    if (r < 0) {
        exit_description_ = "lost";
    } else if (WIFEXITED(status)) {
        exit_description_ = "exit " + std::to_string(WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
        exit_description_ = "signal " + std::to_string(WTERMSIG(status));
    }
}

bool ServerProcess::running() {
    reap(false);
    return !reaped_;
}

void ServerProcess::stop(int64_t grace_ms) {
    if (reaped_ || pid_.load() <= 0) return;
    ::kill(pid_.load(), SIGTERM);
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
    while (std::chrono::steady_clock::now() < until) {
        reap(false);
        if (reaped_) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid_.load(), SIGKILL);
    reap(true);
}

void ServerProcess::kill() {
    const pid_t pid = pid_.load();
    // Not reaped yet (only the owner reaps), so the pid cannot have been reused.
    if (pid > 0) ::kill(pid, SIGKILL);
}

std::optional<uint64_t> ServerProcess::peak_rss_bytes() const {
    if (pid_.load() <= 0) return std::nullopt;
    std::optional<uint64_t> total;
    for (pid_t pid : process_tree(pid_.load())) {
        auto peak = parse_vm_hwm_bytes(read_text_file("/proc/" + std::to_string(pid) + "/status"));
        if (peak) total = total.value_or(0) + *peak;
    }
    return total;
}

std::optional<double> ServerProcess::cpu_seconds() const {
    if (pid_.load() <= 0) return std::nullopt;
    std::optional<uint64_t> ticks;
    for (pid_t pid : process_tree(pid_.load())) {
        auto own = parse_stat_cpu_ticks(read_text_file("/proc/" + std::to_string(pid) + "/stat"));
        if (own) ticks = ticks.value_or(0) + *own;
    }
    if (!ticks) return std::nullopt;
    return double(*ticks) / double(::sysconf(_SC_CLK_TCK));
}

std::vector<pid_t> descendants_of(pid_t root, const std::vector<std::pair<pid_t, pid_t>>& parents) {
    std::vector<pid_t> tree{root};
    for (size_t next = 0; next < tree.size(); ++next) {
        for (const auto& [pid, parent] : parents) {
            if (parent == tree[next] && pid != root) tree.push_back(pid);
        }
    }
    return tree;
}

std::vector<pid_t> process_tree(pid_t root) {
    std::vector<std::pair<pid_t, pid_t>> parents;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        auto parent = parse_stat_ppid(read_text_file(entry.path().string() + "/stat"));
        if (parent) parents.emplace_back(static_cast<pid_t>(std::stol(name)), *parent);
    }
    return descendants_of(root, parents);
}

std::optional<pid_t> parse_stat_ppid(const std::string& stat_text) {
    // "pid (comm) state ppid ...": counted from the last ')', as comm may hold anything.
    const size_t close = stat_text.rfind(')');
    if (close == std::string::npos) return std::nullopt;
    std::istringstream in(stat_text.substr(close + 1));
    std::string state;
    long ppid = 0;
    if (!(in >> state >> ppid) || ppid < 0) return std::nullopt;
    return static_cast<pid_t>(ppid);
}

std::string ServerProcess::log_tail(size_t bytes) const {
    std::string text = read_text_file(log_path_);
    if (text.size() > bytes) text = text.substr(text.size() - bytes);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
}

Result<std::string> find_executable(const std::string& name) {
    if (name.empty()) return Status(Errc::invalid_argument, "empty executable name");
    if (name.find('/') != std::string::npos) {
        if (::access(name.c_str(), X_OK) != 0) {
            return Status(Errc::not_found, name + ": not an executable file");
        }
        return name;
    }
    const char* path = std::getenv("PATH");
    std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
    dirs += ":/usr/sbin:/sbin";  // Debian puts nats-server in /usr/sbin
    std::istringstream in(dirs);
    std::string dir;
    while (std::getline(in, dir, ':')) {
        if (dir.empty()) continue;
        const std::string candidate = dir + "/" + name;
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            ::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
    }
    return Status(Errc::not_found, name + ": not found in PATH");
}

std::string read_text_file(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::optional<uint64_t> parse_vm_hwm_bytes(const std::string& status_text) {
    std::istringstream in(status_text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.starts_with("VmHWM:")) continue;
        std::istringstream fields(line.substr(6));
        uint64_t kib = 0;
        std::string unit;
        if (!(fields >> kib >> unit) || unit != "kB") return std::nullopt;
        return kib * 1024;
    }
    return std::nullopt;
}

std::optional<uint64_t> parse_stat_cpu_ticks(const std::string& stat_text) {
    // "pid (comm) state ppid ..." — comm may hold spaces and parentheses, so fields are counted
    // from the last ')'. utime, stime, cutime and cstime are fields 14 to 17 (1-based), i.e. the
    // 12th to 15th after it. The children's share counts because a server's helper processes
    // are part of its cost (Redis forks to rewrite its AOF, and waits for the child).
    const size_t close = stat_text.rfind(')');
    if (close == std::string::npos) return std::nullopt;
    std::istringstream in(stat_text.substr(close + 1));
    std::string field;
    uint64_t ticks = 0;
    for (int i = 1; i <= 15; ++i) {
        if (!(in >> field)) return std::nullopt;
        if (i >= 12) {
            char* end = nullptr;
            const uint64_t value = std::strtoull(field.c_str(), &end, 10);
            if (end == field.c_str() || *end != '\0') return std::nullopt;
            ticks += value;
        }
    }
    return ticks;
}

double self_cpu_seconds() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    auto seconds = [](const timeval& tv) { return double(tv.tv_sec) + double(tv.tv_usec) / 1e6; };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace narad::compare
