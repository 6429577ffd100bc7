// The cluster's read routes: GET /v1/cluster/members[?detail=] (Narad's fields, the node's own
// status with detail, plus our etcd_role) and
// GET /v1/cluster/status (ours: the controller, the metastore revision, the etcd members).
#include "api/cluster_routes.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "api/params.h"
#include "api/peer_json.h"
#include "api/respond.h"
#include "cluster/decommission.h"

namespace narad::api {
namespace {

using nlohmann::json;

constexpr Millis kStatusBudget{2'000};

json member_json(const ClusterRouteContext& context, const meta::MetaState& state,
                 const NodeId& node, const meta::MemberInfo& member, uint32_t owned,
                 uint32_t outbound) {
    MonoTime now = context.clock.now();
    int64_t heartbeat_age = 0;
    if (auto since = state.down_since.find(node);
        since != state.down_since.end() && !state.is_live(node)) {
        heartbeat_age = std::max<int64_t>(
            0, std::chrono::duration_cast<std::chrono::seconds>(now - since->second).count());
    }
    json out = {
        {"id", node.value()},
        {"addr", member.api_addr},
        {"status", state.is_dead(node, now, context.limits.dead_after) ? "dead" : "alive"},
        {"draining", member.draining},
        {"owned_partitions", owned},
        {"outbound_moves", outbound},
        {"voter", member.etcd_role == meta::EtcdRole::voter},
        {"leader", state.controller == node},
        {"heartbeat_age_seconds", heartbeat_age},
    };
    if (member.draining) {
        cluster::EtcdConfiguration etcd = cluster::configuration_from_records(state);
        cluster::DecommissionView view{state,
                                       etcd,
                                       now,
                                       context.limits.dead_after,
                                       context.limits.min_voters,
                                       context.limits.max_in_flight_moves};
        json blocked = json::array();
        for (const auto& reason : cluster::decommission_blockers(view, node)) {
            blocked.push_back({{"code", reason.code}, {"message", reason.message}});
        }
        if (!blocked.empty()) out["decommission_blocked"] = std::move(blocked);
    }
    out["etcd_role"] = meta::etcd_role_name(member.etcd_role);
    return out;
}

json members_json(const ClusterRouteContext& context, const meta::MetaState& state) {
    std::map<NodeId, uint32_t> owned;
    std::map<NodeId, uint32_t> outbound;
    for (const auto& [key, assignment] : state.assignments) {
        ++owned[assignment.owner];
        if (!assignment.target.value().empty()) ++outbound[assignment.owner];
    }
    json members = json::array();
    for (const auto& [node, member] : state.members) {
        members.push_back(member_json(context, state, node, member, owned[node], outbound[node]));
    }
    return members;
}

// ?detail=true: every member's own status, within one budget for all of them.
void add_node_status(const ClusterRouteContext& context, const meta::MetaState& state,
                     json& members) {
    MonoTime deadline = context.clock.now() + kStatusBudget;
    for (json& member : members) {
        NodeId node(member["id"].get<std::string>());
        Result<std::string> body = Status(Errc::not_found, "node status is not available");
        Millis left = std::chrono::duration_cast<Millis>(deadline - context.clock.now());
        if (node == context.routing.self && context.node_status != nullptr) {
            body = node_status_body(*context.node_status);
        } else if (left <= Millis(0)) {
            body = Status(Errc::timeout, "not asked within the status budget");
        } else if (context.routing.peers == nullptr || state.find_member(node) == nullptr) {
            body = Status(Errc::not_found, "node status is not available on this node");
        } else {
            body = fetch_node_status(*context.routing.peers, node, left);
        }
        json parsed = body.is_ok() ? parse_peer_reply(*body) : json();
        if (parsed.is_object()) {
            member["node_status"] = std::move(parsed);
        } else {
            member["status_error"] =
                body.is_ok() ? "a node status of the wrong shape" : body.status().message();
        }
    }
}

}  // namespace

void register_cluster_routes(Router& router, ClusterRouteContext context) {
    auto c = std::make_shared<const ClusterRouteContext>(std::move(context));
    router.add("GET", "/v1/cluster/members",
               [c](net::HttpRequest r, const PathParams&, net::Responder d) {
                   auto detail = bool_param("detail", r.query_param("detail"));
                   if (!detail.is_ok()) {
                       return d(error_response(Errc::invalid_argument, detail.status().message()));
                   }
                   meta::MetaSnapshot state = c->store.snapshot();
                   json members = members_json(*c, *state);
                   if (!*detail) {
                       return d(json_response(200, json{{"members", members}}.dump() + "\n"));
                   }
                   run_routed(c->routing, std::move(d), [c, state, members]() mutable {
                       add_node_status(*c, *state, members);
                       return json_response(200, json{{"members", members}}.dump() + "\n");
                   });
               });
    router.add("GET", "/v1/cluster/status",
               [c](net::HttpRequest, const PathParams&, net::Responder d) {
                   // The etcd member list is a network call: not on the HTTP thread.
                   answer_on_pool(c->blocking, std::move(d), [c] {
                       meta::MetaSnapshot state = c->store.snapshot();
                       json body = {
                           {"cluster", c->cluster_name},
                           {"node", c->routing.self.value()},
                           {"controller", state->controller.value()},
                           {"is_controller", c->is_controller()},
                           {"revision", state->revision},
                           {"members", members_json(*c, *state)},
                       };
                       json etcd = json::object();
                       auto members = c->etcd_members();
                       if (members.is_ok()) {
                           json list = json::array();
                           for (const meta::Member& member : *members) {
                               char id[17];
                               std::snprintf(id, sizeof id, "%016llx",
                                             static_cast<unsigned long long>(member.id));
                               list.push_back({{"id", id},
                                               {"name", member.name},
                                               {"is_learner", member.is_learner},
                                               {"client_urls", member.client_urls},
                                               {"peer_urls", member.peer_urls}});
                           }
                           etcd["members"] = std::move(list);
                       } else {
                           etcd["error"] = members.status().to_string();
                       }
                       body["etcd"] = std::move(etcd);
                       return json_response(200, body.dump() + "\n");
                   });
               });
}

}  // namespace narad::api
