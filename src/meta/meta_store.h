// MetaStore: the interface to the cluster's shared state (topics, assignments). Callers read the
// latest immutable snapshot and write through compare-and-swap style operations; watchers are told
// of every new snapshot. The single-node implementation (LocalMetaStore) keeps the state in a file;
// the cluster swaps in the etcd-backed one without changing callers.
//
// Thread-safe. Writes may block on disk or network: call them off the HTTP threads.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "meta/topic.h"

namespace narad::meta {

class MetaStore {
  public:
    virtual ~MetaStore() = default;

    // The latest snapshot; never null.
    virtual MetaSnapshot snapshot() const = 0;

    // Creates a topic and its partitions' assignments: partition p is owned by owners[p] (one
    // owner per partition). already_exists if the name is taken. Returns the stored topic.
    virtual Result<Topic> create_topic(Topic topic, std::vector<NodeId> owners) = 0;
    // Replaces a topic's record if its incarnation is still `topic.incarnation` (not_found
    // otherwise). Growing `partitions` adds assignments for the new partitions, the first new one
    // owned by added_owners[0] and so on (one per new partition).
    virtual Result<Topic> update_topic(Topic topic, std::vector<NodeId> added_owners) = 0;
    // Deletes a topic and its assignments; not_found if it does not exist.
    virtual Status delete_topic(std::string_view name) = 0;

    // Calls `watcher` with every snapshot published after this call (on the writer's thread, in
    // order). Returns an id for unwatch().
    virtual uint64_t watch(std::function<void(const MetaSnapshot&)> watcher) = 0;
    virtual void unwatch(uint64_t id) = 0;

    // Conveniences: every (new) partition on one node.
    Result<Topic> create_topic_on(Topic topic, const NodeId& owner);
    Result<Topic> update_topic_on(Topic topic, const NodeId& owner);
};

}  // namespace narad::meta
