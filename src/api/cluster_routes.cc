// The cluster's read routes: GET /v1/cluster/members (Narad's fields plus etcd_role) and
// GET /v1/cluster/status (ours: the controller, the metastore revision, the etcd members).
#include <nlohmann/json.hpp>

#include "api/api.h"
#include "api/respond.h"

namespace narad::api {
namespace {

using nlohmann::json;

std::string_view member_status(const meta::MetaState& state, const NodeId& node, MonoTime now,
                               Millis dead_after) {
    if (state.is_live(node)) return "alive";
    return state.is_dead(node, now, dead_after) ? "dead" : "unreachable";
}

json members_json(ApiContext& context, const meta::MetaState& state) {
    std::map<NodeId, uint32_t> owned;
    std::map<NodeId, uint32_t> outbound;
    for (const auto& [key, assignment] : state.assignments) {
        ++owned[assignment.owner];
        if (!assignment.target.value().empty()) ++outbound[assignment.owner];
    }
    MonoTime now = context.clock.now();
    json members = json::array();
    for (const auto& [node, member] : state.members) {
        members.push_back({
            {"id", node.value()},
            {"addr", member.api_addr},
            {"status", member_status(state, node, now, context.cluster.dead_after)},
            {"draining", member.draining},
            {"owned_partitions", owned[node]},
            {"outbound_moves", outbound[node]},
            {"etcd_role", meta::etcd_role_name(member.etcd_role)},
        });
    }
    return members;
}

}  // namespace

void register_cluster_routes(Router& router, ApiContext& context) {
    ApiContext* c = &context;
    router.add("GET", "/v1/cluster/members",
               [c](net::HttpRequest, const PathParams&, net::Responder d) {
                   meta::MetaSnapshot state = c->store.snapshot();
                   json body = {{"members", members_json(*c, *state)}};
                   d(json_response(200, body.dump() + "\n"));
               });
    router.add("GET", "/v1/cluster/status",
               [c](net::HttpRequest, const PathParams&, net::Responder d) {
                   // The etcd member list is a network call: not on the HTTP thread.
                   answer_on_pool(c->blocking, std::move(d), [c] {
                       meta::MetaSnapshot state = c->store.snapshot();
                       json body = {
                           {"cluster", c->cluster.name},
                           {"node", c->node_id.value()},
                           {"controller", state->controller.value()},
                           {"is_controller", c->cluster.is_controller()},
                           {"revision", state->revision},
                           {"members", members_json(*c, *state)},
                       };
                       json etcd = json::object();
                       auto members = c->cluster.etcd_members();
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
