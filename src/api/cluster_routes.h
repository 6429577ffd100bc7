// The cluster's read routes (cluster_routes.cc): GET /v1/cluster/members[?detail=] and
// GET /v1/cluster/status. Thread-safe once registered.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/decommission_routes.h"
#include "api/node_status.h"
#include "api/owner_routing.h"
#include "api/router.h"
#include "meta/etcd_client.h"

namespace narad::api {

struct ClusterRouteContext {
    Clock& clock;
    meta::MetaStore& store;
    std::string cluster_name;
    ClusterLimits limits;  // whether a member is dead, and what blocks its decommission
    std::function<bool()> is_controller;
    // The etcd members (GET /v1/cluster/status). Blocks.
    std::function<Result<std::vector<meta::Member>>()> etcd_members;
    const NodeStatusSources* node_status = nullptr;  // this node's own status (null: none)
    ThreadPool& blocking;                            // the etcd member list
    OwnerRouting routing;                            // the other members' status (?detail=true)
};

void register_cluster_routes(Router& router, ClusterRouteContext context);

}  // namespace narad::api
