// LogManager: this node's open partition logs, keyed by (topic, partition). Logs are opened on
// demand (a topic that is never used opens nothing) and closed again once idle for `idle_eviction`,
// then reopened transparently by the next get(). Removing a topic closes its logs and deletes its
// data.
//
// Layout (DESIGN.md "Storage"): <data>/topics/<topic>/p%05d/ holds one partition's segments and its
// sidecar files (consumer.offset and others owned by other modules).
//
// Thread-safe. get() may block on disk (recovery) the first time a log is opened.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/clock.h"
#include "io/file_system.h"
#include "storage/partition_log.h"

namespace narad::storage {

enum class CreateIfMissing { no, yes };

class LogManager {
  public:
    LogManager(io::FileSystem& fs, Clock& clock, std::string data_directory, LogOptions options);
    ~LogManager();

    // The directory of a topic and of one of its partitions.
    std::string topic_directory(std::string_view topic) const;
    std::string partition_directory(std::string_view topic, PartitionId partition) const;

    // The open log, opening (and recovering) it if needed. With CreateIfMissing::no, a partition
    // that has no directory yet answers not_found.
    Result<std::shared_ptr<PartitionLog>> get(std::string_view topic, PartitionId partition,
                                              CreateIfMissing create);
    // The log if it is open now; never opens one (metrics use this so they keep nothing warm).
    std::shared_ptr<PartitionLog> get_if_open(std::string_view topic, PartitionId partition) const;

    // Retention for a closed log (the cold retention walk): when the partition's directory shows a
    // sealed segment last written before now - retention, opens the log, deletes what expired and
    // closes it again (unless someone else holds it by then). Does nothing for an open log or a
    // partition without a directory.
    Result<RetentionResult> sweep_closed(std::string_view topic, PartitionId partition,
                                         Millis retention);
    // Closes logs untouched for longer than `idle`; returns how many it closed.
    size_t evict_idle(Millis idle);
    // Closes one partition's log if it is open (a move replaces or hands off its directory);
    // waits up to 5 s for readers still holding it, else fails with unavailable.
    Status close_partition(std::string_view topic, PartitionId partition);
    // Closes every log of the topic and deletes its directory.
    Status remove_topic(std::string_view topic);
    // Closes every log (at shutdown).
    void close_all();

    size_t open_count() const;
    // Called after each append to any log, with (topic, partition, new HWM).
    void set_append_listener(std::function<void(const std::string&, PartitionId, Offset)> listener);

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace narad::storage
