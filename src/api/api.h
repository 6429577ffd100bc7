// The public /v1 HTTP API: registers every route of Narad's API (and ours) on a Router. Handlers
// parse and validate, call the domain services, and map errors to Narad's statuses and bodies.
// Work that blocks (metastore writes, purges) goes to the blocking pool, never the HTTP threads.
#pragma once

#include <functional>
#include <string>

#include "api/audit_log.h"
#include "api/router.h"
#include "auth/password.h"
#include "base/clock.h"
#include "base/peer_client.h"
#include "base/thread_pool.h"
#include "meta/etcd_client.h"
#include "meta/etcd_meta_store.h"
#include "meta/topic_frontend.h"
#include "queue/consume_service.h"
#include "storage/log_manager.h"
#include "wal/owner_liveness.h"
#include "wal/produce_service.h"

namespace narad::fanout {
class FanoutEngine;
}

namespace narad::auth {
class Authenticator;
}

namespace narad::api {

class ProduceGate;
struct NodeStatusSources;

// What the API knows of the cluster beyond the metastore snapshot.
struct ClusterInfo {
    std::string name = "narad";
    Millis dead_after{30'000};
    // The decommission guards (cluster.min_voters, move.max_in_flight).
    uint32_t min_voters = 3;
    uint32_t max_in_flight_moves = 8;
    // This node leads and has finished its start-up reconcile: topic writes are its to make.
    std::function<bool()> is_controller = [] { return true; };
    // The etcd members (GET /v1/cluster/status). Blocks.
    std::function<Result<std::vector<meta::Member>>()> etcd_members = [] {
        return Result<std::vector<meta::Member>>(std::vector<meta::Member>{});
    };
};

struct ApiContext {
    Clock& clock;
    meta::MetaStore& store;
    meta::TopicFrontend& topics;
    wal::ProduceService& produce;
    queue::ConsumeService& consume;
    storage::LogManager& logs;
    ThreadPool& blocking;
    // Removes this node's data of a topic that is no longer in the metastore.
    std::function<Status(std::string_view topic)> purge_topic;
    NodeId node_id;
    std::string advertise_addr;
    Millis max_consume_wait{10'000};
    std::function<bool()> ready;          // startup reconcile done: topic creates allowed
    std::function<bool()> shutting_down;  // /healthz answers 503 once true
    // A cluster: calls for partitions owned elsewhere go to their owners through `peers` (null on
    // a single node: everything is local). `liveness` says which owners are dead; `routing` runs
    // the forwarding calls, which block (the blocking pool if null).
    PeerClient* peers = nullptr;
    const wal::OwnerLiveness* liveness = nullptr;
    ThreadPool* routing = nullptr;
    // Bounds each poll of a peer in a topic-wide consume, and each forwarded ack.
    Millis peer_timeout{5'000};
    ClusterInfo cluster;
    // Operator actions on the cluster are recorded here (null: not recorded).
    AuditLog* audit = nullptr;
    // Decommission and forget (null on a node without the etcd metastore: they answer 503).
    meta::EtcdMetaStore* etcd_store = nullptr;
    // Refuses client produce while this node drains (null: never refuses).
    ProduceGate* produce_gate = nullptr;
    // This node's own status (members?detail=true); null: not reported.
    const NodeStatusSources* node_status = nullptr;
    // Security: who a request is (null: security off, every check passes), and the cost of the
    // password hashes the user routes make.
    auth::Authenticator* authenticator = nullptr;
    auth::HashCost password_hash_cost = auth::HashCost::interactive;
    // The fan-out links this node runs (null: none), for the children listing's lag.
    const fanout::FanoutEngine* fanout = nullptr;
};

// Whether the API port serves /metrics, or a listener of its own does (http.metrics_addr).
enum class MetricsRoute { served, elsewhere };

void register_routes(Router& router, ApiContext& context,
                     MetricsRoute metrics = MetricsRoute::served);
// /healthz, /readyz and (when served) /metrics: the API port's, and the metrics listener's.
void register_health_routes(Router& router, ApiContext& context, MetricsRoute metrics);

// Route groups (one file each).
void register_topic_routes(Router& router, ApiContext& context);
void register_message_routes(Router& router, ApiContext& context);
void register_admin_routes(Router& router, ApiContext& context, MetricsRoute metrics);
void register_user_routes(Router& router, ApiContext& context);
void register_cluster_routes(Router& router, ApiContext& context);
// Decommission and forget, forwarded to the controller (api/decommission_routes.cc).
void register_decommission_routes(Router& router, ApiContext& context);
void register_controller_decommission_routes(Router& internal, ApiContext& context);
// The controller's side of forwarded topic writes, on the cluster port.
void register_controller_routes(Router& internal, ApiContext& context);

}  // namespace narad::api
