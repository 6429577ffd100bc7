// MetaStore: the interface to the cluster's shared state (topics, assignments). Callers read the
// latest immutable snapshot and write through compare-and-swap style operations; watchers are told
// of every new snapshot. The single-node implementation (LocalMetaStore) keeps the state in a file;
// the cluster swaps in the etcd-backed one without changing callers.
//
// Thread-safe. Writes may block on disk or network: call them off the HTTP threads.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "meta/topic.h"

namespace narad::meta {

// One SetTarget (or ClearTarget, with an empty target) of the move planner: applies only while the
// partition's assignment still equals `expected`.
struct TargetChange {
    PartitionKey partition;
    Assignment expected;
    NodeId target;
};

// How a CompleteMove ended (docs/moves.md, "The flip").
enum class FlipOutcome {
    flipped,          // this call made the target the owner
    already_flipped,  // the owner already is the target (a retried flip that took effect)
    freeze_lapsed,    // owner and target unchanged, but the source's freeze key no longer holds
                      // the token: freeze again, drain again, flip again
    refused,          // the assignment changed (re-planned, aborted) or is gone: never flips
    source_alive,     // force-promote only: owner and target unchanged, but the source's liveness
                      // key exists or the controller has not declared it dead: wait
};
std::string_view flip_outcome_name(FlipOutcome outcome);

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
    // Deletes a topic and its assignments; not_found if it does not exist. The topics linked to
    // it by fan-out are unlinked in the same write (unlink_deleted).
    virtual Status delete_topic(std::string_view name) = 0;

    // Writes several topic records at once, all or none: `change` gets the named records as
    // stored (nullopt: none) and returns the records to store, each one of `names`: a record
    // read as nullopt is created (with `owners` of all its partitions), another replaces the
    // stored one (with `owners` of its added partitions). Each write is compared with what was
    // read; a race with another write reads again and asks `change` again. An error from
    // `change` aborts with nothing written. Returns the stored records, in the order returned.
    struct TopicWrite {
        Topic topic;
        std::vector<NodeId> owners;
    };
    using TopicRecords = std::map<std::string, std::optional<Topic>, std::less<>>;
    using TopicsChange = std::function<Result<std::vector<TopicWrite>>(const TopicRecords&)>;
    virtual Result<std::vector<Topic>> change_topics(const std::vector<std::string>& names,
                                                     const TopicsChange& change) = 0;

    // Calls `watcher` with every snapshot published after this call (on the writer's thread, in
    // order). Returns an id for unwatch().
    virtual uint64_t watch(std::function<void(const MetaSnapshot&)> watcher) = 0;
    virtual void unwatch(uint64_t id) = 0;

    // Partition moves. A store without moves (the single-node one) answers not_implemented.
    //
    // The controller's SetTarget/ClearTarget, each a compare-and-swap on the assignment read
    // (fenced like every controller write). Returns how many changes applied; a change whose
    // assignment moved on is skipped, not an error.
    virtual Result<size_t> set_targets(const std::vector<TargetChange>& changes);
    // The destination's CompleteMove: owner := target, only if the assignment is still
    // {source, target} and the source's freeze key still holds `freeze_token`. A lost reply is
    // Errc::unknown_outcome: the caller resolves it by reading.
    virtual Result<FlipOutcome> complete_move(const PartitionKey& partition, const NodeId& source,
                                              const NodeId& target,
                                              const FreezeToken& freeze_token);
    // Force-promote (the source is dead): owner := target without a freeze, only if the
    // assignment is still {source, target}, the source's liveness key is absent and the
    // controller has declared it dead. Lost reply: Errc::unknown_outcome.
    virtual Result<FlipOutcome> force_promote(const PartitionKey& partition, const NodeId& source,
                                              const NodeId& target);
    // A linearizable read of one topic record (nullopt: none).
    virtual Result<std::optional<Topic>> read_topic(std::string_view name);
    // A linearizable read of one assignment (nullopt: none).
    virtual Result<std::optional<Assignment>> read_assignment(const PartitionKey& partition);
    // The source's freeze key: written with `token` under a new lease of `ttl`; returns the lease.
    virtual Result<int64_t> hold_freeze(const PartitionKey& partition, const FreezeToken& token,
                                        Millis ttl);
    // Keeps a freeze lease alive for another TTL; not_found once it expired.
    virtual Status renew_freeze(int64_t lease);
    // Revokes the lease, so the freeze key is gone (etcd orders this before any later flip).
    virtual Status release_freeze(int64_t lease);
    // Deletes a partition's freeze key whatever holds it (one left by an earlier run).
    virtual Status remove_freeze(const PartitionKey& partition);

    // Users (security): a read-modify-write of one user's record, retried while it races another
    // write of the same record. `change` gets the stored record (nullopt: none) and returns the
    // record to store, nullopt to delete it, or an error, which aborts with nothing written.
    // Returns what is stored afterwards. Deleting a user also clears the owner of every topic it
    // owns, in the same write. A store without users answers not_implemented.
    using UserChange = std::function<Result<std::optional<User>>(const std::optional<User>&)>;
    virtual Result<std::optional<User>> change_user(std::string_view name,
                                                    const UserChange& change);

    // The first partition a write of change_topics adds (the count read; 0 for a create), or
    // invalid_argument for a write outside the records read or one that does not only grow.
    static Result<uint32_t> first_new_partition(const TopicRecords& read, const TopicWrite& write);
    // For stores that keep a MetaState in memory (the local and fake stores): runs `change`
    // against `current` and applies its writes to `next`. Returns what change_topics returns.
    static Result<std::vector<Topic>> apply_topic_change(const MetaState& current, MetaState& next,
                                                         const std::vector<std::string>& names,
                                                         const TopicsChange& change);
    // Deletes `name` from `next` with its assignments, unlinking the topics linked to it.
    static void apply_topic_delete(MetaState& next, std::string_view name);

    // Conveniences: every (new) partition on one node.
    Result<Topic> create_topic_on(Topic topic, const NodeId& owner);
    Result<Topic> update_topic_on(Topic topic, const NodeId& owner);
};

}  // namespace narad::meta
