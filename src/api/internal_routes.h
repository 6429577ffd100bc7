// The node-to-node API, served only on the cluster port (DESIGN.md "Public HTTP API", last
// paragraph). InternalRouter is the cluster port's HttpHandler: every request must carry the
// cluster secret in `x-narad-cluster-secret` (compared in constant time). It is checked on the
// head, before any body byte is read; a missing or wrong one is 403 with the connection closed,
// and a node with no secret configured refuses every call the same way. Behind it, routes under
// /internal/v1/:
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

#include "api/api.h"
#include "api/router.h"
#include "wal/dispatcher.h"

namespace narad::api {

inline constexpr std::string_view kClusterSecretHeader = "x-narad-cluster-secret";

// Equal in time that depends only on the lengths, never on where the first difference is.
bool constant_time_equals(std::string_view a, std::string_view b);

class InternalRouter final : public net::HttpHandler {
  public:
    // An empty `secret` refuses every call (403 "cluster secret not configured").
    InternalRouter(Clock& clock, std::string secret);

    Router& routes() { return router_; }
    void handle(net::HttpRequest request, net::Responder respond) override;
    // 403 unless the head carries the cluster secret.
    std::optional<net::HttpResponse> screen(net::HttpRequest& head) override;

  private:
    Router router_;
    std::string secret_;
};

// What the commit route needs (kept apart so it is testable without a whole node).
struct InternalCommitContext {
    meta::MetaStore& store;
    NodeId node_id;
    wal::PartitionCommitter& committer;  // the local one: appends to this node's logs
    ThreadPool& pool;                    // commits block on fdatasync
};

void register_internal_commit_route(Router& router, InternalCommitContext& context);
// Consume, ack and stats routes for partitions owned here (uses the public handlers' code).
void register_internal_message_routes(Router& router, ApiContext& context);

}  // namespace narad::api
