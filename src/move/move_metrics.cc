#include "move/move_metrics.h"

namespace narad::move {
namespace {

MoveMetrics* build() {
    auto& registry = metrics::Registry::global();
    auto& total = registry.counter("narad_moves_total",
                                   "Partition moves this node received, by outcome.", {"outcome"});
    auto& blocked = registry.gauge(
        "narad_moves_blocked",
        "Moves that cannot finish on their own, by reason (the destination's reasons on the "
        "destination, the controller's on the controller).",
        {"reason"});
    for (const char* reason : kBlockedReasons) blocked.with({reason}).set(0);
    // Narad's narad_moves_total counts flips only (completed, force_promoted); moves that end
    // without one are ours to count.
    auto& unfinished = registry.counter(
        "narad_moves_unfinished_total",
        "Partition moves this node received that ended without a flip, by outcome.", {"outcome"});
    return new MoveMetrics{
        .completed = total.with({"completed"}),
        .force_promoted = total.with({"force_promoted"}),
        .aborted = unfinished.with({"aborted"}),
        .ended = unfinished.with({"ended"}),
        .duration = registry.histogram("narad_moves_duration_seconds",
                                       "Time from a move's start to its flip, on the destination.",
                                       {0.1, 0.5, 1, 5, 15, 60, 300, 1800, 7200}),
        .bytes =
            registry.counter("narad_moves_bytes_total", "Bytes copied by partition moves.").get(),
        .passes = registry
                      .counter("narad_moves_passes_total",
                               "Copy passes of partition moves (catch-up and drain).")
                      .get(),
        .freeze = registry.histogram("narad_moves_freeze_duration_seconds",
                                     "How long a move kept its source frozen (prepare to flip).",
                                     metrics::latency_bounds()),
        .non_converged = registry
                             .counter("narad_moves_non_converged_total",
                                      "Moves whose pre-copy did not converge before the freeze.")
                             .get(),
        .inflight = registry
                        .gauge("narad_moves_inflight",
                               "Partition moves targeted at this node and not yet finished.")
                        .get(),
        .blocked = blocked,
    };
}

}  // namespace

MoveMetrics& MoveMetrics::get() {
    static MoveMetrics* metrics = build();
    return *metrics;
}

}  // namespace narad::move
