// EtcdSupervisor: starts one local etcd member as a child process and keeps it running. start()
// spawns etcd and waits until it answers GET /health (ready, if not yet healthy); a supervising
// thread restarts it whenever it exits (backing off, counting narad_etcd_restarts_total); stop()
// sends SIGTERM, then SIGKILL after a grace period, and reaps it. The child gets
// PR_SET_PDEATHSIG(SIGKILL) from the supervising thread (which lives until stop()), so etcd never
// outlives the narad process.
//
// When data_dir already holds a member (etcd's member/ directory), etcd ignores the
// initial-cluster flags and rejoins with its stored membership, so restarts pass the same flags.
// The supervisor owns the child's pid; start() and stop() are called by the owner, one at a time;
// the accessors are thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"

namespace narad::meta {

// etcd's --initial-cluster-state: whether the member starts a new cluster or joins an existing
// one. A member that already has a data directory ignores it.
enum class InitialClusterState { new_cluster, existing };

struct EtcdSupervisorOptions {
    std::string binary = "etcd";  // a path, or a name looked up on PATH
    std::string name = "n1";
    std::string data_dir;
    std::string host = "127.0.0.1";
    uint16_t client_port = 2379;
    uint16_t peer_port = 2380;
    // "n1=http://127.0.0.1:2380,n2=..."; empty: this member alone.
    std::string initial_cluster;
    InitialClusterState initial_cluster_state = InitialClusterState::new_cluster;
    std::string cluster_token = "narad";
    std::string log_path;  // etcd's stdout and stderr; empty: <data_dir>.log
    uint32_t heartbeat_interval_ms = 100;
    uint32_t election_timeout_ms = 1'000;
    uint32_t max_txn_ops = 128;  // --max-txn-ops: the most puts, deletes or compares in one txn
    std::vector<std::string> extra_args;  // passed to etcd after the flags above
    // Mutual TLS on the member's client and peer URLs (https): its certificate and key, and the
    // authority every client and peer certificate must come from. Empty: plain http.
    std::string tls_cert_file;
    std::string tls_key_file;
    std::string tls_ca_file;
    // How to tell the member serves its client URL; empty: probe_etcd_serving (plain http only).
    std::function<Status(Millis timeout)> probe;
    Millis ready_timeout{10'000};
    Millis restart_backoff_first{100};
    Millis restart_backoff_max{5'000};
    Millis stop_grace{5'000};
};

class EtcdSupervisor {
  public:
    // Every wait (start-up, restart back-off, the stop grace) is measured on `clock`.
    explicit EtcdSupervisor(EtcdSupervisorOptions options, Clock& clock = SystemClock::instance());
    // Stops the member if it runs.
    ~EtcdSupervisor();
    EtcdSupervisor(const EtcdSupervisor&) = delete;
    EtcdSupervisor& operator=(const EtcdSupervisor&) = delete;

    // Spawns etcd and waits until it serves its client URL (or ready_timeout: Errc::timeout, and
    // the child is stopped). Errc::not_found when the binary is missing.
    Status start();
    // Stops etcd and the supervising thread; the process is reaped when this returns.
    void stop();

    std::string client_url() const;
    std::string peer_url() const;
    // The running child's pid, or 0.
    pid_t pid() const;
    // How many times the child was started (the first start included).
    uint64_t starts() const;
    // Waits until the child has been started at least `count` times and served since.
    Status wait_started(uint64_t count, Millis timeout);

    // The argument vector etcd is run with (for logs and tests).
    std::vector<std::string> arguments() const;

  private:
    void supervise(std::string binary);
    // Forks and execs etcd (on the supervising thread); returns the pid or an error.
    Result<pid_t> spawn(const std::string& binary);
    // Polls /health until etcd answers, the child exits or the deadline passes.
    Status wait_serving(pid_t child, MonoTime deadline);

    const EtcdSupervisorOptions options_;
    Clock& clock_;
    mutable Mutex mutex_;
    CondVar changed_;
    pid_t pid_ GUARDED_BY(mutex_) = 0;  // 0 once reaped
    uint64_t starts_ GUARDED_BY(mutex_) = 0;
    uint64_t serving_starts_ GUARDED_BY(mutex_) = 0;
    Status first_start_ GUARDED_BY(mutex_);  // the first start's outcome
    bool first_done_ GUARDED_BY(mutex_) = false;
    bool stopping_ GUARDED_BY(mutex_) = false;
    std::thread thread_;
};

// Probes http://host:port/health once with a plain HTTP/1.0 GET. Ok when etcd answered at all:
// it serves HTTP only once ready, while "healthy" also needs a quorum (and is false on a learner).
Status probe_etcd_serving(const std::string& host, uint16_t port, Millis timeout);

}  // namespace narad::meta
