// The consume and ack handlers shared by the public port (which routes to owners) and the cluster
// port (which serves only partitions owned here and never forwards: Narad's local_only). Called on
// server threads; they never block (forwarding runs on the routing pool).
#pragma once

#include <string>

#include "api/message_routes.h"
#include "api/params.h"

namespace narad::api {

enum class Scope {
    public_port,  // route to the owner when the partition lives elsewhere
    local_only,   // this node's partitions only: another's is 421, nothing is forwarded
};

void handle_consume(const MessageRouteContext& context, net::HttpRequest request,
                    const std::string& topic, Scope scope, net::Responder respond);
void handle_ack(const MessageRouteContext& context, net::HttpRequest request,
                const std::string& topic, Scope scope, net::Responder respond);
// The handles are in the body ({"receipt_handles":[...]}); `action` is the query's `extend`, or
// nullopt to take it from the body (the node-to-node route and the `ack/batch` alias).
void handle_ack_batch(const MessageRouteContext& context, net::HttpRequest request,
                      const std::string& topic, Scope scope, net::Responder respond,
                      std::optional<AckAction> action);

}  // namespace narad::api
