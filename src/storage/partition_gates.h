// PartitionGates: per partition on this node, the produce lock and the handoff freeze flag a move
// uses (docs/moves.md, "The freeze on the source").
//
// A commit holds the produce lock shared while it checks the flag and appends, so commits still
// share their fsyncs. A freeze takes it exclusively: every commit that passed the check has then
// finished (it is in what the freeze reads next), and every later commit finds the flag and is
// refused with nothing appended. Consume reads the flag before it hands out new leases.
//
// Thread-safe. Entries are created on first use and kept (a few bytes per partition ever used).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "base/ids.h"
#include "base/mutex.h"

namespace narad::storage {

class PartitionGates {
  public:
    struct Gate {
        SharedMutex produce;
        std::atomic<bool> frozen{false};
    };

    std::shared_ptr<Gate> gate(std::string_view topic, PartitionId partition);
    // Whether the partition is frozen now (false for a partition never gated).
    bool frozen(std::string_view topic, PartitionId partition) const;

  private:
    mutable Mutex mutex_;
    std::map<std::pair<std::string, uint32_t>, std::shared_ptr<Gate>, std::less<>> gates_
        GUARDED_BY(mutex_);
};

}  // namespace narad::storage
