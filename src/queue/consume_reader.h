// ConsumeReader: the read path of a consume. One pass over a topic's partitions (or the one
// asked for) that reserves what can be delivered now and reads those records from the partition
// logs; and the read-only replay of one offset.
//
// A topic-wide consume starts at a different partition each time (rotating), so no partition
// starves. A corrupt record is skipped and counted; records retention deleted before they were
// consumed are skipped and counted as dropped. A reservation the response's byte budget cannot
// carry is handed back at once.
//
// Thread-safe. Each call reads partition logs and may open them, so it runs on a reader thread,
// never on an HTTP I/O thread; it never waits for messages (LongPolls parks).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "base/mutex.h"
#include "base/status.h"
#include "meta/meta_store.h"
#include "queue/consume_metrics.h"
#include "queue/partition_queues.h"
#include "storage/log_manager.h"

namespace narad::queue {

struct Delivery {
    PartitionId partition;
    Offset offset;
    std::string key;
    std::string value;
    int64_t timestamp_ms = 0;
    LeaseId lease_id;  // none (0) for a read-only replay
};

struct ConsumeRequest {
    std::string topic;
    std::optional<PartitionId> partition;  // only this partition
    uint32_t max = 1;                      // messages wanted (batch consume)
    Millis wait{0};                        // long-poll up to this long
};

class ConsumeReader {
  public:
    // Which partitions may hand out new leases: in a cluster, those this node owns and that are
    // not frozen for a move. Unset: every partition with a local log.
    using ServingFilter =
        std::function<bool(const meta::MetaState&, std::string_view topic, PartitionId)>;

    // `max_batch_bytes`: bytes of keys and values one pass reserves (the record that crosses the
    // bound is kept).
    ConsumeReader(meta::MetaStore& store, storage::LogManager& logs, PartitionQueues& queues,
                  ConsumeMetrics& metrics, uint64_t max_batch_bytes);

    // Set once, before the first reserve().
    void set_serving_filter(ServingFilter filter);

    // Reserves and reads up to request.max messages that can be delivered now; empty when none
    // can (request.wait is not looked at).
    Result<std::vector<Delivery>> reserve(const ConsumeRequest& request);
    // Reads one record without reserving it: nullopt at or past the high watermark; gone if
    // retention deleted it or it cannot be read.
    Result<std::optional<Delivery>> replay(std::string_view topic, PartitionId partition,
                                           Offset offset);

  private:
    Status take_from(const meta::Topic& topic, PartitionId partition, storage::PartitionLog& log,
                     PartitionQueue& queue, size_t want, uint64_t& bytes,
                     std::vector<Delivery>& out);
    uint32_t next_start(const std::string& topic, uint32_t partitions);

    meta::MetaStore& store_;
    storage::LogManager& logs_;
    PartitionQueues& queues_;
    ConsumeMetrics& metrics_;
    const uint64_t max_batch_bytes_;
    ServingFilter serving_;  // set before the first reserve(), then only read

    Mutex cursor_mutex_;
    std::map<std::string, uint32_t> cursors_ GUARDED_BY(cursor_mutex_);
};

}  // namespace narad::queue
