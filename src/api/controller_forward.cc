#include "api/controller_forward.h"

#include "api/owner_routing.h"
#include "api/respond.h"

namespace narad::api {
namespace {

constexpr std::string_view kControllerPrefix = "/internal/v1/controller";
constexpr std::string_view kCallerParam = "narad_caller";

// Takes the forwarded caller off the request (the last query parameter, as controller_only
// appends it) into its `user`.
void take_caller(net::HttpRequest& r) {
    for (auto it = r.query.begin(); it != r.query.end(); ++it) {
        if (it->first != kCallerParam) continue;
        r.user = it->second;
        r.query.erase(it);
        break;
    }
    std::string marker = std::string(kCallerParam) + "=";
    auto at = r.target.rfind(marker);
    if (at != std::string::npos && at > 0 && (r.target[at - 1] == '?' || r.target[at - 1] == '&')) {
        r.target.erase(at - 1);
    }
}

}  // namespace

RouteHandler controller_only(ApiContext* c, RouteHandler local) {
    return [c, local](net::HttpRequest r, const PathParams& p, net::Responder d) {
        if (c->cluster.is_controller() || c->peers == nullptr) {
            return local(std::move(r), p, std::move(d));
        }
        NodeId controller = c->store.snapshot()->controller;
        if (controller.value().empty() || controller == c->node_id) {
            return d(error_response(
                503, "control plane temporarily unavailable: no controller is elected yet"));
        }
        run_routed(*c, std::move(d), [c, controller, r = std::move(r)] {
            // The caller rides along as a query parameter of the cluster port, whose peers
            // prove the cluster secret: the controller checks its grants and records it as owner.
            std::string target = std::string(kControllerPrefix) + r.target;
            if (!r.user.empty()) {
                target += (r.target.find('?') == std::string::npos ? "?" : "&");
                target += std::string(kCallerParam) + "=" + r.user;  // a name needs no escaping
            }
            return forward_to_owner(*c, controller, r.method, target, r.body, Millis(30'000),
                                    "controller");
        });
    };
}

void add_controller_route(Router& internal, ApiContext* c, std::string_view method,
                          std::string_view public_path, RouteHandler local) {
    internal.add(std::string(method), std::string(kControllerPrefix) + std::string(public_path),
                 [c, local](net::HttpRequest r, const PathParams& p, net::Responder d) {
                     if (!c->cluster.is_controller()) {
                         return d(error_response(503,
                                                 "control plane temporarily unavailable: the "
                                                 "controller changed; retry"));
                     }
                     if (r.target.starts_with(kControllerPrefix)) {
                         r.target.erase(0, kControllerPrefix.size());
                     }
                     take_caller(r);
                     local(std::move(r), p, std::move(d));
                 });
}

}  // namespace narad::api
