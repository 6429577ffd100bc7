// The cluster port's membership calls, answered by the node's cluster runtime:
//   POST /internal/v1/join        a new node asks to join; the body and the JSON answer are the
//                                 runtime's (200), a refusal its error
//   POST /internal/v1/etcd/host   the controller asks this node to host an etcd member: 204
// Both block on etcd, so they run on the context's pool. ask_to_host_etcd() is the controller's
// side of the second call. Thread-safe once registered.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "api/router.h"
#include "base/peer_client.h"
#include "base/thread_pool.h"

namespace narad::api {

struct MembershipRouteContext {
    std::function<Result<std::string>(std::string_view request)> join;
    std::function<Status()> host_etcd;
    ThreadPool& pool;
};

void register_membership_routes(Router& internal, MembershipRouteContext context);

// Asks `node` to host an etcd member; peer_error naming its answer when it does not say 204.
Status ask_to_host_etcd(PeerClient& peers, const NodeId& node, Millis timeout);

}  // namespace narad::api
