#include "cli/decommission_wait.h"

#include <nlohmann/json.hpp>

#include "base/mutex.h"
#include "cli/moves_watch.h"

namespace narad::cli {
namespace {

using nlohmann::json;

std::optional<uint64_t> unsigned_field(const json& object, const char* name) {
    if (!object.is_object() || !object.contains(name) || !object[name].is_number_unsigned()) {
        return std::nullopt;
    }
    return object[name].get<uint64_t>();
}

}  // namespace

Result<std::optional<DrainProgress>> drain_progress(std::string_view members_body,
                                                    std::string_view node) {
    json body = json::parse(members_body, nullptr, /*allow_exceptions=*/false);
    if (!body.is_object() || !body.contains("members") || !body["members"].is_array()) {
        return Status(Errc::corrupt, "the members list has the wrong shape");
    }
    for (const json& member : body["members"]) {
        if (!member.is_object() || member.value("id", "") != node) continue;
        DrainProgress progress;
        progress.owned = unsigned_field(member, "owned_partitions").value_or(0);
        progress.moving_off = unsigned_field(member, "outbound_moves").value_or(0);
        if (member.contains("node_status")) {
            const json& status = member["node_status"];
            progress.dispatch_backlog = unsigned_field(status, "dispatch_backlog");
            progress.produce_in_flight = unsigned_field(status, "produce_in_flight");
        }
        if (member.contains("status_error") && member["status_error"].is_string()) {
            progress.status_error = member["status_error"].get<std::string>();
        }
        if (member.contains("decommission_blocked") && member["decommission_blocked"].is_array()) {
            for (const json& reason : member["decommission_blocked"]) {
                if (!reason.is_object()) continue;
                progress.blocked.push_back(reason.value("code", "") + ": " +
                                           reason.value("message", ""));
            }
        }
        return std::optional<DrainProgress>(std::move(progress));
    }
    return std::optional<DrainProgress>();
}

std::string format_drain_progress(std::string_view node, const DrainProgress& progress) {
    std::string line = std::string(node) + ": " + std::to_string(progress.owned) +
                       " partitions left, " + std::to_string(progress.moving_off) +
                       " moving off, WAL backlog ";
    line += progress.dispatch_backlog ? std::to_string(*progress.dispatch_backlog) : "unknown";
    if (progress.produce_in_flight && *progress.produce_in_flight > 0) {
        line += ", " + std::to_string(*progress.produce_in_flight) + " produce requests unanswered";
    }
    if (!progress.status_error.empty()) line += " (" + progress.status_error + ")";
    for (const std::string& reason : progress.blocked) line += "; waiting on " + reason;
    return line;
}

Status wait_for_decommission(Api& api, Output& output, Sleeper& sleeper, std::string_view node,
                             std::chrono::nanoseconds interval) {
    std::optional<DrainProgress> last;
    int failures_in_row = 0;
    while (!sleeper.stopped()) {
        auto reply = send(api, "GET", "/v1/cluster/members?detail=true");
        Result<std::optional<DrainProgress>> progress =
            reply.is_ok() ? drain_progress(reply->body, node)
                          : Result<std::optional<DrainProgress>>(reply.status());
        if (!progress.is_ok()) {
            if (++failures_in_row >= kMaxConsecutivePollFailures) return progress.status();
            MutexLock lock(output.mutex);
            output.err << "poll failed: " << progress.status().message() << "\n" << std::flush;
        } else {
            failures_in_row = 0;
            MutexLock lock(output.mutex);
            if (!progress->has_value()) {
                output.out << node << " is decommissioned: it has left the cluster\n" << std::flush;
                return Status::ok();
            }
            if (last != **progress) {
                output.out << format_drain_progress(node, **progress) << "\n" << std::flush;
                last = **progress;
            }
        }
        if (!sleeper.sleep_for(interval)) return Status::ok();
    }
    return Status::ok();
}

}  // namespace narad::cli
