// Writes that are the controller's to make (topic writes, a move's abort): the controller places
// partitions and plans moves from a linearizable view, and its writes are fenced by its election
// key. A public route wrapped in controller_only runs here on the controller (or on a single
// node) and is passed on verbatim to the controller's cluster port otherwise, its answer relayed;
// the controller serves it under /internal/v1/controller<public path> and never forwards again.
// Thread-safe once routes are registered.
#pragma once

#include <functional>
#include <string_view>

#include "api/api.h"

namespace narad::api {

// The public route: runs `local` here when this node is the controller, else forwards.
RouteHandler controller_only(ApiContext* context, RouteHandler local);

// The cluster port's side: `method` /internal/v1/controller`public_path`, answered 503 by a node
// that is not (or no longer) the controller.
void add_controller_route(Router& internal, ApiContext* context, std::string_view method,
                          std::string_view public_path, RouteHandler local);

}  // namespace narad::api
