#include "meta/topic_frontend.h"

#include "base/mutex.h"
#include "base/names.h"
#include "base/random.h"
#include "meta/schema.h"

namespace narad::meta {
namespace {

Status invalid(std::string message) {
    return Status(Errc::invalid_argument, "invalid argument: " + std::move(message));
}

// Narad's name checks, with its texts; `what` is "topic" or "parent".
Status check_name(std::string_view name) {
    if (name.empty()) return invalid("name required");
    if (name == "." || name == "..") {
        return invalid("topic name must not be \"" + std::string(name) + "\"");
    }
    if (!validate_topic_name(name).is_ok()) {
        return invalid("topic name must match ^[A-Za-z0-9._-]{1,200}$");
    }
    return Status::ok();
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

bool schema_present(const std::optional<std::string>& schema) {
    return schema.has_value() && !schema->empty() && *schema != "null";
}

// The schema budgets: a history of at most 1000 versions and 4 MiB, every history in the cluster
// at most 256 MiB together (Narad 3.1), checked before a version is added.
Status check_schema_budget(const MetaState& state, const Topic& topic, size_t added_bytes) {
    if (topic.schema_version() >= kMaxSchemaVersions) {
        return Status(Errc::conflict, "schema history of \"" + topic.name + "\" holds " +
                                          std::to_string(kMaxSchemaVersions) +
                                          " versions, the most a topic may keep");
    }
    size_t topic_bytes = topic.schema_history_bytes();
    if (topic_bytes + added_bytes > kMaxSchemaHistoryBytes) {
        return Status(Errc::conflict, "schema history budget exceeded: \"" + topic.name +
                                          "\" stores " + std::to_string(topic_bytes) +
                                          " bytes of schema versions and may keep at most " +
                                          std::to_string(kMaxSchemaHistoryBytes));
    }
    size_t cluster_bytes = 0;
    for (const auto& [name, other] : state.topics) {
        if (name != topic.name) cluster_bytes += other.schema_history_bytes();
    }
    if (cluster_bytes + topic_bytes + added_bytes > kMaxClusterSchemaBytes) {
        return Status(Errc::conflict, "cluster schema budget exceeded: the cluster stores " +
                                          std::to_string(cluster_bytes + topic_bytes) +
                                          " bytes of schema versions and may keep at most " +
                                          std::to_string(kMaxClusterSchemaBytes));
    }
    return Status::ok();
}

Status check_retention_floor(int64_t retention_ms) {
    if (retention_ms != 0 && retention_ms < kMinRetentionMs) {
        return invalid("retention_ms (" + std::to_string(retention_ms) +
                       ") is below the minimum of 3600000 (1 hour)");
    }
    return Status::ok();
}

Status check_delay(int64_t delay_ms, const char* field) {
    if (delay_ms < 0) return invalid(std::string(field) + " must be >= 0");
    if (delay_ms > kMaxFanoutDelayMs) {
        return invalid(std::string(field) + " (" + std::to_string(delay_ms) +
                       ") exceeds the maximum of 31536000000 (1 year)");
    }
    return Status::ok();
}

// A delay child's parent must keep records for the delay and an hour more (Narad's floor), so no
// record ages out of the parent before its delayed copy is due. Keeping forever buffers any delay.
Status check_delay_buffered(int64_t delay_ms, int64_t parent_retention_ms,
                            const std::string& parent) {
    if (delay_ms <= 0 || parent_retention_ms == 0) return Status::ok();
    if (parent_retention_ms < delay_ms + kMinRetentionMs) {
        return Status(Errc::invalid_argument,
                      "delay exceeds what the parent's retention can buffer: parent \"" + parent +
                          "\" retention (" + std::to_string(parent_retention_ms) +
                          "ms) must be at least delay (" + std::to_string(delay_ms) + "ms) + " +
                          std::to_string(kMinRetentionMs) + "ms");
    }
    return Status::ok();
}

// The dead-letter settings of `topic` as it would be stored, against `state`.
Status check_dead_letter(const MetaState& state, const Topic& topic) {
    if (topic.max_deliveries < 0) return invalid("max_deliveries must be >= 0 (0 = off)");
    if (topic.max_deliveries > kMaxDeliveriesLimit) {
        return invalid("max_deliveries (" + std::to_string(topic.max_deliveries) +
                       ") exceeds the maximum of " + std::to_string(kMaxDeliveriesLimit));
    }
    if (topic.max_deliveries > 0 && topic.dead_letter_topic.empty()) {
        return invalid("max_deliveries requires dead_letter_topic");
    }
    if (topic.max_deliveries == 0 && !topic.dead_letter_topic.empty()) {
        return invalid("dead_letter_topic requires max_deliveries");
    }
    if (topic.dead_letter_topic.empty()) return Status::ok();
    if (topic.dead_letter_topic == topic.name) {
        return invalid("a topic cannot be its own dead_letter_topic");
    }
    NARAD_RETURN_IF_ERROR(check_name(topic.dead_letter_topic));
    const Topic* target = state.find_topic(topic.dead_letter_topic);
    if (target == nullptr) {
        return invalid("dead_letter_topic \"" + topic.dead_letter_topic + "\" does not exist");
    }
    if (target->role == TopicRole::child) {
        return invalid("dead_letter_topic \"" + topic.dead_letter_topic +
                       "\" is a fan-out child: its records come only from its parent");
    }
    return Status::ok();
}

Status role_conflict(const std::string& detail) {
    return Status(Errc::conflict, "fan-out role conflict: " + detail);
}

// Narad's link rules between two existing records, then its schema gate; on success the child's
// schema history is the parent's.
Status check_link(const Topic& parent, Topic& child, int64_t delay_ms) {
    if (parent.role == TopicRole::child) {
        return role_conflict("\"" + parent.name + "\" is a child of \"" + parent.parent +
                             "\" and cannot become a parent");
    }
    if (child.role == TopicRole::parent) {
        return role_conflict("\"" + child.name +
                             "\" is a parent and cannot become a child (fan-out is depth 1)");
    }
    if (child.role == TopicRole::child && child.parent == parent.name) {
        return Status(Errc::conflict, "already exists: \"" + child.name +
                                          "\" is already attached to \"" + parent.name + "\"");
    }
    if (child.role == TopicRole::child) {
        return role_conflict("\"" + child.name + "\" is already attached to parent \"" +
                             child.parent + "\"");
    }
    if (parent.children.size() >= kMaxChildrenPerParent) {
        return Status(Errc::conflict, "parent has reached the maximum number of children: \"" +
                                          parent.name + "\" already has " +
                                          std::to_string(parent.children.size()) + " children");
    }
    NARAD_RETURN_IF_ERROR(check_delay_buffered(delay_ms, parent.retention_ms, parent.name));
    if (child.schema_versions.empty()) {
        child.schema_versions = parent.schema_versions;
    } else if (parent.schema_versions.empty()) {
        return Status(Errc::conflict, "child schema incompatible with parent: child \"" +
                                          child.name + "\" has a schema but parent \"" +
                                          parent.name + "\" does not");
    } else if (child.schema_versions != parent.schema_versions) {
        return Status(Errc::conflict, "child schema incompatible with parent: schema of \"" +
                                          child.name + "\" differs from parent \"" + parent.name +
                                          "\"; align or clear it, then re-attach");
    }
    return Status::ok();
}

}  // namespace

IncarnationId new_incarnation_id() { return IncarnationId(random_hex(8)); }

Placement place_on(NodeId node) {
    return [node = std::move(node)](const MetaState&, const Topic&, uint32_t,
                                    uint32_t count) -> Result<std::vector<NodeId>> {
        return std::vector<NodeId>(count, node);
    };
}

TopicFrontend::TopicFrontend(MetaStore& store, Clock& clock, TopicPolicy policy,
                             Placement placement)
    : store_(store), clock_(clock), policy_(policy), placement_(std::move(placement)) {}

Result<Topic> TopicFrontend::create(CreateTopicRequest request) {
    NARAD_RETURN_IF_ERROR(check_name(request.name));
    if (request.parent.empty() && request.fanout_delay_ms != 0) {
        return invalid("fanout_delay_ms requires parent");
    }
    if (!request.parent.empty()) {
        NARAD_RETURN_IF_ERROR(check_name(request.parent));
        if (request.parent == request.name) return invalid("a topic cannot be its own parent");
        NARAD_RETURN_IF_ERROR(check_delay(request.fanout_delay_ms, "fanout_delay_ms"));
        meta::MetaSnapshot parent_view = store_.snapshot();
        const Topic* parent = parent_view->find_topic(request.parent);
        if (parent == nullptr) return Status(Errc::not_found, "topic not found");
        if (request.partitions == 0) request.partitions = parent->partitions;
    }

    Topic topic;
    topic.name = request.name;
    int64_t partitions = request.partitions == 0 ? policy_.default_partitions : request.partitions;
    if (partitions < 3) return invalid("partitions must be >= 3 (0 = use default)");
    if (partitions > policy_.max_partitions) {
        return invalid("partitions (" + std::to_string(partitions) +
                       ") exceeds topic.max_partitions (" + std::to_string(policy_.max_partitions) +
                       ")");
    }
    topic.partitions = static_cast<uint32_t>(partitions);
    if (request.retention_ms && *request.retention_ms < 0) {
        return invalid("retention_ms must be >= 0 (0 = keep forever)");
    }
    topic.retention_ms = request.retention_ms.value_or(policy_.default_retention_ms);
    NARAD_RETURN_IF_ERROR(check_retention_floor(topic.retention_ms));
    auto defaulted = [](int64_t value, int64_t fallback, const char* field) -> Result<int64_t> {
        if (value < 0) return invalid(std::string(field) + " must be >= 0 (0 = use default)");
        return value == 0 ? fallback : value;
    };
    NARAD_ASSIGN_OR_RETURN(
        topic.visibility_timeout_ms,
        defaulted(request.visibility_timeout_ms, policy_.default_visibility_timeout_ms,
                  "visibility_timeout_ms"));
    NARAD_ASSIGN_OR_RETURN(topic.max_in_flight_per_partition,
                           defaulted(request.max_in_flight_per_partition,
                                     policy_.default_max_in_flight, "max_in_flight_per_partition"));
    NARAD_ASSIGN_OR_RETURN(
        topic.max_acked_ahead_per_partition,
        defaulted(request.max_acked_ahead_per_partition, policy_.default_max_acked_ahead,
                  "max_acked_ahead_per_partition"));
    meta::MetaSnapshot existing = store_.snapshot();
    topic.max_deliveries = request.max_deliveries;
    topic.dead_letter_topic = request.dead_letter_topic;
    NARAD_RETURN_IF_ERROR(check_dead_letter(*existing, topic));
    if (schema_present(request.schema)) {
        auto compact = register_schema(*request.schema);
        if (!compact.is_ok()) return invalid(compact.status().message());
        NARAD_RETURN_IF_ERROR(check_schema_budget(*existing, topic, compact->size()));
        topic.add_schema_version(std::move(*compact));
    }
    if (existing->find_topic(topic.name) != nullptr) {
        return Status(Errc::already_exists, "topic already exists");
    }
    // Names are case-sensitive, but two that differ only in case are refused (Narad 3.2): they
    // would be confused by people and collide on case-insensitive file systems.
    for (const auto& [name, other] : existing->topics) {
        if (equals_ignoring_case(name, topic.name)) {
            return Status(Errc::conflict, "topic name \"" + topic.name +
                                              "\" differs only in letter case from the existing "
                                              "topic \"" +
                                              name + "\"");
        }
    }
    topic.owner = request.owner;
    topic.created_at = clock_.wall_ms() / 1000;
    topic.incarnation = new_incarnation_id();
    if (!request.parent.empty()) return create_child(std::move(topic), request);
    NARAD_ASSIGN_OR_RETURN(std::vector<NodeId> owners,
                           placement_(*store_.snapshot(), topic, 0, topic.partitions));
    auto created = store_.create_topic(topic, std::move(owners));
    if (!created.is_ok() && created.code() == Errc::already_exists) {
        return Status(Errc::already_exists, "topic already exists");
    }
    return created;
}

// Creates the child and links it under its parent in one write: a create that cannot attach
// leaves nothing behind. Its partitions are placed knowing the parent (the replica pattern).
Result<Topic> TopicFrontend::create_child(Topic topic, const CreateTopicRequest& request) {
    std::string epoch = new_incarnation_id().value();
    auto stored = store_.change_topics(
        {request.parent, topic.name},
        [&](const MetaStore::TopicRecords& read) -> Result<std::vector<MetaStore::TopicWrite>> {
            const std::optional<Topic>& parent_read = read.find(request.parent)->second;
            if (!parent_read) return Status(Errc::not_found, "topic not found");
            if (read.find(topic.name)->second) {
                return Status(Errc::already_exists, "topic already exists");
            }
            Topic parent = *parent_read;
            Topic child = topic;
            NARAD_RETURN_IF_ERROR(check_link(parent, child, request.fanout_delay_ms));
            link_child(parent, child, epoch, request.fanout_delay_ms);
            NARAD_ASSIGN_OR_RETURN(std::vector<NodeId> owners,
                                   placement_(*store_.snapshot(), child, 0, child.partitions));
            return std::vector<MetaStore::TopicWrite>{{std::move(child), std::move(owners)},
                                                      {std::move(parent), {}}};
        });
    if (!stored.is_ok()) return stored.status();
    return stored->front();
}

Result<Topic> TopicFrontend::attach(std::string_view parent_name, std::string_view child_name,
                                    int64_t delay_ms) {
    NARAD_RETURN_IF_ERROR(check_name(parent_name));
    NARAD_RETURN_IF_ERROR(check_name(child_name));
    if (parent_name == child_name) return invalid("a topic cannot be attached to itself");
    NARAD_RETURN_IF_ERROR(check_delay(delay_ms, "delay_ms"));
    std::string epoch = new_incarnation_id().value();
    return relink(parent_name, child_name,
                  [&](const std::optional<Topic>& parent_read,
                      const std::optional<Topic>& child_read, Topic& parent, Topic& child) {
                      if (!parent_read || !child_read) {
                          return Status(Errc::not_found, "topic not found");
                      }
                      parent = *parent_read;
                      child = *child_read;
                      NARAD_RETURN_IF_ERROR(check_link(parent, child, delay_ms));
                      link_child(parent, child, epoch, delay_ms);
                      return Status::ok();
                  });
}

Status TopicFrontend::detach(std::string_view parent_name, std::string_view child_name) {
    NARAD_RETURN_IF_ERROR(check_name(parent_name));
    NARAD_RETURN_IF_ERROR(check_name(child_name));
    return relink(parent_name, child_name,
                  [&](const std::optional<Topic>& parent_read,
                      const std::optional<Topic>& child_read, Topic& parent, Topic& child) {
                      if (!parent_read) return Status(Errc::not_found, "topic not found");
                      if (!child_read || child_read->role != TopicRole::child ||
                          child_read->parent != parent_name) {
                          return Status(Errc::not_found, "not found: \"" + std::string(child_name) +
                                                             "\" is not attached to \"" +
                                                             std::string(parent_name) + "\"");
                      }
                      parent = *parent_read;
                      child = *child_read;
                      unlink_child(parent, child);
                      return Status::ok();
                  })
        .status();
}

Result<Topic> TopicFrontend::relink(std::string_view parent_name, std::string_view child_name,
                                    const Relink& change) {
    std::string parent_key(parent_name);
    std::string child_key(child_name);
    auto stored = store_.change_topics(
        {parent_key, child_key},
        [&](const MetaStore::TopicRecords& read) -> Result<std::vector<MetaStore::TopicWrite>> {
            Topic parent;
            Topic child;
            NARAD_RETURN_IF_ERROR(
                change(read.find(parent_key)->second, read.find(child_key)->second, parent, child));
            return std::vector<MetaStore::TopicWrite>{{std::move(parent), {}},
                                                      {std::move(child), {}}};
        });
    if (!stored.is_ok()) return stored.status();
    return stored->front();
}

Status TopicFrontend::validate_update(const UpdateTopicRequest& request) {
    auto bad = [](const char* message) { return Status(Errc::invalid_argument, message); };
    if (request.partitions < 0) return bad("partitions must be > 0");
    if (request.partitions == 0 && !request.retention_ms && !request.max_in_flight_per_partition &&
        !request.max_acked_ahead_per_partition && !request.schema && !request.schema_base_version &&
        !request.max_deliveries && !request.dead_letter_topic) {
        return bad(
            "at least one of partitions, retention_ms, max_*_per_partition, or schema is required");
    }
    if (request.retention_ms && *request.retention_ms < 0) {
        return bad("retention_ms must be >= 0 (0 = keep forever)");
    }
    if (request.max_in_flight_per_partition && *request.max_in_flight_per_partition < 0) {
        return bad("max_in_flight_per_partition must be >= 0 (0 = use default)");
    }
    if (request.max_acked_ahead_per_partition && *request.max_acked_ahead_per_partition < 0) {
        return bad("max_acked_ahead_per_partition must be >= 0 (0 = use default)");
    }
    if (request.schema_base_version && !request.schema) {
        return bad("schema_base_version requires schema");
    }
    if (request.schema && !schema_present(request.schema)) {
        return bad("schema cannot be removed: a topic's schema may only be widened");
    }
    if (request.schema && !compact_schema(*request.schema).is_ok()) {
        return bad("schema is not valid JSON");
    }
    return Status::ok();
}

Result<Topic> TopicFrontend::update(std::string_view name, const UpdateTopicRequest& request) {
    NARAD_RETURN_IF_ERROR(validate_update(request));
    // One update at a time on this node; against every other write (attach, detach, a delete
    // unlinking it) the PATCH is applied to the record as read inside the compare-and-swap, with
    // the children it names, so it never writes back a stale link or schema.
    MutexLock lock(update_mutex_);
    std::string key(name);
    for (int attempt = 0; attempt < 8; ++attempt) {
        MetaSnapshot snapshot = store_.snapshot();
        const Topic* seen = snapshot->find_topic(name);
        if (seen == nullptr) return Status(Errc::not_found, "topic not found");
        std::vector<std::string> names{key};
        names.insert(names.end(), seen->children.begin(), seen->children.end());
        bool children_moved = false;
        std::optional<Topic> unchanged;
        auto stored = store_.change_topics(
            names,
            [&](const MetaStore::TopicRecords& read) -> Result<std::vector<MetaStore::TopicWrite>> {
                const std::optional<Topic>& current = read.find(key)->second;
                if (!current) return Status(Errc::not_found, "topic not found");
                std::vector<const Topic*> children;
                for (const std::string& child : current->children) {
                    auto it = read.find(child);
                    if (it == read.end()) {
                        children_moved = true;  // a child attached since: read it too
                        return Status(Errc::conflict, "children changed");
                    }
                    if (it->second && it->second->parent == key) children.push_back(&*it->second);
                }
                NARAD_ASSIGN_OR_RETURN(std::optional<MetaStore::TopicWrite> write,
                                       plan_update(*snapshot, *current, children, request));
                if (!write) {
                    unchanged = *current;
                    return std::vector<MetaStore::TopicWrite>{};
                }
                std::vector<MetaStore::TopicWrite> writes;
                // A parent's schema is its children's: a new version goes to each of them in the
                // same write.
                if (write->topic.schema_versions != current->schema_versions) {
                    for (const Topic* child : children) {
                        Topic adopted = *child;
                        adopted.schema_versions = write->topic.schema_versions;
                        writes.push_back({std::move(adopted), {}});
                    }
                }
                writes.insert(writes.begin(), std::move(*write));
                return writes;
            });
        if (children_moved) continue;
        if (!stored.is_ok()) {
            if (stored.code() == Errc::not_found) return Status(Errc::not_found, "topic not found");
            return stored.status();
        }
        if (unchanged) return *unchanged;
        return stored->front();
    }
    return Status(Errc::conflict, "topic '" + key + "' changed while it was being updated; retry");
}

// The PATCH applied to `current` (its attached `children` read with it): the record to write with
// the owners of its added partitions, nullopt when nothing changes, or why it is refused. Every
// group is validated before anything is written, so a failed PATCH changes nothing.
Result<std::optional<MetaStore::TopicWrite>> TopicFrontend::plan_update(
    const MetaState& snapshot, const Topic& current, const std::vector<const Topic*>& children,
    const UpdateTopicRequest& request) {
    Topic topic = current;
    if (request.retention_ms) {
        topic.retention_ms = *request.retention_ms;  // 0 keeps messages forever
        NARAD_RETURN_IF_ERROR(check_retention_floor(topic.retention_ms));
        for (const Topic* child : children) {
            NARAD_RETURN_IF_ERROR(
                check_delay_buffered(child->fanout_delay_ms, topic.retention_ms, topic.name));
        }
    }
    if (request.max_in_flight_per_partition) {
        int64_t v = *request.max_in_flight_per_partition;
        topic.max_in_flight_per_partition = v == 0 ? policy_.default_max_in_flight : v;
    }
    if (request.max_acked_ahead_per_partition) {
        int64_t v = *request.max_acked_ahead_per_partition;
        topic.max_acked_ahead_per_partition = v == 0 ? policy_.default_max_acked_ahead : v;
    }
    if (request.max_deliveries || request.dead_letter_topic) {
        if (request.max_deliveries) topic.max_deliveries = *request.max_deliveries;
        if (request.dead_letter_topic) {
            topic.dead_letter_topic = *request.dead_letter_topic;
        } else if (topic.max_deliveries == 0) {
            topic.dead_letter_topic.clear();  // max_deliveries 0 alone turns dead letters off
        }
        NARAD_RETURN_IF_ERROR(check_dead_letter(snapshot, topic));
    }
    if (request.partitions != 0) {
        if (request.partitions > policy_.max_partitions) {
            return invalid("partitions (" + std::to_string(request.partitions) +
                           ") exceeds topic.max_partitions (" +
                           std::to_string(policy_.max_partitions) + ")");
        }
        if (request.partitions <= static_cast<int64_t>(topic.partitions)) {
            return invalid("new partition count (" + std::to_string(request.partitions) +
                           ") must be greater than current (" + std::to_string(topic.partitions) +
                           "); decrease is not supported");
        }
        topic.partitions = static_cast<uint32_t>(request.partitions);
    }
    if (request.schema) {
        if (topic.role == TopicRole::child) {
            return Status(Errc::conflict,
                          "schema is parent-managed while attached to a fan-out parent: schema "
                          "of \"" +
                              topic.name + "\" is managed by parent \"" + topic.parent +
                              "\"; detach to manage it independently");
        }
        if (request.schema_base_version &&
            *request.schema_base_version != static_cast<int64_t>(topic.schema_version())) {
            return Status(Errc::conflict, "schema version conflict: schema_base_version " +
                                              std::to_string(*request.schema_base_version) +
                                              " does not match the current version " +
                                              std::to_string(topic.schema_version()) + " of \"" +
                                              topic.name + "\"");
        }
        auto compact = register_schema(*request.schema);
        if (!compact.is_ok()) return invalid(compact.status().message());
        // The same schema, or one differing only in annotations, registers nothing: a retry
        // after a lost answer does not grow the history.
        bool unchanged = !topic.schema().empty() && schema_unchanged(topic.schema(), *compact);
        if (!unchanged) {
            if (!topic.schema().empty()) {
                NARAD_RETURN_IF_ERROR(check_schema_compatible(topic.schema(), *compact));
            }
            NARAD_RETURN_IF_ERROR(check_schema_budget(snapshot, topic, compact->size()));
            topic.add_schema_version(std::move(*compact));
        } else if (request.partitions == 0 && !request.retention_ms &&
                   !request.max_in_flight_per_partition && !request.max_acked_ahead_per_partition &&
                   !request.max_deliveries && !request.dead_letter_topic) {
            return std::optional<MetaStore::TopicWrite>();  // nothing to write
        }
    }
    std::vector<NodeId> added_owners;
    if (topic.partitions > current.partitions) {
        NARAD_ASSIGN_OR_RETURN(added_owners, placement_(snapshot, topic, current.partitions,
                                                        topic.partitions - current.partitions));
    }
    return std::optional<MetaStore::TopicWrite>(
        MetaStore::TopicWrite{std::move(topic), std::move(added_owners)});
}

Status TopicFrontend::remove(std::string_view name) {
    Status status = store_.delete_topic(name);
    if (status.code() == Errc::not_found) return Status(Errc::not_found, "topic not found");
    return status;
}

}  // namespace narad::meta
