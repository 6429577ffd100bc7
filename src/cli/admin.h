// Grant specs of `narad user add|grant --grant action:pattern[,pattern]`, parsed as the Go CLI
// does: split at the first ':', action trimmed and checked, patterns split on ',' and trimmed
// (omitted when there are none, so a bare `admin` works). Pure; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace narad::cli {

// A JSON array of {"action", "patterns"?} objects, or
// `unknown action "x" in grant "spec" (want produce|consume|create|admin)`.
Result<nlohmann::json> parse_grants(const std::vector<std::string>& specs);

// `narad user revoke`: `current` (a user's grants as the node answers them) without what
// `revoked` (parsed as parse_grants) names: a spec with patterns removes those patterns from
// that action's grants, a bare action removes the action. A grant left with no patterns goes.
// Nothing it names is held: an error saying so, so a typo does not pass for a revoke.
Result<nlohmann::json> revoke_grants(const nlohmann::json& current, const nlohmann::json& revoked);

}  // namespace narad::cli
