// The metastore's key schema in etcd: every key of a cluster lives under /narad/<cluster>/ and
// names its domain in its next segment (docs/metastore.md lists them). Pure functions; names
// reaching here have been validated (names.h), so they contain no '/'.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/ids.h"

namespace narad::meta {

class Keys {
  public:
    explicit Keys(std::string cluster);

    // Everything of this cluster.
    const std::string& prefix() const { return prefix_; }
    std::string topic(std::string_view name) const;
    std::string topics_prefix() const;
    std::string assignment(std::string_view topic, PartitionId partition) const;
    // Every assignment key of one topic.
    std::string assignments_prefix(std::string_view topic) const;
    std::string member(const NodeId& node) const;
    std::string live(const NodeId& node) const;
    // The controller election's name (its candidates' keys sit under it).
    std::string election() const;
    // Written by a controller once its start-up reconcile is done.
    std::string ready() const;
    // Rewritten by EtcdMetaStore::sync() as a barrier; carries nothing.
    std::string barrier() const;
    // A partition's handoff freeze (value: the freeze token), held by the source under a lease.
    std::string freeze(std::string_view topic, PartitionId partition) const;
    // The controller's verdict that a member has been dead for at least the force-promote
    // timeout on its own clock (docs/moves.md, "Force-promote").
    std::string dead(const NodeId& node) const;
    // Present while a member is draining (decommission): flips and topic creates compare it
    // absent for the node they place a partition on, so nothing lands on a node that is leaving.
    std::string draining(const NodeId& node) const;
    std::string draining_prefix() const;
    // A user's record (security).
    std::string user(std::string_view name) const;

    // What a key under prefix() is.
    struct Parsed {
        enum class Domain { topic, assignment, member, live, dead, ready, user, other };
        Domain domain = Domain::other;
        std::string name;  // topic, node or user
        PartitionId partition;
    };
    Parsed parse(std::string_view key) const;

  private:
    std::string prefix_;
};

}  // namespace narad::meta
