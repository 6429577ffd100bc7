// The message ledger of the multi-process tests: which message ids got a 202 and how often each
// came back, so a test can report lost messages (accepted, never delivered) and duplicates
// (delivered more than once). Ids run from 0 to capacity - 1; a delivered id outside that range
// is someone else's message (a bug) and is counted as a stray. The ledger owns its counts; any
// thread may call any method (one mutex guards everything).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/mutex.h"

namespace narad::testing {

class Ledger {
  public:
    explicit Ledger(int capacity);

    int capacity() const { return capacity_; }
    // The node answered 202 for message `id` (0 <= id < capacity).
    void accept(int id);
    // A consumer got message `id` back.
    void deliver(int id);

    // Distinct ids accepted.
    int accepted_count();
    // Accepted (202) but never delivered, in id order.
    std::vector<int> lost();
    bool nothing_lost() { return lost().empty(); }
    // Deliveries of ids inside the ledger, repeats included.
    int64_t deliveries();
    // Deliveries beyond the first of each id.
    int64_t duplicates();
    int64_t strays();
    // "accepted A, deliveries D, duplicates U, lost L (first F), strays S".
    std::string summary();

  private:
    Mutex mutex_;
    const int capacity_;
    std::vector<uint8_t> accepted_ GUARDED_BY(mutex_);    // size fixed at construction
    std::vector<uint32_t> delivered_ GUARDED_BY(mutex_);  // size fixed at construction
    int accepted_count_ GUARDED_BY(mutex_) = 0;
    int delivered_count_ GUARDED_BY(mutex_) = 0;
    int64_t deliveries_ GUARDED_BY(mutex_) = 0;
    int64_t strays_ GUARDED_BY(mutex_) = 0;
};

// Which message each (partition, offset) delivered: one offset holding two different messages is a
// divergence a move must never cause (never two owners writing one partition). Thread-safe.
class OffsetBook {
  public:
    void record(int partition, int64_t offset, int id);
    // Offsets seen with two different ids, with a few samples.
    int conflicts();
    std::string samples();

  private:
    Mutex mutex_;
    std::map<std::pair<int, int64_t>, int> ids_ GUARDED_BY(mutex_);
    int conflicts_ GUARDED_BY(mutex_) = 0;
    std::vector<std::string> samples_ GUARDED_BY(mutex_);
};

}  // namespace narad::testing
