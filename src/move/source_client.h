// SourceClient: how a move's destination talks to the partition's source node (the four handoff
// calls of docs/moves.md). node/ wires the HTTP one (api/move_peer.h) over the cluster port; tests
// wire one that calls a HandoffService in the same process. Thread-safe.
//
// Errors: Errc::conflict is the source's 409 (the freeze named by the token is gone, or the high
// watermark moved); Errc::not_owner its 421 (it does not own the partition); peer_error,
// unknown_outcome and unavailable are transient (retry).
#pragma once

#include <string>

#include "base/ids.h"
#include "base/status.h"
#include "move/transfer.h"

namespace narad::move {

class SourceClient {
  public:
    virtual ~SourceClient() = default;

    virtual Result<TransferListing> list(const NodeId& source, const std::string& topic,
                                         PartitionId partition) = 0;
    // `length` bytes of a segment's file (or of its index) from `offset`; the destination never
    // asks past a listed size. Fewer bytes only when the file is shorter (retention removed it:
    // not_found).
    virtual Result<std::string> read_chunk(const NodeId& source, const std::string& topic,
                                           PartitionId partition, Offset base, ChunkKind kind,
                                           uint64_t offset, uint64_t length) = 0;
    // PrepareHandoff: an empty token freezes the partition and returns a fresh token; a token
    // re-arms that freeze (conflict if it lapsed).
    virtual Result<Handoff> prepare(const NodeId& source, const std::string& topic,
                                    PartitionId partition, const FreezeToken& token) = 0;
    // The fence before install: the freeze must still hold and the high watermark equal `hwm`.
    virtual Status fence(const NodeId& source, const std::string& topic, PartitionId partition,
                         const FreezeToken& token, Offset hwm) = 0;
};

}  // namespace narad::move
