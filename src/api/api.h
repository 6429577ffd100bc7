// The public /v1 HTTP API: registers every route of Narad's API (and ours) on a Router. Handlers
// parse and validate, call the domain services, and map errors to Narad's statuses and bodies.
// Work that blocks (metastore writes, purges) goes to the blocking pool, never the HTTP threads.
#pragma once

#include <functional>
#include <string>

#include "api/router.h"
#include "base/clock.h"
#include "base/thread_pool.h"
#include "meta/topic_frontend.h"
#include "queue/consume_service.h"
#include "storage/log_manager.h"
#include "wal/produce_service.h"

namespace narad::api {

struct ApiContext {
    Clock& clock;
    meta::MetaStore& store;
    meta::TopicFrontend& topics;
    wal::ProduceService& produce;
    queue::ConsumeService& consume;
    storage::LogManager& logs;
    ThreadPool& blocking;
    // Removes this node's data of a topic that is no longer in the metastore.
    std::function<Status(std::string_view topic)> purge_topic;
    NodeId node_id;
    std::string advertise_addr;
    Millis max_consume_wait{10'000};
    std::function<bool()> ready;          // startup reconcile done: topic creates allowed
    std::function<bool()> shutting_down;  // /healthz answers 503 once true
};

void register_routes(Router& router, ApiContext& context);

// Route groups (one file each).
void register_topic_routes(Router& router, ApiContext& context);
void register_message_routes(Router& router, ApiContext& context);
void register_admin_routes(Router& router, ApiContext& context);

}  // namespace narad::api
