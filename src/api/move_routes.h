// Partition moves over HTTP (docs/api.md, "Moves").
//
// On the cluster port, the source side of a move (move::HandoffService):
//   GET  /internal/v1/moves/{topic}/{partition}/listing         the transfer listing (JSON)
//   GET  /internal/v1/moves/{topic}/{partition}/chunk?base=&kind=log|index&offset=&length=
//                                                               segment bytes (octet-stream)
//   POST /internal/v1/moves/{topic}/{partition}/prepare?token=  PrepareHandoff: {token, listing}
//   POST /internal/v1/moves/{topic}/{partition}/fence?token=&hwm=   204, or 409 when lapsed
//   GET  /internal/v1/moves                                     this node's workers' progress
// 421 means this node does not own the partition, 409 a lapsed freeze or moved high watermark.
//
// On the public port, GET /v1/cluster/moves lists the moves in flight from the metastore
// ({topic, partition, from, to, from_status, to_status, blocked?}, Narad's fields); ?detail=true
// adds the destination's own report (Narad's `worker` object, and ours: phase, bytes, passes,
// freeze). POST /v1/cluster/moves/{topic}/{partition}/abort[?target=] clears a move's target on
// the controller and reads the outcome back: 202 {move, note}, 404, 409 (naming owner and target),
// 503 when the outcome could not be read; each abort that took effect or whose outcome is unknown
// is audited as cluster.move.abort.
//
// PeerSourceClient is move::SourceClient over the PeerClient, speaking the routes above.
#pragma once

#include <algorithm>

#include "api/audit_log.h"
#include "api/controller_forward.h"
#include "api/owner_routing.h"
#include "api/router.h"
#include "base/thread_pool.h"
#include "move/handoff.h"
#include "move/runner.h"
#include "move/source_client.h"

namespace narad::api {

struct MoveRouteContext {
    move::HandoffService& handoff;
    move::MoveRunner& runner;
    ThreadPool& pool;  // listings, chunks and freezes block on disk and the metastore
};

void register_internal_move_routes(Router& router, MoveRouteContext& context);

struct PublicMoveRouteContext {
    Clock& clock;
    meta::MetaStore& store;
    Millis dead_after{30'000};                 // a side not heard from this long is dead
    const move::MoveRunner* runner = nullptr;  // this node's own workers (null: none)
    ThreadPool& blocking;                      // the abort's metastore calls
    AuditLog* audit = nullptr;                 // null: aborts are not recorded
    OwnerRouting routing;                      // the destinations' reports (?detail=true)
    ControllerForward controller;
};

// GET /v1/cluster/moves and POST /v1/cluster/moves/{topic}/{partition}/abort (forwarded to the
// controller).
void register_public_move_routes(Router& router, PublicMoveRouteContext context);
// The controller's side of the abort, on the cluster port.
void register_controller_move_routes(Router& internal, PublicMoveRouteContext context);
// This node's move workers as Narad's `worker` objects: a JSON array's text.
std::string worker_reports_json(const move::MoveRunner& runner, const NodeId& self);

// The destination's calls to a move's source over the cluster port. Listings and chunks wait up
// to `timeout`; a freeze (prepare) or fence waits at most `freeze_timeout`, the freeze TTL: past
// it the freeze has lapsed and the answer is of no use, and a source that hangs instead of dying
// must not hold the worker longer before it judges the source (and, dead long enough,
// force-promotes).
class PeerSourceClient final : public move::SourceClient {
  public:
    PeerSourceClient(PeerClient& peers, Millis timeout, Millis freeze_timeout)
        : peers_(peers), timeout_(timeout), freeze_timeout_(std::min(timeout, freeze_timeout)) {}

    Result<move::TransferListing> list(const NodeId& source, const std::string& topic,
                                       PartitionId partition) override;
    Result<std::string> read_chunk(const NodeId& source, const std::string& topic,
                                   PartitionId partition, Offset base, move::ChunkKind kind,
                                   uint64_t offset, uint64_t length) override;
    Result<move::Handoff> prepare(const NodeId& source, const std::string& topic,
                                  PartitionId partition, const FreezeToken& token) override;
    Status fence(const NodeId& source, const std::string& topic, PartitionId partition,
                 const FreezeToken& token, Offset hwm) override;

  private:
    Result<PeerReply> call(const NodeId& source, std::string_view method, const std::string& target,
                           Millis timeout);

    PeerClient& peers_;
    Millis timeout_;
    Millis freeze_timeout_;
};

}  // namespace narad::api
