// Where new partitions go: spread over the live, non-draining members so that every node's count of
// partitions of the topic differs by at most one, and, among those, the nodes holding fewest
// partitions overall are chosen first (ties by node id), which keeps the per-node totals within one
// of each other as topics come and go. Pure functions of a metastore view.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "meta/topic.h"

namespace narad::cluster {

// Owners for partitions [first, first + count) of `topic`. Errc::unavailable when no member is
// live.
Result<std::vector<NodeId>> spread_partitions(const meta::MetaState& state,
                                              const std::string& topic, uint32_t first,
                                              uint32_t count);

}  // namespace narad::cluster
