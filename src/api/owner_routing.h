// Routing of public calls to partition owners (a cluster): where a partition lives as seen from
// this node (here, on a live peer, or on a dead one), and the blocking calls that carry a consume,
// replay or ack to the owner's cluster port (api/internal_routes.h) and relay its answer. With no
// PeerClient (a single node) every partition is local.
//
// The forwarding functions block on the network: they run on the routing pool, never on HTTP
// threads. Thread-safe.
#pragma once

#include <functional>
#include <string>

#include "base/peer_client.h"
#include "base/thread_pool.h"
#include "meta/meta_store.h"
#include "net/http.h"
#include "wal/owner_liveness.h"

namespace narad::api {

// How this node reaches the owners of partitions it does not own.
struct OwnerRouting {
    ThreadPool& pool;  // runs the forwarding calls, which block
    NodeId self;
    PeerClient* peers = nullptr;                   // null: a single node, everything is local
    const wal::OwnerLiveness* liveness = nullptr;  // which owners are dead (null: none known)
    // Bounds each poll of a peer in a topic-wide consume, and each forwarded ack.
    Millis peer_timeout{5'000};
};

enum class Placement { local, remote, dead };

struct PartitionOwner {
    Placement placement = Placement::local;
    NodeId node;
};

PartitionOwner locate(const OwnerRouting& routing, const meta::MetaState& state,
                      std::string_view topic, PartitionId partition);

// 503 for a partition whose owner is dead.
net::HttpResponse owner_down_response(PartitionId partition, const NodeId& owner);

// "/internal/v1/topics/<topic><suffix>"
std::string internal_topic_target(std::string_view topic, std::string_view suffix);

// Runs `work` on the routing pool and answers with its response (answer_on_pool).
void run_routed(const OwnerRouting& routing, net::Responder respond,
                std::function<net::HttpResponse()> work);

// One call to `owner` and its answer relayed as is; an unreachable owner or a lost reply is 503
// naming the node as `role` ("owner node", "controller"). Blocks.
net::HttpResponse forward_to_owner(const OwnerRouting& routing, const NodeId& owner,
                                   std::string_view method, const std::string& target,
                                   std::string_view body, Millis timeout,
                                   std::string_view role = "owner node");

}  // namespace narad::api
