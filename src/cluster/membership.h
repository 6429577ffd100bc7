// Membership: this node's presence in the cluster. It registers the node's member record, and keeps
// a liveness key alive under an etcd lease: while the node runs and reaches etcd the key exists;
// when the node dies or is cut off, the lease expires and the key vanishes, which every replica
// sees (MetaState::live / down_since). If the lease is lost while the node still runs (a long
// pause, an etcd outage), a new lease is granted and the key written again; the lease generation
// changes so the controller, which campaigns with this lease, knows its leadership went with it.
// stop() revokes the lease, so a clean shutdown is seen at once rather than after the TTL.
//
// Thread-safe; start() and stop() block on etcd.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "base/periodic.h"
#include "meta/etcd_meta_store.h"

namespace narad::cluster {

struct MembershipOptions {
    int64_t lease_ttl_seconds = 10;
    // Keep it well under the TTL (a third), so one lost keep-alive does not let the lease lapse.
    Millis keep_alive_interval{3'000};
};

class Membership {
  public:
    Membership(meta::EtcdMetaStore& store, meta::MemberInfo self, MembershipOptions options);
    ~Membership();  // stops

    // Writes the member record and the liveness key, then keeps the key alive.
    Status start();
    // Revokes the lease: the liveness key goes now.
    void stop();

    // The current lease (0 before start or after stop).
    int64_t lease() const { return lease_.load(); }
    // Increases each time the lease is replaced.
    uint64_t generation() const { return generation_.load(); }
    const meta::MemberInfo& self() const { return self_; }

  private:
    // Grants a lease and writes the liveness key under it.
    Status attach();
    void keep_alive();

    meta::EtcdMetaStore& store_;
    meta::MemberInfo self_;
    MembershipOptions options_;
    std::mutex mutex_;  // serializes attach/keep_alive/stop
    std::atomic<int64_t> lease_{0};
    std::atomic<uint64_t> generation_{0};
    std::unique_ptr<PeriodicTask> keeper_;
};

}  // namespace narad::cluster
