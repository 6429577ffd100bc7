#include "storage/partition_gates.h"

#include "base/mutex.h"

namespace narad::storage {

std::shared_ptr<PartitionGates::Gate> PartitionGates::gate(std::string_view topic,
                                                           PartitionId partition) {
    MutexLock lock(mutex_);
    auto& entry = gates_[{std::string(topic), partition.value()}];
    if (!entry) entry = std::make_shared<Gate>();
    return entry;
}

bool PartitionGates::frozen(std::string_view topic, PartitionId partition) const {
    MutexLock lock(mutex_);
    auto it = gates_.find(std::make_pair(std::string(topic), partition.value()));
    return it != gates_.end() && it->second->frozen.load();
}

}  // namespace narad::storage
