#include "api/owner_routing.h"

#include "api/respond.h"
#include "base/log.h"

namespace narad::api {

PartitionOwner locate(const OwnerRouting& routing, const meta::MetaState& state,
                      std::string_view topic, PartitionId partition) {
    // A metastore without members is a single node's: everything is local there.
    if (routing.peers == nullptr || state.members.empty()) return {};
    const meta::Assignment* assignment = state.find_assignment(topic, partition);
    if (assignment == nullptr || assignment->owner == routing.self) return {};
    if (routing.liveness != nullptr && routing.liveness->dead_owner(state, topic, partition)) {
        return {Placement::dead, assignment->owner};
    }
    return {Placement::remote, assignment->owner};
}

net::HttpResponse owner_down_response(PartitionId partition, const NodeId& owner) {
    net::HttpResponse response = error_response(
        Errc::unavailable, "partition " + std::to_string(partition.value()) +
                               " is unavailable: its owner node " + owner.value() + " is down");
    response.headers.emplace_back("Retry-After", "1");
    return response;
}

std::string internal_topic_target(std::string_view topic, std::string_view suffix) {
    return "/internal/v1/topics/" + net::url_encode(topic) + std::string(suffix);
}

void run_routed(const OwnerRouting& routing, net::Responder respond,
                std::function<net::HttpResponse()> work) {
    answer_on_pool(routing.pool, std::move(respond), std::move(work));
}

net::HttpResponse forward_to_owner(const OwnerRouting& routing, const NodeId& owner,
                                   std::string_view method, const std::string& target,
                                   std::string_view body, Millis timeout, std::string_view role) {
    auto reply = routing.peers->call(owner, method, target, body, "application/json", timeout);
    if (!reply.is_ok()) {
        NARAD_LOG_WARN("forwarding {} {} to node {} failed: {}", method, target, owner.value(),
                       reply.status().to_string());
        return error_response(Errc::unavailable,
                              std::string(role) + " " + owner.value() +
                                  " is unreachable: " + reply.status().message());
    }
    net::HttpResponse response;
    response.status = reply->status;
    response.content_type = reply->content_type;
    response.body = std::move(reply->body);
    return response;
}

}  // namespace narad::api
