#include "api/node_status.h"

#include <nlohmann/json.hpp>

#include "api/move_routes.h"
#include "api/peer_json.h"
#include "api/respond.h"
#include "move/quarantine.h"

namespace narad::api {
namespace {

using nlohmann::json;

constexpr size_t kQuarantineListed = 100;
constexpr const char* kStatusPath = "/internal/v1/node/status";

}  // namespace

std::string node_status_body(const NodeStatusSources& sources) {
    std::vector<move::QuarantinedCopy> copies =
        move::list_quarantined(sources.fs, sources.data_dir);
    uint64_t bytes = 0;
    json list = json::array();
    for (const move::QuarantinedCopy& copy : copies) {
        bytes += copy.bytes;
        if (list.size() >= kQuarantineListed) continue;
        list.push_back(
            {{"kind", copy.kind},
             {"topic", copy.topic},
             {"partition", copy.partition},
             {"dir", copy.directory},
             {"bytes", copy.bytes},
             {"mod_time",
              format_rfc3339(
                  std::chrono::duration_cast<Millis>(copy.modified.time_since_epoch()).count())}});
    }
    // The drain flag before the count (see ProduceGate).
    bool draining = sources.gate.draining();
    uint64_t in_flight = sources.gate.in_flight();
    json body = {
        {"node", sources.self.value()},
        {"draining", draining},
        {"produce_in_flight", in_flight},
        {"dispatch_backlog", sources.dispatch_backlog()},
        {"quarantine", {{"copies", copies.size()}, {"bytes", bytes}, {"list", list}}},
        {"moves", sources.runner != nullptr
                      ? json::parse(worker_reports_json(*sources.runner, sources.self))
                      : json::array()},
    };
    return body.dump();
}

void register_node_status_route(Router& internal, NodeStatusSources& sources) {
    NodeStatusSources* s = &sources;
    internal.add("GET", kStatusPath, [s](net::HttpRequest, const PathParams&, net::Responder d) {
        answer_on_pool(s->pool, std::move(d),
                       [s] { return json_response(200, node_status_body(*s) + "\n"); });
    });
}

Result<std::string> fetch_node_status(PeerClient& peers, const NodeId& node, Millis timeout) {
    NARAD_ASSIGN_OR_RETURN(PeerReply reply, peers.call(node, "GET", kStatusPath, "", "", timeout));
    if (reply.status == 404) {
        return Status(Errc::not_implemented, "node status is not available on this node");
    }
    if (reply.status != 200) {
        return Status(Errc::peer_error, "node status answered " + std::to_string(reply.status));
    }
    return std::move(reply.body);
}

Result<cluster::NodeStatus> decode_node_status(std::string_view body) {
    json parsed = parse_peer_reply(body);
    if (!parsed.is_object() || !parsed.contains("draining") || !parsed["draining"].is_boolean() ||
        !parsed.contains("produce_in_flight") ||
        !parsed["produce_in_flight"].is_number_unsigned() || !parsed.contains("dispatch_backlog") ||
        !parsed["dispatch_backlog"].is_number_unsigned()) {
        return Status(Errc::peer_error, "a node status of the wrong shape");
    }
    return cluster::NodeStatus{parsed["draining"].get<bool>(),
                               parsed["produce_in_flight"].get<uint64_t>(),
                               parsed["dispatch_backlog"].get<uint64_t>()};
}

}  // namespace narad::api
