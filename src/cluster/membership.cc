#include "cluster/membership.h"

#include "base/log.h"
#include "base/mutex.h"

namespace narad::cluster {

Membership::Membership(meta::EtcdMetaStore& store, Clock& clock, meta::MemberInfo self,
                       MembershipOptions options)
    : store_(store), clock_(clock), self_(std::move(self)), options_(options) {}

bool Membership::lease_valid() const {
    return clock_.now().time_since_epoch().count() < valid_until_ns_.load();
}

void Membership::acknowledged(MonoTime sent, int64_t ttl_seconds) {
    MonoTime until = sent + std::chrono::seconds(ttl_seconds) - options_.fence_margin;
    int64_t ns = until.time_since_epoch().count();
    // Never shortened by a late answer to an older request.
    int64_t known = valid_until_ns_.load();
    while (ns > known && !valid_until_ns_.compare_exchange_weak(known, ns)) {
    }
}

Membership::~Membership() { stop(); }

Status Membership::start() {
    NARAD_RETURN_IF_ERROR(store_.put_member(self_).with_context("registering this node"));
    {
        MutexLock lock(mutex_);
        NARAD_RETURN_IF_ERROR(attach(Resync::no).with_context("writing this node's liveness key"));
    }
    keeper_ = std::make_unique<PeriodicTask>("narad-liveness", clock_, options_.keep_alive_interval,
                                             [this] { keep_alive(); });
    keeper_->start();
    return Status::ok();
}

void Membership::stop() {
    if (keeper_) keeper_->stop();
    keeper_.reset();
    MutexLock lock(mutex_);
    int64_t lease = lease_.exchange(0);
    valid_until_ns_ = 0;
    if (lease == 0) return;
    Status revoked = store_.client().lease_revoke(lease);
    if (!revoked.is_ok()) {
        NARAD_LOG_WARN("revoking the liveness lease failed ({}); it expires in {} s",
                       revoked.to_string(), options_.lease_ttl_seconds);
    }
}

Status Membership::attach(Resync resync) {
    meta::EtcdClient& client = store_.client();
    MonoTime sent = clock_.now();
    NARAD_ASSIGN_OR_RETURN(int64_t lease, client.lease_grant(options_.lease_ttl_seconds));
    auto put = client.put(store_.keys().live(self_.id), "alive", lease);
    if (!put.is_ok()) {
        (void)client.lease_revoke(lease);
        return put.status();
    }
    // A new lease: the old one's validity no longer counts (it may be gone). After a lapse the
    // node may have lost partitions meanwhile (a force-promote elsewhere): it acts as an owner
    // again only once its replica has caught up with everything committed until now.
    valid_until_ns_ = 0;
    lease_ = lease;
    ++generation_;
    resync_pending_ = resync == Resync::yes;
    if (resync_pending_ && !store_.sync().is_ok()) return Status::ok();  // next keep-alive
    resync_pending_ = false;
    acknowledged(sent, options_.lease_ttl_seconds);
    return Status::ok();
}

void Membership::keep_alive() {
    MutexLock lock(mutex_);
    int64_t lease = lease_.load();
    if (lease != 0) {
        MonoTime sent = clock_.now();
        auto ttl = store_.client().lease_keep_alive(lease);
        if (ttl.is_ok()) {
            if (resync_pending_) {
                if (!store_.sync().is_ok()) return;  // the fence stays closed
                resync_pending_ = false;
            }
            if (*ttl > 0) acknowledged(sent, *ttl);
            return;
        }
        if (ttl.code() != Errc::not_found) {
            NARAD_LOG_WARN("keeping the liveness lease alive failed: {}", ttl.status().to_string());
            return;
        }
        NARAD_LOG_WARN("the liveness lease expired; writing the liveness key under a new lease");
    }
    Status attached = attach(Resync::yes);
    if (!attached.is_ok()) {
        lease_ = 0;
        NARAD_LOG_WARN("re-attaching the liveness key failed: {}", attached.to_string());
    }
}

}  // namespace narad::cluster
