// Membership: this node's presence in the cluster. It registers the node's member record, and keeps
// a liveness key alive under an etcd lease: while the node runs and reaches etcd the key exists;
// when the node dies or is cut off, the lease expires and the key vanishes, which every replica
// sees (MetaState::live / down_since). If the lease is lost while the node still runs (a long
// pause, an etcd outage), a new lease is granted and the key written again; the lease generation
// changes so the controller, which campaigns with this lease, knows its leadership went with it.
// stop() revokes the lease, so a clean shutdown is seen at once rather than after the TTL.
//
// The owner's self-fence (docs/moves.md, "Owners that fence themselves"): lease_valid() holds only
// until the send time of the last grant or keep-alive etcd acknowledged, plus the lease's TTL, less
// `fence_margin`, on this node's monotonic clock. etcd cannot expire the lease before that moment
// (it counts the TTL from when the request arrived, which is later), so a node that answers
// commits and reservations only while lease_valid() stops before any other node can see it dead.
//
// Thread-safe; start() and stop() block on etcd.
#pragma once

#include <atomic>
#include <memory>

#include "base/mutex.h"
#include "base/periodic.h"
#include "meta/etcd_meta_store.h"

namespace narad::cluster {

struct MembershipOptions {
    int64_t lease_ttl_seconds = 10;
    // Keep it well under the TTL (a third), so one lost keep-alive does not let the lease lapse.
    Millis keep_alive_interval{3'000};
    // How far inside the lease's TTL the self-fence ends (clock rates, scheduling).
    Millis fence_margin{2'000};
};

class Membership {
  public:
    Membership(meta::EtcdMetaStore& store, Clock& clock, meta::MemberInfo self,
               MembershipOptions options);
    ~Membership();  // stops

    // Writes the member record and the liveness key, then keeps the key alive.
    Status start();
    // Revokes the lease: the liveness key goes now.
    void stop();

    // The current lease (0 before start or after stop).
    int64_t lease() const { return lease_.load(); }
    // Increases each time the lease is replaced.
    uint64_t generation() const { return generation_.load(); }
    // Whether this node's liveness lease is known valid now (see the file comment).
    bool lease_valid() const;
    const meta::MemberInfo& self() const { return self_; }

  private:
    // Grants a lease and writes the liveness key under it; with Resync::yes (a lost lease
    // replaced) the self-fence opens only once the replica has caught up (EtcdMetaStore::sync).
    enum class Resync { no, yes };
    Status attach(Resync resync) REQUIRES(mutex_);
    void keep_alive();

    // Records a grant or keep-alive sent at `sent` and acknowledged with `ttl_seconds`.
    void acknowledged(MonoTime sent, int64_t ttl_seconds);

    meta::EtcdMetaStore& store_;
    Clock& clock_;
    meta::MemberInfo self_;
    MembershipOptions options_;
    Mutex mutex_;  // serializes attach/keep_alive/stop
    std::atomic<int64_t> lease_{0};
    std::atomic<uint64_t> generation_{0};
    std::atomic<int64_t> valid_until_ns_{0};  // steady-clock nanoseconds
    bool resync_pending_ GUARDED_BY(mutex_) = false;
    std::unique_ptr<PeriodicTask> keeper_;
};

}  // namespace narad::cluster
