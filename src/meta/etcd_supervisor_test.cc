// EtcdSupervisor with the real etcd binary (Debian's etcd-server): start, restart after a crash,
// stop, a missing binary, and a restart on existing data; and the restart back-off on a fake clock
// with a stand-in binary.
#include "meta/etcd_supervisor.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <fstream>

#include "base/metrics.h"
#include "meta/etcd_test_support.h"

namespace narad::meta {
namespace {

using testing::local_etcd_options;
using testing::TempDir;

constexpr Millis kWait{20'000};

double restarts_total() {
    return metrics::Registry::global()
        .counter("narad_etcd_restarts_total",
                 "Times the local etcd member exited and was restarted")
        .get()
        .value();
}

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// Rule: start() returns once etcd answers /health on its client URL.
TEST(EtcdSupervisorTest, StartWaitsUntilEtcdServes) {
    TempDir dir;
    auto options = local_etcd_options(dir.path(), "n1");
    EtcdSupervisor supervisor(options);
    ASSERT_TRUE(supervisor.start().is_ok());
    EXPECT_GT(supervisor.pid(), 0);
    EXPECT_EQ(supervisor.client_url(), "http://127.0.0.1:" + std::to_string(options.client_port));
    EXPECT_TRUE(probe_etcd_serving("127.0.0.1", options.client_port, Millis(2'000)).is_ok());
    supervisor.stop();
}

// Rule: with TLS files the member's client and peer URLs are https and it demands a certificate
// the authority signed from every client and peer; without them nothing of TLS is passed.
TEST(EtcdSupervisorTest, TlsFilesMakeEveryUrlMutualTls) {
    EtcdSupervisorOptions options;
    options.client_port = 1;
    options.peer_port = 2;
    options.tls_cert_file = "/c.pem";
    options.tls_key_file = "/c.key";
    options.tls_ca_file = "/ca.pem";
    EtcdSupervisor secured(options);
    EXPECT_EQ(secured.client_url(), "https://127.0.0.1:1");
    EXPECT_EQ(secured.peer_url(), "https://127.0.0.1:2");
    std::vector<std::string> args = secured.arguments();
    for (const char* flag :
         {"--cert-file=/c.pem", "--key-file=/c.key", "--trusted-ca-file=/ca.pem",
          "--client-cert-auth", "--peer-cert-file=/c.pem", "--peer-key-file=/c.key",
          "--peer-trusted-ca-file=/ca.pem", "--peer-client-cert-auth",
          "--listen-client-urls=https://127.0.0.1:1", "--initial-cluster=n1=https://127.0.0.1:2"}) {
        EXPECT_NE(std::find(args.begin(), args.end(), flag), args.end()) << flag;
    }
    EtcdSupervisor plain(EtcdSupervisorOptions{});
    for (const std::string& arg : plain.arguments()) {
        EXPECT_EQ(arg.find("cert"), std::string::npos) << arg;
        EXPECT_EQ(arg.find("https"), std::string::npos) << arg;
    }
}

// Rule: an etcd killed with SIGKILL is restarted by the supervisor, and counted.
TEST(EtcdSupervisorTest, KilledEtcdIsRestarted) {
    TempDir dir;
    EtcdSupervisor supervisor(local_etcd_options(dir.path(), "n1"));
    ASSERT_TRUE(supervisor.start().is_ok());
    double restarts_before = restarts_total();
    pid_t first = supervisor.pid();
    ASSERT_EQ(::kill(first, SIGKILL), 0);
    Status restarted = supervisor.wait_started(2, kWait);
    ASSERT_TRUE(restarted.is_ok()) << restarted.to_string();
    EXPECT_NE(supervisor.pid(), first);
    EXPECT_TRUE(process_gone(first));  // reaped, not a zombie
    EXPECT_EQ(restarts_total(), restarts_before + 1);
    EXPECT_EQ(supervisor.starts(), 2u);
}

// Rule: a member that exits is started again only once the restart back-off has passed on the
// supervisor's clock (a stand-in binary that runs until killed, with a probe that always answers).
TEST(EtcdSupervisorTest, RestartWaitsOutTheBackOffOnItsClock) {
    TempDir dir;
    std::string binary = dir.path() + "/stand-in-etcd";
    {
        std::ofstream script(binary);
        script << "#!/bin/sh\nexec sleep 600\n";
    }
    ASSERT_EQ(::chmod(binary.c_str(), 0755), 0);
    EtcdSupervisorOptions options = local_etcd_options(dir.path(), "n1");
    options.binary = binary;
    options.probe = [](Millis) { return Status::ok(); };
    options.restart_backoff_first = Millis(1'000);
    FakeClock clock;
    EtcdSupervisor supervisor(options, clock);
    ASSERT_TRUE(supervisor.start().is_ok());
    pid_t first = supervisor.pid();
    ASSERT_EQ(::kill(first, SIGKILL), 0);
    ASSERT_TRUE(clock.await_waiters(1));  // reaped; the back-off runs
    clock.advance(Millis(999));
    ASSERT_TRUE(clock.await_waiters(1));
    EXPECT_EQ(supervisor.starts(), 1u) << "restarted before the back-off passed";
    clock.advance(Millis(1));
    ASSERT_TRUE(supervisor.wait_started(2, kWait).is_ok());
    EXPECT_NE(supervisor.pid(), first);
    EXPECT_TRUE(process_gone(first));
    supervisor.stop();
}

// Rule: stop() terminates etcd and reaps it; nothing is left running.
TEST(EtcdSupervisorTest, StopLeavesNoProcess) {
    TempDir dir;
    EtcdSupervisor supervisor(local_etcd_options(dir.path(), "n1"));
    ASSERT_TRUE(supervisor.start().is_ok());
    pid_t pid = supervisor.pid();
    double restarts_before = restarts_total();
    supervisor.stop();
    EXPECT_EQ(supervisor.pid(), 0);
    EXPECT_TRUE(process_gone(pid));
    EXPECT_EQ(restarts_total(), restarts_before);  // a stop is not a crash
}

// Rule: a missing etcd binary is a clear not_found that says what to install.
TEST(EtcdSupervisorTest, MissingBinaryIsReported) {
    TempDir dir;
    auto options = local_etcd_options(dir.path(), "n1");
    options.binary = dir.path() + "/no-such-etcd";
    EtcdSupervisor supervisor(options);
    Status started = supervisor.start();
    EXPECT_EQ(started.code(), Errc::not_found);
    EXPECT_NE(started.message().find("etcd-server"), std::string::npos) << started.message();
}

// Rule: an etcd that cannot start (bad flags) fails start() with the end of its log.
TEST(EtcdSupervisorTest, EtcdThatExitsAtStartupFailsStart) {
    TempDir dir;
    auto options = local_etcd_options(dir.path(), "n1");
    options.extra_args = {"--no-such-flag"};
    EtcdSupervisor supervisor(options);
    Status started = supervisor.start();
    EXPECT_EQ(started.code(), Errc::unavailable) << started.to_string();
    EXPECT_EQ(supervisor.pid(), 0);
}

// Rule: with a member already in data_dir, etcd ignores the initial-cluster flags, so a restart
// with flags that would not bootstrap works.
TEST(EtcdSupervisorTest, RestartOnExistingDataIgnoresInitialCluster) {
    TempDir dir;
    auto options = local_etcd_options(dir.path(), "n1");
    {
        EtcdSupervisor supervisor(options);
        ASSERT_TRUE(supervisor.start().is_ok());
    }
    // A cluster that includes a member that does not exist, joined as "existing": a fresh data
    // dir could not start with this.
    options.initial_cluster =
        "n1=http://127.0.0.1:" + std::to_string(options.peer_port) + ",ghost=http://127.0.0.1:1";
    options.initial_cluster_state = InitialClusterState::existing;
    EtcdSupervisor again(options);
    Status started = again.start();
    EXPECT_TRUE(started.is_ok()) << started.to_string();
}

}  // namespace
}  // namespace narad::meta
