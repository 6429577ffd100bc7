// The message routes (message_routes.cc): produce (single and batch), consume (queue, pinned,
// replay, batch) and ack (single and batch), each behind the grant it needs on its topic.
// Thread-safe once registered.
#pragma once

#include <functional>

#include "api/access.h"
#include "api/owner_routing.h"
#include "api/router.h"
#include "base/clock.h"
#include "queue/consume_service.h"
#include "wal/produce_service.h"

namespace narad::api {

class ProduceGate;

struct MessageRouteContext {
    Clock& clock;
    meta::MetaStore& store;
    wal::ProduceService& produce;
    queue::ConsumeService& consume;
    Millis max_consume_wait{10'000};      // a longer wait is cut to this (and the client told)
    ProduceGate* produce_gate = nullptr;  // refuses client produce while draining (null: never)
    // Once true, a topic-wide consume that spans nodes stops waiting.
    std::function<bool()> shutting_down;
    AccessContext access;
    OwnerRouting routing;  // consume, replay and ack of partitions owned elsewhere
};

void register_message_routes(Router& router, MessageRouteContext context);

}  // namespace narad::api
