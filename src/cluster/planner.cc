#include "cluster/planner.h"

#include <algorithm>
#include <string>
#include <utility>

#include "base/assert.h"

namespace narad::cluster {
namespace {

// One node as the planner sees it: a receiver, or a non-receiver owner of movable partitions.
struct Holding {
    int64_t count = 0;                         // movable owned + in-flight targeted here
    int64_t capacity = 0;                      // 0 for a non-receiver
    std::map<std::string, int64_t> per_topic;  // `count`, split by topic
    std::map<std::string, std::vector<meta::PartitionKey>> movable;  // by topic, keys ascending
};

struct Tally {
    std::map<NodeId, Holding> receivers;
    std::map<NodeId, Holding> shedders;  // non-receiver owners: everything they own is surplus
    int64_t total = 0;                   // T: the partitions the receivers' capacities share
    int64_t in_flight = 0;               // every partition with a target, wherever it points
};

Tally count_holdings(const PlannerInput& input) {
    Tally tally;
    for (const NodeId& node : input.receivers) tally.receivers[node];
    for (const auto& [key, assignment] : input.assignments) {
        if (!assignment.target.value().empty()) {
            // In flight: already accounted for at its destination, so re-planning is idempotent.
            ++tally.in_flight;
            auto it = tally.receivers.find(assignment.target);
            if (it == tally.receivers.end()) continue;
            ++it->second.count;
            ++it->second.per_topic[key.topic];
            ++tally.total;
            continue;
        }
        // A dead owner's data lives only on its disk: the partition waits for it to return.
        if (assignment.owner.value().empty() || input.stay_put.count(assignment.owner) > 0)
            continue;
        auto it = tally.receivers.find(assignment.owner);
        Holding& holding =
            it != tally.receivers.end() ? it->second : tally.shedders[assignment.owner];
        ++holding.count;
        ++holding.per_topic[key.topic];
        holding.movable[key.topic].push_back(key);  // map order: keys ascending within a topic
        ++tally.total;
    }
    return tally;
}

// floor(T/R) for everyone, plus one for the (T mod R) receivers counting the most, so the fullest
// nodes keep their partitions.
void assign_capacities(Tally& tally) {
    const auto receivers = static_cast<int64_t>(tally.receivers.size());
    std::vector<std::pair<int64_t, NodeId>> ranked;
    for (const auto& [node, holding] : tally.receivers) ranked.emplace_back(holding.count, node);
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    const int64_t ceil_slots = tally.total % receivers;
    for (int64_t i = 0; i < receivers; ++i) {
        tally.receivers[ranked[i].second].capacity =
            tally.total / receivers + (i < ceil_slots ? 1 : 0);
    }
}

// The partition to take off `source`: from the topic it holds most of, the highest key.
meta::PartitionKey take_one(Holding& source) {
    auto chosen = source.movable.end();
    for (auto it = source.movable.rbegin(); it != source.movable.rend(); ++it) {
        if (it->second.empty()) continue;
        if (chosen == source.movable.end() ||
            source.per_topic[it->first] > source.per_topic[chosen->first]) {
            chosen = std::prev(it.base());
        }
    }
    NARAD_ASSERT(chosen != source.movable.end(), "planner: surplus exceeds movable partitions");
    meta::PartitionKey key = std::move(chosen->second.back());
    chosen->second.pop_back();
    --source.count;
    --source.per_topic[key.topic];
    return key;
}

// The receiver with the largest deficit; then fewest partitions of `topic`; then NodeId.
std::map<NodeId, Holding>::iterator pick_destination(Tally& tally, const std::string& topic) {
    auto best = tally.receivers.end();
    int64_t best_deficit = 0;
    int64_t best_topic_count = 0;
    for (auto it = tally.receivers.begin(); it != tally.receivers.end(); ++it) {
        const int64_t deficit = it->second.capacity - it->second.count;
        if (deficit <= 0) continue;
        auto found = it->second.per_topic.find(topic);
        const int64_t topic_count = found == it->second.per_topic.end() ? 0 : found->second;
        if (best == tally.receivers.end() || deficit > best_deficit ||
            (deficit == best_deficit && topic_count < best_topic_count)) {
            best = it;
            best_deficit = deficit;
            best_topic_count = topic_count;
        }
    }
    return best;
}

int64_t movable_count(const Holding& holding) {
    int64_t n = 0;
    for (const auto& [topic, keys] : holding.movable) n += static_cast<int64_t>(keys.size());
    return n;
}

}  // namespace

std::vector<PlannedMove> plan_moves(const PlannerInput& input) {
    if (input.receivers.empty()) return {};
    Tally tally = count_holdings(input);
    if (tally.in_flight >= input.max_in_flight) return {};
    int64_t budget = input.max_in_flight - tally.in_flight;
    assign_capacities(tally);

    // Sources: draining owners first (by NodeId), then receivers by surplus descending. A
    // receiver's surplus is capped at what it can give: moves already aimed at it cannot leave.
    std::vector<std::pair<NodeId, int64_t>> sources;
    for (const auto& [node, holding] : tally.shedders) sources.emplace_back(node, holding.count);
    const size_t first_receiver = sources.size();
    for (const auto& [node, holding] : tally.receivers) {
        const int64_t surplus = std::min(holding.count - holding.capacity, movable_count(holding));
        if (surplus > 0) sources.emplace_back(node, surplus);
    }
    std::stable_sort(sources.begin() + static_cast<std::ptrdiff_t>(first_receiver), sources.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });

    std::vector<PlannedMove> plan;
    for (const auto& [node, surplus] : sources) {
        auto shed = tally.shedders.find(node);
        Holding& source = shed != tally.shedders.end() ? shed->second : tally.receivers[node];
        for (int64_t i = 0; i < surplus && budget > 0; ++i, --budget) {
            meta::PartitionKey key = take_one(source);
            auto destination = pick_destination(tally, key.topic);
            NARAD_ASSERT(destination != tally.receivers.end(), "planner: surplus without deficit");
            NARAD_ASSERT(destination->first != node, "planner: move onto its own owner");
            ++destination->second.count;
            ++destination->second.per_topic[key.topic];
            plan.push_back(PlannedMove{std::move(key), node, destination->first});
        }
    }
    return plan;
}

}  // namespace narad::cluster
