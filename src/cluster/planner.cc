#include "cluster/planner.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
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

// The topic a move takes from `source`: the one it holds most of (ties by name descending).
std::map<std::string, std::vector<meta::PartitionKey>>::iterator fullest_topic(Holding& source) {
    auto chosen = source.movable.end();
    for (auto it = source.movable.rbegin(); it != source.movable.rend(); ++it) {
        if (it->second.empty()) continue;
        if (chosen == source.movable.end() ||
            source.per_topic[it->first] > source.per_topic[chosen->first]) {
            chosen = std::prev(it.base());
        }
    }
    NARAD_ASSERT(chosen != source.movable.end(), "planner: surplus exceeds movable partitions");
    return chosen;
}

// The replica pattern's links: for each parent, its children (from PlannerInput::parents).
class Links {
  public:
    explicit Links(const PlannerInput& input) : input_(input) {
        for (const auto& [child, parent] : input.parents) {
            if (!parent.empty() && parent != child) children_[parent].push_back(child);
        }
    }

    bool linked(const std::string& topic) const {
        return input_.parents.count(topic) > 0 || children_.count(topic) > 0;
    }

    // A move planned in this pass: the partition is held at its destination from now on.
    void note_move(const meta::PartitionKey& key, const NodeId& to) { planned_[key] = to; }

    // How many partitions linked to `key` each node holds: for a child's partition p its parent's
    // partition p, for a parent's partition p each child's partition p.
    std::map<NodeId, int64_t> holders(const meta::PartitionKey& key) const {
        std::map<NodeId, int64_t> held;
        auto add = [&](const std::string& topic) {
            NodeId node = holder(meta::PartitionKey{topic, key.partition});
            if (!node.value().empty()) ++held[node];
        };
        if (auto parent = input_.parents.find(key.topic); parent != input_.parents.end()) {
            add(parent->second);
        }
        if (auto children = children_.find(key.topic); children != children_.end()) {
            for (const std::string& child : children->second) add(child);
        }
        return held;
    }

  private:
    // Where a partition is held once the moves planned and in flight finish; empty if unknown.
    NodeId holder(const meta::PartitionKey& key) const {
        if (auto planned = planned_.find(key); planned != planned_.end()) return planned->second;
        auto it = input_.assignments.find(key);
        if (it == input_.assignments.end()) return {};
        return it->second.target.value().empty() ? it->second.owner : it->second.target;
    }

    const PlannerInput& input_;
    std::map<std::string, std::vector<std::string>> children_;
    std::map<meta::PartitionKey, NodeId> planned_;
};

using Destination = std::map<NodeId, Holding>::iterator;

// The receivers balance ranks first for a partition of `topic`: the largest deficit, then the
// fewest partitions of `topic`; in NodeId order. Empty when no receiver has a deficit.
std::vector<Destination> balanced_destinations(Tally& tally, const std::string& topic) {
    std::vector<Destination> best;
    std::pair<int64_t, int64_t> best_rank;  // (-deficit, topic count): lowest wins
    for (auto it = tally.receivers.begin(); it != tally.receivers.end(); ++it) {
        const int64_t deficit = it->second.capacity - it->second.count;
        if (deficit <= 0) continue;
        auto found = it->second.per_topic.find(topic);
        const int64_t topic_count = found == it->second.per_topic.end() ? 0 : found->second;
        const std::pair<int64_t, int64_t> rank{-deficit, topic_count};
        if (best.empty() || rank < best_rank) {
            best.clear();
            best_rank = rank;
        }
        if (rank == best_rank) best.push_back(it);
    }
    return best;
}

int64_t count_at(const std::map<NodeId, int64_t>& held, const NodeId& node) {
    auto it = held.find(node);
    return it == held.end() ? 0 : it->second;
}

// One move off `source` (`node`): a partition of its fullest topic to one of the destinations
// balance ranks first. Among those pairs, the one that most lowers the replica pattern's
// colocations (linked partitions held at the destination, less those left behind on the source);
// then the highest key; then the lowest NodeId. Without links: the highest key to the first
// destination.
PlannedMove plan_one(Tally& tally, const Links& links, const NodeId& node, Holding& source) {
    auto topic = fullest_topic(source);
    std::vector<meta::PartitionKey>& keys = topic->second;
    std::vector<Destination> destinations = balanced_destinations(tally, topic->first);
    NARAD_ASSERT(!destinations.empty(), "planner: surplus without deficit");
    size_t chosen_key = keys.size() - 1;
    Destination chosen = destinations.front();
    if (links.linked(topic->first)) {
        std::optional<int64_t> best_score;
        for (size_t k = keys.size(); k-- > 0;) {  // highest key first: it wins a tie
            const std::map<NodeId, int64_t> held = links.holders(keys[k]);
            const int64_t left_behind = count_at(held, node);
            for (const Destination& destination : destinations) {
                const int64_t score = count_at(held, destination->first) - left_behind;
                if (!best_score || score < *best_score) {
                    best_score = score;
                    chosen_key = k;
                    chosen = destination;
                }
            }
        }
    }
    meta::PartitionKey key = std::move(keys[chosen_key]);
    keys.erase(keys.begin() + static_cast<std::ptrdiff_t>(chosen_key));
    --source.count;
    --source.per_topic[key.topic];
    NARAD_ASSERT(chosen->first != node, "planner: move onto its own owner");
    ++chosen->second.count;
    ++chosen->second.per_topic[key.topic];
    return PlannedMove{std::move(key), node, chosen->first};
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
    Links links(input);
    for (const auto& [node, surplus] : sources) {
        auto shed = tally.shedders.find(node);
        Holding& source = shed != tally.shedders.end() ? shed->second : tally.receivers[node];
        for (int64_t i = 0; i < surplus && budget > 0; ++i, --budget) {
            PlannedMove move = plan_one(tally, links, node, source);
            links.note_move(move.partition, move.to);
            plan.push_back(std::move(move));
        }
    }
    return plan;
}

}  // namespace narad::cluster
