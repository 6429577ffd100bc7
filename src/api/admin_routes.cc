// Health and metrics; the user routes are user_routes.cc's.
#include "api/api.h"
#include "api/respond.h"
#include "base/json_text.h"
#include "base/metrics.h"

namespace narad::api {
void register_health_routes(Router& router, ApiContext& context, MetricsRoute metrics) {
    ApiContext* c = &context;
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
    // Rendering runs the collectors, some of which look at files (the data directory's usage, the
    // open logs), so it goes to the blocking pool rather than an I/O thread.
    router.add("GET", "/metrics", [c](net::HttpRequest, const PathParams&, net::Responder d) {
        answer_on_pool(c->blocking, std::move(d), [] {
            net::HttpResponse response;
            response.content_type = "text/plain; version=0.0.4; charset=utf-8";
            response.body = metrics::Registry::global().render();
            return response;
        });
    });
}

void register_admin_routes(Router& router, ApiContext& context, MetricsRoute metrics) {
    register_health_routes(router, context, metrics);
    register_user_routes(router, context);
}

void register_routes(Router& router, ApiContext& context, MetricsRoute metrics) {
    register_topic_routes(router, context);
    register_message_routes(router, context);
    register_admin_routes(router, context, metrics);
    register_cluster_routes(router, context);
    register_decommission_routes(router, context);
}

}  // namespace narad::api
