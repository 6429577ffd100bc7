// The move metrics (docs/operations.md lists them): Narad's names where it has them
// (narad_moves_inflight, narad_moves_total{outcome}, narad_moves_duration_seconds,
// narad_moves_bytes_total), plus unfinished moves, passes, freeze durations, non-converged cutovers
// and blocked moves. One process-wide instance; thread-safe.
#pragma once

#include "base/metrics.h"

namespace narad::move {

// The reasons narad_moves_blocked reports, each exported (at 0 when clear) from the start. The
// destination's: a copy that cannot be verified, a dead source with a copy behind its high
// watermark; the controller's: a dead source, a dead destination, a destination that is no member.
inline constexpr const char* kBlockedReasons[] = {"copy_unverifiable", "source_dead_copy_behind",
                                                  "source_dead", "target_dead",
                                                  "target_not_member"};

struct MoveMetrics {
    metrics::Counter& completed;       // narad_moves_total{outcome="completed"}
    metrics::Counter& force_promoted;  // {outcome="force_promoted"}: the source was dead
    // narad_moves_unfinished_total{outcome="aborted"}: an operator's abort took effect here
    metrics::Counter& aborted;
    // narad_moves_unfinished_total{outcome="ended"}: the worker stopped without a flip
    metrics::Counter& ended;
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
