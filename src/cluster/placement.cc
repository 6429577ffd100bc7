#include "cluster/placement.h"

#include <map>
#include <tuple>
#include <utility>

namespace narad::cluster {
namespace {

// The parent whose partitions the placed ones should avoid: the one named by the caller, else the
// recorded parent of an existing child; empty for none.
std::string parent_of(const meta::MetaState& state, const std::string& topic,
                      const std::string& parent) {
    if (!parent.empty()) return parent == topic ? std::string() : parent;
    const meta::Topic* record = state.find_topic(topic);
    if (record == nullptr || record->role != meta::TopicRole::child) return {};
    return record->parent == topic ? std::string() : record->parent;
}

// Reorders `owners` (partition first + i on owners[i]) so that as few partitions as possible sit
// on the node in `avoid[i]`, without changing how many partitions any node gets: only swaps. A
// swap is made only when it puts i off its avoided node and the other partition j on a node it
// need not avoid, so every swap removes at least one colocation and none is added; the loop ends
// within `owners.size()` swaps. When no such swap exists for a colocated i, every partition off
// i's node must avoid that node, and then no arrangement with these counts has fewer colocations.
void avoid_parent_owners(std::vector<NodeId>& owners, const std::vector<NodeId>& avoid) {
    auto colocated = [&](size_t i) { return !avoid[i].value().empty() && owners[i] == avoid[i]; };
    for (bool swapped = true; swapped;) {
        swapped = false;
        for (size_t i = 0; i < owners.size(); ++i) {
            if (!colocated(i)) continue;
            for (size_t j = 0; j < owners.size(); ++j) {
                if (owners[j] == owners[i] || owners[i] == avoid[j]) continue;
                std::swap(owners[i], owners[j]);
                swapped = true;
                break;
            }
        }
    }
}

}  // namespace

Result<std::vector<NodeId>> spread_partitions(const meta::MetaState& state,
                                              const std::string& topic, uint32_t first,
                                              uint32_t count, const std::string& parent) {
    struct Load {
        uint32_t of_topic = 0;
        uint32_t total = 0;
    };
    std::map<NodeId, Load> loads;
    for (const auto& [node, member] : state.members) {
        if (state.is_live(node) && !member.draining) loads[node];
    }
    if (loads.empty()) {
        return Status(Errc::unavailable, "no live cluster member can take partitions");
    }
    for (const auto& [key, assignment] : state.assignments) {
        auto it = loads.find(assignment.owner);
        if (it == loads.end()) continue;
        // Partitions at or beyond `first` are the ones being placed (a grow), not existing load.
        if (key.topic == topic && key.partition.value() >= first) continue;
        ++it->second.total;
        if (key.topic == topic) ++it->second.of_topic;
    }
    // Balance first: how many partitions each node takes is decided here alone.
    std::vector<NodeId> owners;
    owners.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
        auto best = loads.begin();
        for (auto it = loads.begin(); it != loads.end(); ++it) {
            if (std::tie(it->second.of_topic, it->second.total) <
                std::tie(best->second.of_topic, best->second.total)) {
                best = it;
            }
        }
        ++best->second.of_topic;
        ++best->second.total;
        owners.push_back(best->first);
    }
    // Then the replica pattern: which of those partitions each node gets.
    const std::string source = parent_of(state, topic, parent);
    if (source.empty()) return owners;
    std::vector<NodeId> avoid(count);
    for (uint32_t i = 0; i < count; ++i) {
        const meta::Assignment* held = state.find_assignment(source, PartitionId(first + i));
        if (held != nullptr) avoid[i] = held->owner;
    }
    avoid_parent_owners(owners, avoid);
    return owners;
}

Result<std::vector<NodeId>> spread_partitions(const meta::MetaState& state,
                                              const meta::Topic& topic, uint32_t first,
                                              uint32_t count) {
    return spread_partitions(state, topic.name, first, count, topic.parent);
}

int64_t count_colocated_child_partitions(const meta::MetaState& state) {
    int64_t colocated = 0;
    for (const auto& [key, assignment] : state.assignments) {
        if (assignment.owner.value().empty()) continue;
        const meta::Topic* child = state.find_topic(key.topic);
        if (child == nullptr || child->role != meta::TopicRole::child || child->parent.empty()) {
            continue;
        }
        const meta::Assignment* parent = state.find_assignment(child->parent, key.partition);
        if (parent != nullptr && parent->owner == assignment.owner) ++colocated;
    }
    return colocated;
}

}  // namespace narad::cluster
