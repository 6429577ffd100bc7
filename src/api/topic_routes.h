// The topic routes (topic_routes.cc): create, list, get (with partition stats), PATCH, DELETE,
// the schema history and the fan-out children; topic writes go to the controller. Thread-safe
// once registered.
#pragma once

#include <functional>

#include "api/access.h"
#include "api/controller_forward.h"
#include "api/owner_routing.h"
#include "api/router.h"
#include "base/thread_pool.h"
#include "meta/topic_frontend.h"
#include "storage/log_manager.h"

namespace narad::fanout {
class FanoutEngine;
}

namespace narad::api {

struct TopicRouteContext {
    meta::MetaStore& store;
    meta::TopicFrontend& topics;
    storage::LogManager& logs;  // the stats of the partitions owned here
    ThreadPool& blocking;       // metastore writes and purges
    // Removes this node's data of a topic that is no longer in the metastore.
    std::function<Status(std::string_view topic)> purge_topic;
    std::function<bool()> ready;                   // start-up reconcile done: topic creates allowed
    const fanout::FanoutEngine* fanout = nullptr;  // the links run here (null: none)
    AccessContext access;
    OwnerRouting routing;  // the stats and fan-out cursors of partitions owned elsewhere
    ControllerForward controller;
};

void register_topic_routes(Router& router, TopicRouteContext context);
// The controller's side of the topic writes, on the cluster port.
void register_controller_topic_routes(Router& internal, TopicRouteContext context);

}  // namespace narad::api
