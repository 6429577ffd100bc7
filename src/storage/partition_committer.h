// PartitionCommitter: where a batch of records for one partition is committed: this node's
// partition log, or the partition's owner in a cluster. Shared by everything that commits records
// it did not receive from a producer's HTTP call: the ingress WAL's dispatcher, the fan-out engine
// (copies into child partitions) and the dead-letterer. Header only.
#pragma once

#include <span>
#include <string>

#include "base/ids.h"
#include "base/status.h"
#include "storage/record.h"

namespace narad::storage {

class PartitionCommitter {
  public:
    virtual ~PartitionCommitter() = default;
    // Commits the records (all for `topic`/`partition`, incarnation `incarnation`) as one batch,
    // durably. Must be idempotent by producer stamp. Errc::not_found means the topic, partition or
    // incarnation is gone and the records are to be dropped; any other error means "retry later".
    // May block on disk and peers.
    virtual Status commit(const std::string& topic, const std::string& incarnation,
                          PartitionId partition, std::span<const Record> records) = 0;
};

}  // namespace narad::storage
