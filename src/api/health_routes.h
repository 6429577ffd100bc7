// The routes a load balancer and a scraper use, on the API port and on the metrics listener
// (http.metrics_addr): GET /healthz (200 until shutdown begins, then 503), GET /readyz (200 once
// the node is ready: started, a controller known and, with security on, the root user seeded) and
// GET /metrics (Prometheus text, when this port serves it). Thread-safe once registered.
#pragma once

#include <functional>

#include "api/router.h"
#include "base/thread_pool.h"

namespace narad::api {

// Whether this port serves /metrics, or a listener of its own does (http.metrics_addr).
enum class MetricsRoute { served, elsewhere };

struct HealthRouteContext {
    std::function<bool()> ready;
    std::function<bool()> shutting_down;
    // Renders /metrics: its collectors may look at files, so not on an I/O thread.
    ThreadPool& blocking;
};

void register_health_routes(Router& router, HealthRouteContext context, MetricsRoute metrics);

}  // namespace narad::api
