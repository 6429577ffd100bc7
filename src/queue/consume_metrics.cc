#include "queue/consume_metrics.h"

#include <algorithm>

namespace narad::queue {

ConsumeMetrics& consume_metrics() {
    static ConsumeMetrics* instance = [] {
        auto& r = metrics::Registry::global();
        return new ConsumeMetrics{
            .consumed = r.counter("narad_messages_consumed_total", "Messages handed to consumers.",
                                  {"topic", "partition"}),
            .consumed_bytes =
                r.counter("narad_bytes_consumed_total", "Payload bytes handed to consumers.",
                          {"topic", "partition"}),
            .corrupt = r.counter("narad_consumer_corrupt_skipped_total",
                                 "Records skipped because their frame is corrupt.",
                                 {"topic", "partition"}),
            .empty = r.counter("narad_consume_empty_total", "Consumes answered with no message.",
                               {"topic"}),
            .wait = r.histogram("narad_consume_wait_seconds",
                                "Time a consume spent waiting, by outcome.",
                                {0.001, 0.01, 0.1, 0.5, 1, 5, 10, 30, 60}, {"topic", "outcome"}),
            .extended = r.counter("narad_ack_extended_total", "Leases extended.", {"topic"}),
            .nacked = r.counter("narad_nack_total", "Leases released by nack.", {"topic"}),
            .ack_rejected =
                r.counter("narad_ack_rejected_total",
                          "Acks refused because the acked-ahead window is full.", {"reason"}),
            .lag = r.gauge("narad_consumer_lag_messages", "Committed messages not yet acked.",
                           {"topic", "partition"}),
            .dropped = r.gauge("narad_consumer_dropped_messages",
                               "Messages retention deleted before they were acked.",
                               {"topic", "partition"}),
            .oldest_age = r.gauge("narad_oldest_unconsumed_message_age_seconds",
                                  "Age of the segment holding the oldest unacked message.",
                                  {"topic", "partition"}),
            .in_flight = r.gauge("narad_inflight_size", "Leases out.", {"topic", "partition"}),
            .acked_ahead = r.gauge("narad_acked_ahead_size", "Acked offsets above the frontier.",
                                   {"topic", "partition"}),
        };
    }();
    return *instance;
}

void ConsumeMetrics::report_partition(const std::string& topic, uint32_t partition,
                                      const QueueStats& stats, const storage::PartitionLog& log,
                                      uint64_t dropped_messages, WallTime now) {
    metrics::Labels labels{topic, std::to_string(partition)};
    Offset hwm = log.high_watermark();
    lag.with(labels).set(
        hwm > stats.frontier ? static_cast<double>(hwm.distance_from(stats.frontier)) : 0);
    dropped.with(labels).set(static_cast<double>(dropped_messages));
    in_flight.with(labels).set(stats.in_flight);
    acked_ahead.with(labels).set(stats.acked_ahead);
    // Age of the segment holding the oldest unacked message; 0 when everything is acked.
    double age = 0;
    if (stats.frontier < hwm) {
        for (const auto& segment : log.segments()) {
            if (segment.base <= stats.frontier) {
                age = std::chrono::duration<double>(now - segment.modified).count();
            }
        }
    }
    oldest_age.with(labels).set(std::max(0.0, age));
}

void ConsumeMetrics::remove_topic(const std::string& topic) {
    for (auto* family : {&lag, &dropped, &oldest_age, &in_flight, &acked_ahead}) {
        family->remove_prefix({topic});
    }
}

}  // namespace narad::queue
