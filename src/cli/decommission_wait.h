// `narad cluster decommission ID --wait`: after the drain is recorded, poll
// GET /v1/cluster/members?detail=true and print a line each time the node's progress changes
// (partitions it still owns, moves off it in flight, its ingress WAL backlog and unanswered
// produces, and what blocks it), until it is no longer a member. A failed poll is shown and
// retried; kMaxConsecutivePollFailures in a row end the wait with the last error. Ctrl-C stops the
// Sleeper and the wait ends with status 0 (the decommission goes on). Runs on the calling thread.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cli/api.h"
#include "cli/output.h"
#include "cli/sleeper.h"

namespace narad::cli {

struct DrainProgress {
    uint64_t owned = 0;
    uint64_t moving_off = 0;
    std::optional<uint64_t> dispatch_backlog;  // absent when the node could not be asked
    std::optional<uint64_t> produce_in_flight;
    std::vector<std::string> blocked;  // "code: message"
    std::string status_error;
    bool operator==(const DrainProgress&) const = default;
};

// The node's progress in a members?detail=true body; nullopt when it is no longer listed.
// Errc::corrupt for a body that is not a members list.
Result<std::optional<DrainProgress>> drain_progress(std::string_view members_body,
                                                    std::string_view node);
// One progress line, without a newline.
std::string format_drain_progress(std::string_view node, const DrainProgress& progress);

Status wait_for_decommission(Api& api, Output& output, Sleeper& sleeper, std::string_view node,
                             std::chrono::nanoseconds interval);

}  // namespace narad::cli
