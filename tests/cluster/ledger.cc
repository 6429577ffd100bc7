#include "cluster/ledger.h"

#include <gtest/gtest.h>

#include "base/mutex.h"

namespace narad::testing {

Ledger::Ledger(int capacity)
    : capacity_(capacity), accepted_(capacity, 0), delivered_(capacity, 0) {}

void Ledger::accept(int id) {
    MutexLock lock(mutex_);
    // An id the test itself made up out of range is a bug in the test, not in the node.
    EXPECT_TRUE(id >= 0 && id < capacity()) << "accepted id " << id << " outside the ledger";
    if (id < 0 || id >= capacity()) return;
    // Saturate: the counter only tells "accepted at least once".
    if (accepted_[id] == 0) ++accepted_count_;
    accepted_[id] = 1;
}

void Ledger::deliver(int id) {
    MutexLock lock(mutex_);
    if (id < 0 || id >= capacity()) {
        ++strays_;
        return;
    }
    if (delivered_[id]++ == 0) ++delivered_count_;
    ++deliveries_;
}

int Ledger::accepted_count() {
    MutexLock lock(mutex_);
    return accepted_count_;
}

std::vector<int> Ledger::lost() {
    MutexLock lock(mutex_);
    std::vector<int> out;
    for (int id = 0; id < capacity(); ++id) {
        if (accepted_[id] > 0 && delivered_[id] == 0) out.push_back(id);
    }
    return out;
}

int64_t Ledger::deliveries() {
    MutexLock lock(mutex_);
    return deliveries_;
}

int64_t Ledger::duplicates() {
    MutexLock lock(mutex_);
    return deliveries_ - delivered_count_;
}

int64_t Ledger::strays() {
    MutexLock lock(mutex_);
    return strays_;
}

std::string Ledger::summary() {
    std::vector<int> missing = lost();
    MutexLock lock(mutex_);
    return "accepted " + std::to_string(accepted_count_) + ", deliveries " +
           std::to_string(deliveries_) + ", duplicates " +
           std::to_string(deliveries_ - delivered_count_) + ", lost " +
           std::to_string(missing.size()) +
           (missing.empty() ? "" : " (first " + std::to_string(missing.front()) + ")") +
           ", strays " + std::to_string(strays_);
}

void OffsetBook::record(int partition, int64_t offset, int id) {
    MutexLock lock(mutex_);
    auto [it, inserted] = ids_.emplace(std::make_pair(partition, offset), id);
    if (inserted || it->second == id) return;
    ++conflicts_;
    if (samples_.size() < 5) {
        samples_.push_back("partition " + std::to_string(partition) + " offset " +
                           std::to_string(offset) + ": ids " + std::to_string(it->second) +
                           " and " + std::to_string(id));
    }
}

int OffsetBook::conflicts() {
    MutexLock lock(mutex_);
    return conflicts_;
}

std::string OffsetBook::samples() {
    MutexLock lock(mutex_);
    std::string out;
    for (const auto& sample : samples_) out += "\n  " + sample;
    return out;
}

}  // namespace narad::testing
