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

}  // namespace narad::cli
