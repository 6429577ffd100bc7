#include "wal/routing_committer.h"

#include "base/log.h"
#include "base/metrics.h"
#include "base/url.h"
#include "wal/commit_codec.h"

namespace narad::wal {
namespace {

metrics::Family<metrics::Counter>& remote_commits() {
    static auto& family = metrics::Registry::global().counter(
        "narad_dispatcher_remote_commits_total",
        "Batches committed to partitions owned by other nodes, by outcome.", {"outcome"});
    return family;
}

}  // namespace

std::string commit_target(std::string_view topic, std::string_view incarnation,
                          PartitionId partition, uint64_t revision) {
    return "/internal/v1/commit?topic=" + percent_encode(topic) +
           "&incarnation=" + percent_encode(incarnation) +
           "&partition=" + std::to_string(partition.value()) +
           "&revision=" + std::to_string(revision);
}

RoutingCommitter::RoutingCommitter(meta::MetaStore& store, NodeId local_node,
                                   PartitionCommitter& local, PeerClient& peers,
                                   RoutingOptions options)
    : store_(store),
      local_node_(std::move(local_node)),
      local_(local),
      peers_(peers),
      options_(options) {}

Status RoutingCommitter::commit(const std::string& topic, const std::string& incarnation,
                                PartitionId partition, std::span<const storage::Record> records) {
    meta::MetaSnapshot snapshot = store_.snapshot();
    const meta::Assignment* assignment = snapshot->find_assignment(topic, partition);
    // A metastore without members is a single node's (whatever id created the assignments).
    if (snapshot->members.empty() || assignment == nullptr || assignment->owner == local_node_) {
        // The local committer re-checks the topic and incarnation under the topic's guard.
        return local_.commit(topic, incarnation, partition, records);
    }
    NodeId owner = assignment->owner;
    return commit_remote(owner, topic, incarnation, partition, records, snapshot->revision);
}

Status RoutingCommitter::commit_remote(const NodeId& owner, const std::string& topic,
                                       const std::string& incarnation, PartitionId partition,
                                       std::span<const storage::Record> records,
                                       uint64_t revision) {
    auto body = commit_codec::encode(records);
    if (!body.is_ok()) {
        // The dispatcher's batch limits keep a batch far below the codec's; never drop for this.
        return Status(Errc::internal, body.status().message());
    }
    auto reply = peers_.call(owner, "POST", commit_target(topic, incarnation, partition, revision),
                             *body, "application/octet-stream", options_.commit_timeout);
    std::string where = "commit of " + topic + "/" + std::to_string(partition.value()) +
                        " to node " + owner.value();
    if (!reply.is_ok()) {
        remote_commits().with({"unreachable"}).inc();
        // not_found from the PeerClient means "not a known member": the member list may lag the
        // assignment, so retry; passing not_found on would drop the records.
        Errc code = reply.code() == Errc::not_found ? Errc::unavailable : reply.code();
        return Status(code, where + ": " + reply.status().message());
    }
    switch (reply->status) {
        case 204:
        case 200:
            remote_commits().with({"ok"}).inc();
            return Status::ok();
        case 404:
            remote_commits().with({"gone"}).inc();
            return Status(Errc::not_found, where + ": topic, partition or incarnation gone");
        case 421:
            remote_commits().with({"not_owner"}).inc();
            return Status(Errc::not_owner, where + ": the node does not own it");
        case 423:
            remote_commits().with({"frozen"}).inc();
            return Status(Errc::frozen, where + ": frozen for a move");
        default:
            remote_commits().with({"error"}).inc();
            return Status(Errc::unavailable, where + ": answered " + std::to_string(reply->status) +
                                                 " " + reply->body.substr(0, 200));
    }
}

}  // namespace narad::wal
