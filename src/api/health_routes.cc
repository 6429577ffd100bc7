#include "api/health_routes.h"

#include <memory>

#include "api/respond.h"
#include "base/metrics.h"

namespace narad::api {

void register_health_routes(Router& router, HealthRouteContext context, MetricsRoute metrics) {
    auto c = std::make_shared<const HealthRouteContext>(std::move(context));
    router.add("GET", "/healthz", [c](net::HttpRequest, const PathParams&, net::Responder d) {
        if (c->shutting_down()) {
            return d(error_json_response(Errc::shutting_down, "{\"status\":\"shutting down\"}\n"));
        }
        d(json_response(200, "{\"status\":\"ok\"}\n"));
    });
    router.add("GET", "/readyz", [c](net::HttpRequest, const PathParams&, net::Responder d) {
        if (!c->ready() || c->shutting_down()) {
            return d(error_response(Errc::unavailable, "not ready"));
        }
        d(json_response(200, "{\"status\":\"ready\"}\n"));
    });
    if (metrics == MetricsRoute::elsewhere) return;
    router.add("GET", "/metrics", [c](net::HttpRequest, const PathParams&, net::Responder d) {
        answer_on_pool(c->blocking, std::move(d), [] {
            net::HttpResponse response;
            response.content_type = "text/plain; version=0.0.4; charset=utf-8";
            response.body = metrics::Registry::global().render();
            return response;
        });
    });
}

}  // namespace narad::api
