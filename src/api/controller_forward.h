// Writes that are the controller's to make (topic writes, a move's abort): the controller places
// partitions and plans moves from a linearizable view, and its writes are fenced by its election
// key. A public route wrapped in controller_only runs here on the controller (or on a single
// node) and is passed on verbatim to the controller's cluster port otherwise, its answer relayed;
// the controller serves it under /internal/v1/controller<public path> and never forwards again.
// Thread-safe once routes are registered.
#pragma once

#include <functional>
#include <string_view>

#include "api/owner_routing.h"
#include "api/router.h"
#include "meta/meta_store.h"

namespace narad::api {

// How a write reaches the controller.
struct ControllerForward {
    meta::MetaStore& store;  // names the controller
    // This node leads and has finished its start-up reconcile: the writes are its to make.
    std::function<bool()> is_controller;
    OwnerRouting routing;  // carries a forwarded write (a single node forwards nothing)
};

// The public route: runs `local` here when this node is the controller, else forwards.
RouteHandler controller_only(ControllerForward forward, RouteHandler local);

// The cluster port's side: `method` /internal/v1/controller`public_path`, answered 503 by a node
// that is not (or no longer) the controller.
void add_controller_route(Router& internal, ControllerForward forward, std::string_view method,
                          std::string_view public_path, RouteHandler local);

}  // namespace narad::api
