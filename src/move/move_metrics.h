// The move metrics (docs/operations.md lists them): Narad's names where it has them
// (narad_moves_inflight, narad_moves_total{outcome}, narad_moves_duration_seconds,
// narad_moves_bytes_total), plus passes, freeze durations, non-converged cutovers and blocked
// moves. One process-wide instance; thread-safe.
#pragma once

#include "base/metrics.h"

namespace narad::move {

struct MoveMetrics {
    metrics::Counter& completed;  // narad_moves_total{outcome="completed"}
    metrics::Counter& ended;      // narad_moves_total{outcome="ended"}: stopped without a flip
    metrics::Family<metrics::Histogram>& duration;
    metrics::Counter& bytes;
    metrics::Counter& passes;
    metrics::Family<metrics::Histogram>& freeze;
    metrics::Counter& non_converged;
    metrics::Gauge& inflight;
    metrics::Family<metrics::Gauge>& blocked;

    static MoveMetrics& get();
};

}  // namespace narad::move
