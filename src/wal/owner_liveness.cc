#include "wal/owner_liveness.h"

namespace narad::wal {

std::optional<NodeId> OwnerLiveness::dead_owner(const meta::MetaState& state,
                                                std::string_view topic,
                                                PartitionId partition) const {
    const meta::Assignment* assignment = state.find_assignment(topic, partition);
    if (assignment == nullptr) return std::nullopt;
    if (!state.is_dead(assignment->owner, clock_.now(), dead_after_)) return std::nullopt;
    return assignment->owner;
}

std::optional<PartitionId> OwnerLiveness::live_sibling(const meta::MetaState& state,
                                                       const meta::Topic& topic,
                                                       PartitionId from) const {
    for (uint32_t step = 1; step < topic.partitions; ++step) {
        PartitionId candidate((from.value() + step) % topic.partitions);
        if (!dead_owner(state, topic.name, candidate)) return candidate;
    }
    return std::nullopt;
}

std::optional<PartitionId> DeadOwnerReroute::sibling_of(const std::string& topic,
                                                        const std::string& incarnation,
                                                        PartitionId partition, Reroute when) {
    meta::MetaSnapshot snapshot = store_.snapshot();
    const meta::Topic* record = snapshot->find_topic(topic);
    if (record == nullptr || record->incarnation.value() != incarnation ||
        partition.value() >= record->partitions) {
        return std::nullopt;
    }
    if (when == Reroute::if_owner_dead && !liveness_.dead_owner(*snapshot, topic, partition)) {
        return std::nullopt;
    }
    return liveness_.live_sibling(*snapshot, *record, partition);
}

std::optional<PartitionId> DeadOwnerReroute::reroute(const std::string& topic,
                                                     const std::string& incarnation,
                                                     PartitionId partition) {
    return sibling_of(topic, incarnation, partition, Reroute::if_owner_dead);
}

std::optional<PartitionId> DeadOwnerReroute::sibling(const std::string& topic,
                                                     const std::string& incarnation,
                                                     PartitionId partition) {
    return sibling_of(topic, incarnation, partition, Reroute::always);
}

}  // namespace narad::wal
