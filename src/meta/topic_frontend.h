// TopicFrontend: validates topic requests (create, update, delete) with Narad's rules, in Narad's
// order and words, and proposes them to the MetaStore. It never touches partition data: nodes
// reconcile their disks against the metastore (node/topic_backend.h).
//
// Thread-safe; calls block on the metastore, so run them off the HTTP threads.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "meta/meta_store.h"

namespace narad::meta {

// The defaults and limits applied to topic requests (Narad's `topic` config block).
struct TopicPolicy {
    int64_t default_partitions = 3;
    int64_t max_partitions = 108;
    int64_t default_retention_ms = 604'800'000;
    int64_t default_visibility_timeout_ms = 30'000;
    int64_t default_max_in_flight = 1024;
    int64_t default_max_acked_ahead = 1024;
};

inline constexpr int64_t kMinRetentionMs = 3'600'000;
inline constexpr int64_t kMaxFanoutDelayMs = 31'536'000'000;
inline constexpr int64_t kMaxDeliveriesLimit = 1000;

// A create request as decoded from JSON; 0 means "use the default", except for retention_ms, where
// absent takes the default and 0 keeps messages forever (Narad 3.2).
struct CreateTopicRequest {
    std::string name;
    int64_t partitions = 0;
    std::optional<int64_t> retention_ms;
    int64_t visibility_timeout_ms = 0;
    int64_t max_in_flight_per_partition = 0;
    int64_t max_acked_ahead_per_partition = 0;
    std::optional<std::string> schema;  // JSON text; nullopt or "null" for none
    std::string parent;
    int64_t fanout_delay_ms = 0;
    int64_t max_deliveries = 0;  // ours: 0 = no dead letters
    std::string dead_letter_topic;
    std::string owner;  // the authenticated user; empty with security off
};

// A PATCH request: unset fields keep their values. `partitions` 0 means unset.
struct UpdateTopicRequest {
    int64_t partitions = 0;
    std::optional<int64_t> retention_ms;
    std::optional<int64_t> max_in_flight_per_partition;
    std::optional<int64_t> max_acked_ahead_per_partition;
    std::optional<std::string> schema;  // JSON text; "null" is refused (schemas only widen)
    // Applies the schema only while the current version is exactly this one (409 otherwise).
    std::optional<int64_t> schema_base_version;
    std::optional<int64_t> max_deliveries;  // ours
    std::optional<std::string> dead_letter_topic;
};

// Chooses the owners of `count` new partitions of `topic` (numbered from `first`), from a view of
// the metastore: one node per partition. `topic` is the record as it will be stored (a child
// created with its parent already names it). Fails (e.g. Errc::unavailable: no live node) to
// refuse the request.
using Placement = std::function<Result<std::vector<NodeId>>(
    const MetaState& state, const Topic& topic, uint32_t first, uint32_t count)>;

// Every partition on one node: the single-node placement.
Placement place_on(NodeId node);

class TopicFrontend {
  public:
    TopicFrontend(MetaStore& store, Clock& clock, TopicPolicy policy, Placement placement);

    Result<Topic> create(CreateTopicRequest request);
    // Checks the request's own shape (before authorization and the topic lookup, as Narad).
    static Status validate_update(const UpdateTopicRequest& request);
    Result<Topic> update(std::string_view name, const UpdateTopicRequest& request);
    Status remove(std::string_view name);

    // Fan-out (Narad's rules, checked in Narad's order): attaches `child` under `parent` with a
    // fresh attach epoch, both records written at once; a schema-less child adopts the parent's
    // schema history. Returns the parent's record.
    Result<Topic> attach(std::string_view parent, std::string_view child, int64_t delay_ms);
    // Detaches `child` from `parent`; the child keeps its records and schema.
    Status detach(std::string_view parent, std::string_view child);

    const TopicPolicy& policy() const { return policy_; }

  private:
    Result<Topic> create_child(Topic topic, const CreateTopicRequest& request);
    Result<std::optional<MetaStore::TopicWrite>> plan_update(
        const MetaState& snapshot, const Topic& current, const std::vector<const Topic*>& children,
        const UpdateTopicRequest& request);
    // Rewrites a parent's and a child's records in one write: `change` gets them as stored
    // (nullopt: none) and sets what to store, or fails to write nothing. Returns the parent.
    using Relink =
        std::function<Status(const std::optional<Topic>& parent_read,
                             const std::optional<Topic>& child_read, Topic& parent, Topic& child)>;
    Result<Topic> relink(std::string_view parent, std::string_view child, const Relink& change);

    MetaStore& store_;
    Clock& clock_;
    TopicPolicy policy_;
    Placement placement_;
    Mutex update_mutex_;  // serializes update()
};

// A fresh random incarnation id (16 lower-case hex characters).
IncarnationId new_incarnation_id();

}  // namespace narad::meta
