// DevClusterRunner: the process side of `narad dev-cluster`. It spawns one `narad serve` child per
// planned node (the same binary, each in its own process group so a terminal's Ctrl-C reaches
// only the runner, with SIGTERM as its parent-death signal), starts them in the order a cluster
// needs (nodes with data together, then n1, then each new node once the one before is ready and
// its etcd learner promoted), prints the node table, and stays in the foreground until SIGINT or
// SIGTERM; then it stops every node (SIGTERM, a grace period, SIGKILL). It owns the children.
//
// run() is called once, from the main thread while no other thread exists: it blocks SIGINT,
// SIGTERM and SIGCHLD in that thread and takes them with sigtimedwait.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "cli/dev_cluster.h"

namespace narad::cli {

struct DevClusterRunnerOptions {
    std::string binary;                                // the `narad` executable
    std::vector<std::string> environment;              // "KEY=VALUE" for every node
    std::chrono::milliseconds ready_timeout{120'000};  // per start-up step
    std::chrono::milliseconds stop_grace{20'000};      // SIGTERM to SIGKILL
};

class DevClusterRunner {
  public:
    DevClusterRunner(std::vector<DevNodePlan> nodes, DevClusterRunnerOptions options,
                     std::ostream& out);
    ~DevClusterRunner();  // SIGKILLs any child still running
    DevClusterRunner(const DevClusterRunner&) = delete;
    DevClusterRunner& operator=(const DevClusterRunner&) = delete;

    // Starts the cluster, waits for Ctrl-C, stops it. An error if a node failed to start (the
    // others are stopped first).
    Status run();

  private:
    struct Child {
        pid_t pid = -1;
        int exit_status = 0;
    };
    enum class Wait { done, interrupted, timed_out };

    Status spawn(size_t index);
    // Waits until `condition` holds, polling every 200 ms while taking signals; node `index`
    // exiting ends the wait as an error.
    Result<Wait> wait_for(size_t index, const std::function<bool()>& condition);
    bool ready(size_t index) const;
    // Whether node 1 reports `index`'s etcd member as a voter and no learner remains.
    bool promoted(size_t index) const;
    // Takes pending signals for up to `timeout`: reaps children, remembers an interrupt.
    void take_signals(std::chrono::milliseconds timeout);
    void reap();
    void stop_all();
    std::string describe_exit(size_t index) const;
    std::string log_tail(size_t index) const;

    std::vector<DevNodePlan> nodes_;
    DevClusterRunnerOptions options_;
    std::ostream& out_;
    std::vector<Child> children_;
    sigset_t signals_;
    sigset_t previous_mask_;
    bool interrupted_ = false;
    int interrupts_ = 0;
};

}  // namespace narad::cli
