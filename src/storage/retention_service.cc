#include "storage/retention_service.h"

#include <malloc.h>

#include "base/log.h"

namespace narad::storage {

RetentionService::RetentionService(Clock& clock, LogManager& logs, Topics topics,
                                   RetentionOptions options)
    : clock_(clock),
      logs_(logs),
      topics_(std::move(topics)),
      options_(options),
      loop_("narad-retention", clock, options.check_interval, [this] { run_once(); }) {}

RetentionService::~RetentionService() { stop(); }

void RetentionService::start() { loop_.start(); }

void RetentionService::stop() { loop_.stop(); }

void RetentionService::run_once() {
    MonoTime now = clock_.now();
    Millis walk = options_.cold_walk_interval;
    bool cold_walk = walk > Millis(0) && (!last_cold_walk_ || now - *last_cold_walk_ >= walk);
    if (cold_walk) last_cold_walk_ = now;
    for (const TopicRetention& topic : topics_()) {
        if (topic.retention <= Millis(0)) continue;  // kept forever
        for (uint32_t p = 0; p < topic.partitions; ++p) {
            Result<RetentionResult> result = RetentionResult{};
            if (auto log = logs_.get_if_open(topic.topic, PartitionId(p))) {
                result = log->enforce_retention(topic.retention);
            } else if (cold_walk) {
                result = logs_.sweep_closed(topic.topic, PartitionId(p), topic.retention);
            }
            if (!result.is_ok()) {
                NARAD_LOG_WARN("retention of {}/{} failed: {}", topic.topic, p,
                               result.status().to_string());
            } else if (result->segments_deleted > 0) {
                NARAD_LOG_INFO("retention deleted {} segments ({} records) of {}/{}",
                               result->segments_deleted, result->records_deleted, topic.topic, p);
            }
        }
    }
    if (options_.idle_eviction > Millis(0)) logs_.evict_idle(options_.idle_eviction);
    // Give back what was freed since the last pass (closed connections, evicted logs, the
    // buffers of a burst): glibc keeps freed pages in its arenas, so without this the RSS stays
    // at its high-water mark however little the node holds now.
    ::malloc_trim(0);
}

}  // namespace narad::storage
