// ProduceGate: a draining node refuses client produce (503 with Retry-After: 1, so the client's
// retry goes to another node) and counts the produces it admitted and has not answered yet. The
// controller removes a drained node only once it reports the drain applied, none in flight and
// an empty ingress WAL (docs/decommission.md). admit() counts before it reads the flag, so a
// status that reads the flag set and then a count of 0 has seen every admitted produce answered.
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>

namespace narad::api {

class ProduceGate {
  public:
    // Counts a client produce unless the node is draining; false: refuse it (nothing counted).
    bool admit() {
        in_flight_.fetch_add(1);
        if (!draining_.load()) return true;
        in_flight_.fetch_sub(1);
        return false;
    }
    // An admitted produce was answered.
    void answered() { in_flight_.fetch_sub(1); }

    void set_draining(bool draining) { draining_.store(draining); }
    bool draining() const { return draining_.load(); }
    uint64_t in_flight() const { return in_flight_.load(); }

  private:
    std::atomic<bool> draining_{false};
    std::atomic<uint64_t> in_flight_{0};
};

}  // namespace narad::api
