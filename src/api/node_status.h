// A node's report of itself (Narad's node_status): whether its replica has applied its drain,
// the client produces it admitted and has not answered, its ingress WAL's dispatch backlog, its
// quarantined copies and its move workers. Served on the cluster port as
// GET /internal/v1/node/status; read by the controller before it removes a drained node, and by
// GET /v1/cluster/members?detail=true. Thread-safe once built.
#pragma once

#include <functional>
#include <string>

#include "api/produce_gate.h"
#include "api/router.h"
#include "base/peer_client.h"
#include "base/thread_pool.h"
#include "cluster/decommission.h"
#include "io/file_system.h"
#include "move/runner.h"

namespace narad::api {

struct NodeStatusSources {
    NodeId self;
    const ProduceGate& gate;
    std::function<uint64_t()> dispatch_backlog;  // ingress WAL records not yet committed
    io::FileSystem& fs;
    std::string data_dir;
    const move::MoveRunner* runner = nullptr;  // null: no workers to report
    ThreadPool& pool;                          // the quarantine inventory reads the data directory
};

// This node's status as a JSON object's text. Blocks on disk (the quarantine inventory).
std::string node_status_body(const NodeStatusSources& sources);

void register_node_status_route(Router& internal, NodeStatusSources& sources);

// Another node's status body through its cluster port.
Result<std::string> fetch_node_status(PeerClient& peers, const NodeId& node, Millis timeout);
// The fields the controller acts on, from a status body.
Result<cluster::NodeStatus> decode_node_status(std::string_view body);

}  // namespace narad::api
