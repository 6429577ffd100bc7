// The multi-process test harness: starts real `narad` processes on 127.0.0.1, each with its own
// data directory and free ports, and can SIGKILL, SIGSTOP/SIGCONT, stop and restart them. Waits are
// on conditions (a probe that succeeds) with a bounded deadline, never fixed sleeps. One harness
// per test; not thread-safe except where noted.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "net/http_client.h"

namespace narad::testing {

// A port nobody listens on right now (bound and released; good enough on a test machine).
uint16_t free_port();

// A fresh temporary directory, removed by the destructor.
class TempDir {
  public:
    TempDir();
    ~TempDir();
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

struct NodeOptions {
    std::string node_id = "n1";
    std::map<std::string, std::string> env;  // extra environment (NARAD_FAILPOINTS, ...)
    std::vector<std::string> args;           // extra `narad serve` flags
};

class NodeProcess {
  public:
    NodeProcess(std::string data_directory, NodeOptions options);
    ~NodeProcess();  // kills the process if it still runs

    // Starts `narad serve` and waits until /readyz answers 200 (or the process exits).
    void start();
    // SIGTERM, then waits for a clean exit; returns the exit status.
    int stop();
    // SIGKILL (as a crash), then reaps the process.
    void kill();
    void pause();   // SIGSTOP
    void resume();  // SIGCONT
    bool running();

    uint16_t port() const { return port_; }
    pid_t pid() const { return pid_; }
    const std::string& data_directory() const { return data_directory_; }
    std::string log_path() const { return data_directory_ + ".log"; }
    // A fresh client for this node (one per thread).
    net::HttpClient client(std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;

  private:
    std::string data_directory_;
    NodeOptions options_;
    uint16_t port_;
    pid_t pid_ = -1;
};

// Polls `condition` until it returns true or `timeout` passes; returns whether it became true.
bool eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds timeout = std::chrono::seconds(30),
                std::chrono::milliseconds poll = std::chrono::milliseconds(20));

// Shortcuts for tests.
Result<net::HttpResponse> http(net::HttpClient& client, std::string_view method,
                               std::string_view target, std::string_view body = {});
void create_topic(net::HttpClient& client, const std::string& name, int partitions);

}  // namespace narad::testing
