#include "meta/meta_store.h"

namespace narad::meta {

std::string_view flip_outcome_name(FlipOutcome outcome) {
    switch (outcome) {
        case FlipOutcome::flipped:
            return "flipped";
        case FlipOutcome::already_flipped:
            return "already_flipped";
        case FlipOutcome::freeze_lapsed:
            return "freeze_lapsed";
        case FlipOutcome::source_alive:
            return "source_alive";
        case FlipOutcome::refused:
            break;
    }
    return "refused";
}

namespace {
Status no_moves() {
    return Status(Errc::not_implemented, "this metastore does not support partition moves");
}
}  // namespace

Result<std::optional<User>> MetaStore::change_user(std::string_view, const UserChange&) {
    return Status(Errc::not_implemented, "this metastore does not keep users");
}

Result<size_t> MetaStore::set_targets(const std::vector<TargetChange>&) { return no_moves(); }
Result<FlipOutcome> MetaStore::complete_move(const PartitionKey&, const NodeId&, const NodeId&,
                                             const FreezeToken&) {
    return no_moves();
}
Result<FlipOutcome> MetaStore::force_promote(const PartitionKey&, const NodeId&, const NodeId&) {
    return no_moves();
}
Result<std::optional<Topic>> MetaStore::read_topic(std::string_view name) {
    MetaSnapshot view = snapshot();
    const Topic* found = view->find_topic(name);
    return found == nullptr ? std::optional<Topic>() : std::optional<Topic>(*found);
}
Result<std::optional<Assignment>> MetaStore::read_assignment(const PartitionKey& partition) {
    MetaSnapshot view = snapshot();
    const Assignment* found = view->find_assignment(partition.topic, partition.partition);
    return found == nullptr ? std::optional<Assignment>() : std::optional<Assignment>(*found);
}
Result<int64_t> MetaStore::hold_freeze(const PartitionKey&, const FreezeToken&, Millis) {
    return no_moves();
}
Status MetaStore::renew_freeze(int64_t) { return no_moves(); }
Status MetaStore::release_freeze(int64_t) { return no_moves(); }
Status MetaStore::remove_freeze(const PartitionKey&) { return no_moves(); }

Result<uint32_t> MetaStore::first_new_partition(const TopicRecords& read, const TopicWrite& write) {
    auto it = read.find(write.topic.name);
    if (it == read.end()) {
        return Status(Errc::invalid_argument, "a topic write outside the records read");
    }
    uint32_t first = it->second ? it->second->partitions : 0;
    if (write.topic.partitions < first || write.owners.size() != write.topic.partitions - first) {
        return Status(Errc::invalid_argument, "partitions only grow, one owner per new partition");
    }
    return first;
}

Result<std::vector<Topic>> MetaStore::apply_topic_change(const MetaState& current, MetaState& next,
                                                         const std::vector<std::string>& names,
                                                         const TopicsChange& change) {
    TopicRecords read;
    for (const std::string& name : names) {
        const Topic* found = current.find_topic(name);
        read[name] = found == nullptr ? std::optional<Topic>() : std::optional<Topic>(*found);
    }
    NARAD_ASSIGN_OR_RETURN(std::vector<TopicWrite> writes, change(read));
    std::vector<Topic> stored;
    for (TopicWrite& write : writes) {
        NARAD_ASSIGN_OR_RETURN(uint32_t first, first_new_partition(read, write));
        for (uint32_t p = first; p < write.topic.partitions; ++p) {
            next.assignments[PartitionKey{write.topic.name, PartitionId(p)}] =
                Assignment{write.owners[p - first], {}};
        }
        if (write.topic.partitions != first) ++next.assignments_version;
        next.topics[write.topic.name] = write.topic;
        stored.push_back(std::move(write.topic));
    }
    if (!stored.empty()) ++next.topics_version;
    return stored;
}

void MetaStore::apply_topic_delete(MetaState& next, std::string_view name) {
    auto it = next.topics.find(name);
    if (it == next.topics.end()) return;
    Topic deleted = std::move(it->second);
    next.topics.erase(it);
    for (const std::string& linked : linked_topics(deleted)) {
        auto other = next.topics.find(linked);
        if (other != next.topics.end()) unlink_deleted(deleted, other->second);
    }
    std::erase_if(next.assignments, [&](const auto& entry) { return entry.first.topic == name; });
    ++next.topics_version;
    ++next.assignments_version;
}

Result<Topic> MetaStore::create_topic_on(Topic topic, const NodeId& owner) {
    std::vector<NodeId> owners(topic.partitions, owner);
    return create_topic(std::move(topic), std::move(owners));
}

Result<Topic> MetaStore::update_topic_on(Topic topic, const NodeId& owner) {
    MetaSnapshot view = snapshot();
    const Topic* existing = view->find_topic(topic.name);
    uint32_t added = existing != nullptr && topic.partitions > existing->partitions
                         ? topic.partitions - existing->partitions
                         : 0;
    return update_topic(std::move(topic), std::vector<NodeId>(added, owner));
}

}  // namespace narad::meta
