// Health, metrics, and the user routes as a single node answers them.
#include "api/api.h"
#include "api/respond.h"
#include "base/json_text.h"
#include "base/metrics.h"

namespace narad::api {
namespace {

constexpr const char* kUsersUnavailable =
    "users and authentication are not available in this release; the node runs with security "
    "off";

}  // namespace

void register_health_routes(Router& router, ApiContext& context, MetricsRoute metrics) {
    ApiContext* c = &context;
    router.add("GET", "/healthz", [c](net::HttpRequest, const PathParams&, net::Responder d) {
        if (c->shutting_down()) return d(json_response(503, "{\"status\":\"shutting down\"}\n"));
        d(json_response(200, "{\"status\":\"ok\"}\n"));
    });
    router.add("GET", "/readyz", [c](net::HttpRequest, const PathParams&, net::Responder d) {
        if (!c->ready() || c->shutting_down()) return d(error_response(503, "not ready"));
        d(json_response(200, "{\"status\":\"ready\"}\n"));
    });
    if (metrics == MetricsRoute::elsewhere) return;
    router.add("GET", "/metrics", [](net::HttpRequest, const PathParams&, net::Responder d) {
        net::HttpResponse response;
        response.content_type = "text/plain; version=0.0.4; charset=utf-8";
        response.body = metrics::Registry::global().render();
        d(std::move(response));
    });
}

void register_admin_routes(Router& router, ApiContext& context, MetricsRoute metrics) {
    register_health_routes(router, context, metrics);
    auto users = [](net::HttpRequest, const PathParams&, net::Responder d) {
        d(error_response(501, kUsersUnavailable));
    };
    router.add("POST", "/v1/users", users);
    router.add("GET", "/v1/users", users);
    router.add("GET", "/v1/users/{user}", users);
    router.add("DELETE", "/v1/users/{user}", users);
    router.add("PUT", "/v1/users/{user}/grants", users);
    router.add("PUT", "/v1/users/{user}/password", users);
}

void register_routes(Router& router, ApiContext& context, MetricsRoute metrics) {
    register_topic_routes(router, context);
    register_message_routes(router, context);
    register_admin_routes(router, context, metrics);
    register_cluster_routes(router, context);
    register_decommission_routes(router, context);
}

}  // namespace narad::api
