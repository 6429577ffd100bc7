// The node-to-node API, served only on the cluster port (DESIGN.md "Public HTTP API", last
// paragraph). InternalRouter is the cluster port's HttpHandler: its routes behind a
// net::ClusterGuard, so a connection must prove the cluster secret (current or, during a
// rotation, previous) before any route sees a request, and a request on an unproved connection is
// refused on its head. Routes under /internal/v1/:
//   POST /internal/v1/commit?topic=&incarnation=&partition=   body: wal/commit_codec.h records
//   GET  /internal/v1/topics/{topic}/consume       as the public consume, local partitions only
//   POST /internal/v1/topics/{topic}/ack           as the public ack, for partitions owned here
//   POST /internal/v1/topics/{topic}/ack/batch     as the public batch ack
//   GET  /internal/v1/topics/{topic}/stats         partition stats of the partitions owned here
// The public router never registers these paths, so the public port answers them 404.
//
// Handlers run on the cluster server's threads and hand disk work to a pool. Thread-safe once
// routes are registered.
#pragma once

#include <string>

#include "api/message_routes.h"
#include "api/router.h"
#include "net/cluster_guard.h"
#include "wal/dispatcher.h"

namespace narad::fanout {
class FanoutEngine;
}

namespace narad::api {

class InternalRouter final : public net::HttpHandler {
  public:
    // With PlaneAccess::proved and no secrets every call is refused (403 "cluster secret not
    // configured").
    InternalRouter(Clock& clock, auth::ClusterSecrets secrets,
                   net::PlaneAccess access = net::PlaneAccess::proved)
        : router_(clock), guard_(std::move(secrets), access, router_) {}

    Router& routes() { return router_; }
    void handle(net::HttpRequest request, net::Responder respond) override {
        guard_.handle(std::move(request), std::move(respond));
    }
    std::optional<net::HttpResponse> screen(net::HttpRequest& head) override {
        return guard_.screen(head);
    }
    std::optional<uint64_t> body_limit(const net::HttpRequest& head) override {
        return guard_.body_limit(head);
    }

  private:
    Router router_;
    net::ClusterGuard guard_;
};

// What the commit route needs (kept apart so it is testable without a whole node).
struct InternalCommitContext {
    meta::MetaStore& store;
    NodeId node_id;
    wal::PartitionCommitter& committer;  // the local one: appends to this node's logs
    ThreadPool& pool;                    // commits block on fdatasync
};

void register_internal_commit_route(Router& router, InternalCommitContext& context);

struct InternalMessageRouteContext {
    MessageRouteContext messages;  // the public handlers' services (no grants on this port)
    storage::LogManager& logs;     // the stats of the partitions owned here
    ThreadPool& blocking;          // stats read the disk
    const fanout::FanoutEngine* fanout = nullptr;  // the cursors this node runs (null: none)
};

// Consume, ack, stats and fan-out cursor routes for partitions owned here (uses the public
// handlers' code).
void register_internal_message_routes(Router& router, InternalMessageRouteContext context);

}  // namespace narad::api
