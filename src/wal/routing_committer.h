// RoutingCommitter: the dispatcher's PartitionCommitter in a cluster. A batch for a partition this
// node owns (or one with no assignment, or any batch while the snapshot lists no members: a
// single-node store) goes to the local committer; any other goes to its owner as POST
// /internal/v1/commit over the PeerClient, body encoded by wal/commit_codec.h.
//
// Outcomes, as the dispatcher reads them: the owner's 204 is ok; its 404 (topic, partition or
// incarnation gone) is Errc::not_found and the records are dropped; its 423 (the partition is
// frozen for a move) is Errc::frozen, retried and after a grace rerouted; everything else — 421
// (the owner no longer owns it), 5xx, an unreachable owner (peer_error), a lost reply
// (unknown_outcome), a node not (yet) in the member list — is a retryable error. Retrying after a
// lost reply is safe because the owner's partition log deduplicates by (ingress id, sequence).
//
// Thread-safe (the dispatcher's workers call it concurrently for different partitions); blocks on
// the network or the disk.
#pragma once

#include <string>

#include "base/peer_client.h"
#include "meta/meta_store.h"
#include "wal/dispatcher.h"

namespace narad::wal {

struct RoutingOptions {
    Millis commit_timeout{10'000};
};

class RoutingCommitter final : public PartitionCommitter {
  public:
    RoutingCommitter(meta::MetaStore& store, NodeId local_node, PartitionCommitter& local,
                     PeerClient& peers, RoutingOptions options = {});

    Status commit(const std::string& topic, const std::string& incarnation, PartitionId partition,
                  std::span<const storage::Record> records) override;

  private:
    Status commit_remote(const NodeId& owner, const std::string& topic,
                         const std::string& incarnation, PartitionId partition,
                         std::span<const storage::Record> records, uint64_t revision);

    meta::MetaStore& store_;
    NodeId local_node_;
    PartitionCommitter& local_;
    PeerClient& peers_;
    RoutingOptions options_;
};

// The target of an internal commit:
// /internal/v1/commit?topic=..&incarnation=..&partition=..&revision=.. where `revision` is the
// sender's metastore revision: an owner whose replica is older must not call the topic gone.
std::string commit_target(std::string_view topic, std::string_view incarnation,
                          PartitionId partition, uint64_t revision);

}  // namespace narad::wal
