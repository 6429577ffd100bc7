#include "api/controller_forward.h"

#include "api/owner_routing.h"
#include "api/respond.h"

namespace narad::api {
namespace {

constexpr std::string_view kControllerPrefix = "/internal/v1/controller";
constexpr std::string_view kCallerParam = "narad_caller";

// Takes the forwarded caller off the request into its `user`; false unless there is exactly one
// (controller_only refuses a client's own, so there is one, from the forwarding node).
bool take_caller(net::HttpRequest& r) {
    r.user.clear();
    size_t found = 0;
    for (const auto& [name, value] : r.query) {
        if (name != kCallerParam) continue;
        r.user = value;
        ++found;
    }
    std::erase_if(r.query, [](const auto& param) { return param.first == kCallerParam; });
    std::string marker = std::string(kCallerParam) + "=";
    auto at = r.target.rfind(marker);
    if (at != std::string::npos && at > 0 && (r.target[at - 1] == '?' || r.target[at - 1] == '&')) {
        r.target.erase(at - 1);
    }
    return found == 1;
}

}  // namespace

RouteHandler controller_only(ControllerForward forward, RouteHandler local) {
    return [c = std::move(forward), local](net::HttpRequest r, const PathParams& p,
                                           net::Responder d) {
        // The parameter that carries the caller to the controller is the nodes' alone.
        for (const auto& [name, value] : r.query) {
            if (name == kCallerParam) {
                return d(error_response(Errc::invalid_argument,
                                        "the query parameter " + std::string(kCallerParam) +
                                            " is reserved for node-to-node calls"));
            }
        }
        if (c.is_controller() || c.routing.peers == nullptr) {
            return local(std::move(r), p, std::move(d));
        }
        NodeId controller = c.store.snapshot()->controller;
        if (controller.value().empty() || controller == c.routing.self) {
            return d(error_response(
                Errc::unavailable,
                "control plane temporarily unavailable: no controller is elected yet"));
        }
        run_routed(c.routing, std::move(d), [routing = c.routing, controller, r = std::move(r)] {
            // The caller rides along as a query parameter of the cluster port, whose peers
            // prove the cluster secret: the controller checks its grants and records it as owner.
            // Appended last, after any fragment is cut (the controller would cut it there), to a
            // query that holds no other `narad_caller` (refused above).
            std::string own = r.target.substr(0, r.target.find('#'));
            std::string target = std::string(kControllerPrefix) + own;
            target += (own.find('?') == std::string::npos ? "?" : "&");
            target += std::string(kCallerParam) + "=" + r.user;  // a user name needs no escaping
            return forward_to_owner(routing, controller, r.method, target, r.body, Millis(30'000),
                                    "controller");
        });
    };
}

void add_controller_route(Router& internal, ControllerForward forward, std::string_view method,
                          std::string_view public_path, RouteHandler local) {
    internal.add(std::string(method), std::string(kControllerPrefix) + std::string(public_path),
                 [is_controller = std::move(forward.is_controller), local](
                     net::HttpRequest r, const PathParams& p, net::Responder d) {
                     if (!is_controller()) {
                         return d(error_response(Errc::unavailable,
                                                 "control plane temporarily unavailable: the "
                                                 "controller changed; retry"));
                     }
                     if (r.target.starts_with(kControllerPrefix)) {
                         r.target.erase(0, kControllerPrefix.size());
                     }
                     if (!take_caller(r)) {
                         return d(error_response(Errc::invalid_argument,
                                                 "a forwarded call must name its caller once"));
                     }
                     local(std::move(r), p, std::move(d));
                 });
}

}  // namespace narad::api
