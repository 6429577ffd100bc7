// ClusterRuntime: brings this node into its cluster and keeps it there. It decides where the
// metastore is (an external etcd given by --meta-endpoints; the local etcd member it already hosts;
// a cluster reached through --join; or a new cluster of one), starts and supervises the local etcd
// member when the node hosts one, opens the etcd-backed metastore, registers the node's membership
// and liveness, and runs the controller candidate. It also answers other nodes' joins.
//
// What the node learned about its cluster (name, etcd role, etcd endpoints) is kept in
// <data>/cluster.json so a restart finds the metastore again without --join.
//
// start() and stop() are called once each by the Node; the accessors are valid in between.
// handle_join() may be called from any thread (it blocks on etcd).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "auth/cluster_proof.h"
#include "base/clock.h"
#include "base/status.h"
#include "cluster/controller.h"
#include "cluster/membership.h"
#include "meta/etcd_meta_store.h"
#include "net/tls.h"

namespace narad::node {

struct ClusterRuntimeOptions {
    NodeId node_id;
    std::string data_dir;
    std::string cluster_name = "narad";
    std::string api_addr;                     // advertised host:port of the public API
    std::string cluster_addr;                 // advertised host:port of the node-to-node port
    std::vector<std::string> meta_endpoints;  // external etcd: start no local member
    std::string join;                         // host:port of any member's cluster port
    auth::ClusterSecrets cluster_secrets;     // proved to the --join node (net::cluster_handshake)
    std::optional<net::ClientTls> cluster_tls;  // how to dial the --join node; nullopt: plain
    std::string etcd_host = "127.0.0.1";
    uint16_t etcd_client_port = 7944;
    uint16_t etcd_peer_port = 7945;
    std::string etcd_binary = "etcd";
    uint32_t etcd_max_txn_ops = 128;  // the local member's --max-txn-ops
    uint32_t voters = 3;              // nodes that host an etcd voter, at most
    int64_t lease_ttl_seconds = 10;
    Millis self_fence_margin{2'000};
    cluster::ControllerOptions controller;
    Millis join_timeout{60'000};
};

class ClusterRuntime {
  public:
    static Result<std::unique_ptr<ClusterRuntime>> start(ClusterRuntimeOptions options,
                                                         Clock& clock);
    ~ClusterRuntime();  // stops

    // Resigns the controller, revokes the liveness lease, closes the replica, stops etcd.
    void stop();

    meta::EtcdMetaStore& store() { return *store_; }
    cluster::Controller& controller() { return *controller_; }
    // This node's liveness lease (and its owner self-fence).
    cluster::Membership& membership() { return *membership_; }
    meta::EtcdClient& client() { return *client_; }

    // Another node asks to join (the body of POST /internal/v1/join); returns the JSON answer.
    // Errc::unavailable while another node's etcd member is still a learner (retry later).
    Result<std::string> handle_join(std::string_view request);

    // The controller asks (POST /internal/v1/etcd/host) when a voter leaves and this node hosts no
    // etcd member: adds this node's member as a learner, starts it, and records the role (the
    // controller promotes it once it has caught up). Blocks; any thread.
    Status host_etcd();

  private:
    class Impl;
    explicit ClusterRuntime(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
    meta::EtcdMetaStore* store_ = nullptr;
    cluster::Controller* controller_ = nullptr;
    cluster::Membership* membership_ = nullptr;
    meta::EtcdClient* client_ = nullptr;
};

}  // namespace narad::node
