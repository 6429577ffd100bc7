// Test support for code that talks to etcd: a fresh temp dir, free local ports, and a LocalEtcd
// that runs one real etcd member (the `etcd-server` package) under an EtcdSupervisor. For tests
// only; one fixture per test, used from the test's thread.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/loopback_ports.h"
#include "meta/etcd_supervisor.h"

namespace narad::meta::testing {

class TempDir {
  public:
    TempDir() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "narad-etcd-XXXXXX").string();
        NARAD_ASSERT(::mkdtemp(pattern.data()) != nullptr, "mkdtemp failed");
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

// `count` distinct ports nothing listens on right now, claimed against other test processes.
inline std::vector<uint16_t> free_ports(size_t count) { return unused_loopback_ports(count); }

// Options for member `name` with its data in `dir`/<name>, on fresh ports.
inline EtcdSupervisorOptions local_etcd_options(const std::string& dir, const std::string& name) {
    auto ports = free_ports(2);
    EtcdSupervisorOptions options;
    options.name = name;
    options.data_dir = dir + "/" + name;
    options.log_path = dir + "/" + name + ".log";
    options.client_port = ports[0];
    options.peer_port = ports[1];
    options.restart_backoff_first = Millis(20);
    return options;
}

// One etcd member on free ports in a temp dir, started by the constructor.
class LocalEtcd {
  public:
    explicit LocalEtcd(const std::string& name = "n1", uint32_t max_txn_ops = 128)
        : supervisor_(with_max_txn_ops(local_etcd_options(dir_.path(), name), max_txn_ops)) {
        Status started = supervisor_.start();
        EXPECT_TRUE(started.is_ok()) << started.to_string();
    }
    EtcdSupervisor& supervisor() { return supervisor_; }
    std::string endpoint() const { return supervisor_.client_url(); }
    const std::string& dir() const { return dir_.path(); }

  private:
    static EtcdSupervisorOptions with_max_txn_ops(EtcdSupervisorOptions options, uint32_t ops) {
        options.max_txn_ops = ops;
        return options;
    }
    TempDir dir_;
    EtcdSupervisor supervisor_;
};

}  // namespace narad::meta::testing
