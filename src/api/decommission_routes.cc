// Decommission and forget (docs/decommission.md):
//   POST   /v1/cluster/members/{id}/decommission[?dry_run=]  204 draining; 200 the dry run's
//          verdict; 404 member not found; 409 {error, reasons[{code,message}]} when it could never
//          complete (nothing changes); 503 when the view or the write fails
//   DELETE /v1/cluster/members/{id}/decommission             204 no longer draining; 404
//   POST   /v1/cluster/members/{id}/forget                   200 {id, voter}; 400 the controller
//          itself; 404 no etcd member of that name; 409 a member record or an assignment names
//          it, or removing the voter could cost quorum
// Writes run on the controller (forwarded there, api/controller_forward.h); the dry run runs on
// the node asked, from a linearizable read. Every accepted decommission, cancel and forget is
// audited (cluster.decommission, cluster.decommission.cancel, cluster.forget).
#include "api/decommission_routes.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "api/access.h"
#include "api/params.h"
#include "api/respond.h"
#include "base/log.h"
#include "cluster/decommission.h"

namespace narad::api {
namespace {

using nlohmann::json;

constexpr const char* kDecommissionPath = "/v1/cluster/members/{id}/decommission";
constexpr const char* kForgetPath = "/v1/cluster/members/{id}/forget";

json reasons_json(const std::vector<cluster::DecommissionReason>& reasons) {
    json out = json::array();
    for (const auto& reason : reasons) {
        out.push_back({{"code", reason.code}, {"message", reason.message}});
    }
    return out;
}

void audit(const DecommissionRouteContext* c, std::string event, std::string actor,
           std::string target, std::string detail) {
    if (c->audit == nullptr) return;
    c->audit->record(
        {std::move(event), std::move(actor), std::move(target), "ok", std::move(detail)});
}

net::HttpResponse no_metastore() {
    return error_response(Errc::unavailable,
                          "decommission needs the cluster's metastore, which this node has "
                          "not opened");
}

// The preflight: a linearizable view and etcd's configuration, then the refusals.
struct Preflight {
    meta::MetaSnapshot state;
    cluster::EtcdConfiguration etcd;
    std::vector<cluster::DecommissionReason> refusals;
};

Result<Preflight> preflight(const DecommissionRouteContext* c, const NodeId& node) {
    NARAD_ASSIGN_OR_RETURN(meta::MetaSnapshot state, c->etcd_store->sync());
    if (state->find_member(node) == nullptr) return Status(Errc::not_found, "member not found");
    NARAD_ASSIGN_OR_RETURN(cluster::EtcdConfiguration etcd,
                           cluster::read_etcd_configuration(c->etcd_store->client()));
    Preflight out{state, std::move(etcd), {}};
    cluster::DecommissionView view{*out.state,           out.etcd,
                                   c->clock.now(),       c->limits.dead_after,
                                   c->limits.min_voters, c->limits.max_in_flight_moves};
    out.refusals = cluster::decommission_refusals(view, node);
    return out;
}

net::HttpResponse preflight_error(const Status& status) {
    if (status.code() == Errc::not_found) {
        return error_response(Errc::not_found, "member not found");
    }
    return error_response(Errc::unavailable, "decommission preflight: " + status.to_string());
}

net::HttpResponse dry_run(const DecommissionRouteContext* c, const NodeId& node) {
    auto checked = preflight(c, node);
    if (!checked.is_ok()) return preflight_error(checked.status());
    cluster::DrainLoad load =
        cluster::drain_load(*checked->state, node, c->clock.now(), c->limits.dead_after);
    json body = {{"member", node.value()},
                 {"would_decommission", checked->refusals.empty()},
                 {"reasons", reasons_json(checked->refusals)},
                 {"voter", checked->etcd.voters.count(node) > 0},
                 {"owned_partitions", load.owned},
                 {"inbound_moves", load.inbound}};
    return json_response(200, body.dump() + "\n");
}

net::HttpResponse decommission(const DecommissionRouteContext* c, const NodeId& node,
                               const std::string& actor) {
    auto checked = preflight(c, node);
    if (!checked.is_ok()) return preflight_error(checked.status());
    if (!checked->refusals.empty()) {
        json body = {{"error", "decommission of " + node.value() +
                                   " refused: " + checked->refusals.front().message},
                     {"reasons", reasons_json(checked->refusals)}};
        return error_json_response(Errc::conflict, body.dump() + "\n");
    }
    if (!checked->state->find_member(node)->draining) {
        Status marked = c->etcd_store->set_draining(node, true);
        if (marked.code() == Errc::not_found) {
            return error_response(Errc::not_found, "member not found");
        }
        if (!marked.is_ok()) {
            return error_response(Errc::unavailable, "decommission: " + marked.to_string());
        }
    }
    NARAD_LOG_INFO("decommission of {} started: it receives no partitions and sheds its own",
                   node.value());
    audit(c, "cluster.decommission", actor, node.value(), "draining");
    return empty_response(204);
}

net::HttpResponse cancel(const DecommissionRouteContext* c, const NodeId& node,
                         const std::string& actor) {
    Status cleared = c->etcd_store->set_draining(node, false);
    if (cleared.code() == Errc::not_found) {
        return error_response(Errc::not_found, "member not found");
    }
    if (!cleared.is_ok()) {
        return error_response(Errc::unavailable, "cancel decommission: " + cleared.to_string());
    }
    NARAD_LOG_INFO("decommission of {} cancelled: it keeps what it still owns", node.value());
    audit(c, "cluster.decommission.cancel", actor, node.value(), "no longer draining");
    return empty_response(204);
}

// The voters left after `leaving` goes, and those of them that do not answer.
std::vector<std::string> silent_voters(meta::EtcdClient& client,
                                       const std::vector<meta::Member>& members,
                                       const std::string& leaving, size_t& remaining) {
    std::vector<std::string> silent;
    remaining = 0;
    for (const meta::Member& member : members) {
        if (member.is_learner || member.name == leaving) continue;
        ++remaining;
        bool answers = false;
        for (const std::string& url : member.client_urls) {
            if (client.status(url).is_ok()) {
                answers = true;
                break;
            }
        }
        if (!answers) silent.push_back(member.name);
    }
    return silent;
}

net::HttpResponse forget(const DecommissionRouteContext* c, const NodeId& node,
                         const std::string& actor) {
    meta::EtcdClient& client = c->etcd_store->client();
    auto members = client.member_list();
    if (!members.is_ok()) {
        return error_response(Errc::unavailable,
                              "forget: reading etcd's members: " + members.status().to_string());
    }
    const meta::Member* found = nullptr;
    for (const meta::Member& member : *members) {
        if (member.name == node.value()) found = &member;
    }
    if (found == nullptr) {
        return error_response(Errc::not_found, "no etcd member is named " + node.value());
    }
    if (node == c->self) {
        return error_response(Errc::invalid_argument,
                              node.value() +
                                  " is the controller that would carry out the forget; "
                                  "decommission it instead");
    }
    auto synced = c->etcd_store->sync();
    if (!synced.is_ok()) {
        return error_response(Errc::unavailable, "forget: " + synced.status().to_string());
    }
    const meta::MetaState& state = **synced;
    if (state.find_member(node) != nullptr) {
        return error_response(Errc::conflict,
                              node.value() +
                                  " has a member record; decommission it instead (narad "
                                  "cluster decommission " +
                                  node.value() + ")");
    }
    for (const auto& [key, assignment] : state.assignments) {
        if (assignment.owner == node || assignment.target == node) {
            return error_response(Errc::conflict,
                                  key.topic + "/" + std::to_string(key.partition.value()) +
                                      " names " + node.value() + " as its " +
                                      (assignment.owner == node ? "owner" : "target") +
                                      "; nothing was forgotten");
        }
    }
    bool voter = !found->is_learner;
    if (voter) {
        size_t remaining = 0;
        std::vector<std::string> silent = silent_voters(client, *members, node.value(), remaining);
        size_t answering = remaining - silent.size();
        if (answering * 2 <= remaining) {
            std::string names;
            for (const std::string& name : silent) names += (names.empty() ? "" : ", ") + name;
            return error_response(Errc::conflict,
                                  "forgetting the voter could leave the cluster without a "
                                  "quorum: of the " +
                                      std::to_string(remaining) +
                                      " voters that would remain, these do not answer: " + names);
        }
    }
    uint64_t id = found->id;
    Status removed = client.member_remove(id);
    if (!removed.is_ok()) {
        return error_response(Errc::unavailable, "forget: " + removed.to_string());
    }
    NARAD_LOG_INFO("forgot etcd {} {} (id {:x}), which had no member record",
                   voter ? "voter" : "learner", node.value(), id);
    audit(c, "cluster.forget", actor, node.value(), voter ? "voter" : "learner");
    return json_response(200, json{{"id", node.value()}, {"voter", voter}}.dump() + "\n");
}

// The controller's side of each write.
void decommission_write(const DecommissionRouteContext* c, net::HttpRequest r, const PathParams& p,
                        net::Responder d) {
    if (c->etcd_store == nullptr) return d(no_metastore());
    bool cancelling = r.method == "DELETE";
    answer_on_pool(c->blocking, std::move(d),
                   [c, cancelling, node = NodeId(p.get("id")), actor = actor_of(r)] {
                       return cancelling ? cancel(c, node, actor) : decommission(c, node, actor);
                   });
}

void forget_write(const DecommissionRouteContext* c, net::HttpRequest r, const PathParams& p,
                  net::Responder d) {
    if (c->etcd_store == nullptr) return d(no_metastore());
    answer_on_pool(c->blocking, std::move(d), [c, node = NodeId(p.get("id")), actor = actor_of(r)] {
        return forget(c, node, actor);
    });
}

}  // namespace

void register_decommission_routes(Router& router, DecommissionRouteContext context) {
    auto c = std::make_shared<const DecommissionRouteContext>(std::move(context));
    RouteHandler forwarded = controller_only(c->controller, bind_route(c, decommission_write));
    auto route = [c, forwarded](net::HttpRequest r, const PathParams& p, net::Responder d) {
        if (p.get("id").empty()) {
            return d(error_response(Errc::invalid_argument, "member id required"));
        }
        auto dry = bool_param("dry_run", r.query_param("dry_run"));
        if (!dry.is_ok()) return d(error_response(Errc::invalid_argument, dry.status().message()));
        if (r.method == "DELETE" && r.query_param("dry_run")) {
            return d(error_response(Errc::invalid_argument,
                                    "dry_run applies to a decommission, not to its cancel"));
        }
        if (!*dry) return forwarded(std::move(r), p, std::move(d));
        if (c->etcd_store == nullptr) return d(no_metastore());
        answer_on_pool(c->blocking, std::move(d),
                       [c, node = NodeId(p.get("id"))] { return dry_run(c.get(), node); });
    };
    router.add("POST", kDecommissionPath, route);
    router.add("DELETE", kDecommissionPath, route);
    router.add("POST", kForgetPath, controller_only(c->controller, bind_route(c, forget_write)));
}

void register_controller_decommission_routes(Router& internal, DecommissionRouteContext context) {
    auto c = std::make_shared<const DecommissionRouteContext>(std::move(context));
    add_controller_route(internal, c->controller, "POST", kDecommissionPath,
                         bind_route(c, decommission_write));
    add_controller_route(internal, c->controller, "DELETE", kDecommissionPath,
                         bind_route(c, decommission_write));
    add_controller_route(internal, c->controller, "POST", kForgetPath, bind_route(c, forget_write));
}

}  // namespace narad::api
