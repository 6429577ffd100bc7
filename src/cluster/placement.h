// Where new partitions go: spread over the live, non-draining members so that every node's count of
// partitions of the topic differs by at most one, and, among those, the nodes holding fewest
// partitions overall are chosen first (ties by node id), which keeps the per-node totals within one
// of each other as topics come and go. Pure functions of a metastore view; any thread may call
// them.
//
// Replica pattern: a child topic's partition p is placed away from the node that owns its parent's
// partition p whenever balance allows it, so a parent and its copy do not share one disk. Balance
// always wins: the child's per-node counts are exactly the ones the spread rule gives; only which
// partition numbers each node gets changes, and a colocation is left only where no balanced choice
// avoids it (one live node, say). count_colocated_child_partitions() measures what is left.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "meta/topic.h"

namespace narad::cluster {

// Owners for partitions [first, first + count) of `topic`. `parent` names the parent of a child
// being created (its record is not in `state` yet); when empty and `topic` is in `state` as a
// child, its recorded parent is used (a grow). Errc::unavailable when no member is live.
Result<std::vector<NodeId>> spread_partitions(const meta::MetaState& state,
                                              const std::string& topic, uint32_t first,
                                              uint32_t count, const std::string& parent = "");
// The same for `topic` as its record will be stored: a child created with `parent` names it.
Result<std::vector<NodeId>> spread_partitions(const meta::MetaState& state,
                                              const meta::Topic& topic, uint32_t first,
                                              uint32_t count);

// Child partitions whose owner also owns the same-numbered partition of their parent (the
// narad_colocated_child_partitions gauge). Only children still linked to a parent count; an
// unassigned partition (empty owner) is never colocated.
int64_t count_colocated_child_partitions(const meta::MetaState& state);

}  // namespace narad::cluster
