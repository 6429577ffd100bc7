// Decommission and forget (decommission_routes.cc, docs/decommission.md): the public routes,
// forwarded to the controller, and the controller's side of them on the cluster port.
// Thread-safe once registered.
#pragma once

#include "api/audit_log.h"
#include "api/controller_forward.h"
#include "api/router.h"
#include "base/clock.h"
#include "base/thread_pool.h"
#include "meta/etcd_meta_store.h"

namespace narad::api {

// The cluster's settings that a member's state and a decommission's guards are judged by.
struct ClusterLimits {
    Millis dead_after{30'000};         // a member not heard from this long is dead
    uint32_t min_voters = 3;           // cluster.min_voters
    uint32_t max_in_flight_moves = 8;  // move.max_in_flight
};

struct DecommissionRouteContext {
    Clock& clock;
    NodeId self;
    // Null on a node without the etcd metastore: decommission and forget answer 503.
    meta::EtcdMetaStore* etcd_store = nullptr;
    ClusterLimits limits;
    ThreadPool& blocking;       // the metastore and etcd calls
    AuditLog* audit = nullptr;  // null: not recorded
    ControllerForward controller;
};

void register_decommission_routes(Router& router, DecommissionRouteContext context);
void register_controller_decommission_routes(Router& internal, DecommissionRouteContext context);

}  // namespace narad::api
