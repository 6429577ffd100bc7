#include "cluster/placement.h"

#include <map>
#include <tuple>

namespace narad::cluster {

Result<std::vector<NodeId>> spread_partitions(const meta::MetaState& state,
                                              const std::string& topic, uint32_t first,
                                              uint32_t count) {
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
    return owners;
}

}  // namespace narad::cluster
