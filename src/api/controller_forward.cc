#include "api/controller_forward.h"

#include "api/owner_routing.h"
#include "api/respond.h"

namespace narad::api {
namespace {

constexpr std::string_view kControllerPrefix = "/internal/v1/controller";

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
            return forward_to_owner(*c, controller, r.method,
                                    std::string(kControllerPrefix) + r.target, r.body,
                                    Millis(30'000), "controller");
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
                     local(std::move(r), p, std::move(d));
                 });
}

}  // namespace narad::api
