// LocalCommitter: the PartitionCommitter of a single node: it appends the dispatcher's batches to
// this node's partition logs. Under the topic's guard it re-checks that the topic (and the same
// incarnation) still exists, prepares the topic directory's incarnation marker, and appends with
// the commit time as each record's timestamp (as Narad does). With PartitionGates, a partition
// frozen for a move refuses the commit with Errc::frozen and appends nothing (the check runs under
// the partition's produce lock). With an owner fence set (the node's liveness lease, docs/moves.md
// "Owners that fence themselves"), a commit is refused before it appends while the fence says no;
// the same check runs again after the fsync (LogOptions::before_publish, wired by node/). Refused
// commits are Errc::unavailable: the dispatcher keeps the records. Thread-safe; blocks on disk.
#pragma once

#include <set>

#include "base/clock.h"
#include "base/mutex.h"
#include "meta/meta_store.h"
#include "storage/log_manager.h"
#include "storage/partition_gates.h"
#include "storage/topic_directory.h"
#include "wal/dispatcher.h"

namespace narad::wal {

class LocalCommitter final : public PartitionCommitter {
  public:
    LocalCommitter(io::FileSystem& fs, Clock& clock, meta::MetaStore& store,
                   storage::LogManager& logs, storage::TopicGuards& guards,
                   storage::PartitionGates* gates = nullptr);

    Status commit(const std::string& topic, const std::string& incarnation, PartitionId partition,
                  std::span<const storage::Record> records) override;
    // Set before commits flow; ok while this node may commit to the partitions it owns.
    void set_owner_fence(std::function<Status()> fence) { owner_fence_ = std::move(fence); }

  private:
    io::FileSystem& fs_;
    Clock& clock_;
    meta::MetaStore& store_;
    storage::LogManager& logs_;
    storage::TopicGuards& guards_;
    storage::PartitionGates* gates_;
    std::function<Status()> owner_fence_;
    Mutex mutex_;
    std::set<std::pair<std::string, std::string>> prepared_
        GUARDED_BY(mutex_);  // (topic, incarnation)
};

}  // namespace narad::wal
