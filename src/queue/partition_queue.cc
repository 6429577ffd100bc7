#include "queue/partition_queue.h"

#include <algorithm>
#include <random>

#include "base/mutex.h"

namespace narad::queue {
namespace {

// A random start, so lease ids (and the receipt handles built from them) never repeat across
// restarts of the node, which keep no record of the ids they handed out.
uint64_t random_lease_id_seed() {
    std::random_device device;
    // 62 bits: handles stay within a signed 64-bit integer for clients that parse them.
    uint64_t seed = ((static_cast<uint64_t>(device()) << 32) ^ device()) & ((1ull << 62) - 1);
    return seed == 0 ? 1 : seed;
}

}  // namespace

PartitionQueue::PartitionQueue(Clock& clock, ConsumerPosition start, QueueLimits limits)
    : clock_(clock),
      limits_(limits),
      frontier_(start.frontier),
      next_unread_(start.frontier),
      next_lease_id_(random_lease_id_seed()) {
    for (Offset offset : start.acked_ahead) {
        if (offset >= frontier_) acked_ahead_.insert(offset);
    }
    // An acked offset at the frontier moves it: keeps "frontier_ is never acked" true.
    advance_frontier_locked();
}

void PartitionQueue::set_limits(QueueLimits limits) {
    MutexLock lock(mutex_);
    limits_ = limits;
    if (limits_.max_deliveries == 0) {
        // Dead letters turned off: what waited for one is delivered again.
        redeliver_.insert(exhausted_.begin(), exhausted_.end());
        exhausted_.clear();
    }
}

std::vector<Lease> PartitionQueue::reserve(Offset high_watermark, size_t max) {
    MutexLock lock(mutex_);
    expire_leases_locked();
    std::vector<Lease> leases;
    if (in_flight_.size() >= limits_.max_in_flight) return leases;
    size_t budget = std::min<size_t>(max, limits_.max_in_flight - in_flight_.size());
    if (budget == 0) return leases;

    if (acked_ahead_.size() >= limits_.max_acked_ahead) {
        // Window full: no ack but the frontier's can succeed, so hand out only the offset that
        // blocks the frontier; its ack frees the window.
        if (frontier_ >= high_watermark || in_flight_.contains(frontier_) ||
            exhausted_.contains(frontier_)) {
            return leases;
        }
        if (auto it = redeliver_.find(frontier_); it != redeliver_.end()) {
            uint32_t delivered = it->second;
            redeliver_.erase(it);
            leases.push_back(grant_lease_locked(frontier_, delivered + 1));
        } else {
            NARAD_ASSERT(frontier_ == next_unread_, "frontier neither leased, queued nor unread");
            leases.push_back(grant_lease_locked(frontier_, 1));
            next_unread_ = next_unread_.next();
        }
        return leases;
    }

    // Redeliveries are all below next_unread_, so taking them first is also lowest first.
    while (leases.size() < budget && !redeliver_.empty() &&
           redeliver_.begin()->first < high_watermark) {
        auto [offset, delivered] = *redeliver_.begin();
        redeliver_.erase(redeliver_.begin());
        leases.push_back(grant_lease_locked(offset, delivered + 1));
    }
    while (leases.size() < budget && next_unread_ < high_watermark) {
        Offset offset = next_unread_;
        next_unread_ = next_unread_.next();
        if (acked_ahead_.contains(offset)) continue;  // skipped before it was ever handed out
        leases.push_back(grant_lease_locked(offset, 1));
    }
    return leases;
}

Status PartitionQueue::ack(Offset offset, LeaseId lease_id) {
    MutexLock lock(mutex_);
    expire_leases_locked();
    auto found = find_lease_locked(offset, lease_id);
    if (!found.is_ok()) return found.status();
    // Always accepted (Narad since 2.2): the cap gates delivery instead (reserve), so the set
    // holds at most max_acked_ahead plus the leases already out.
    end_lease_locked(**found);
    settle_locked(offset);
    return Status::ok();
}

Result<MonoTime> PartitionQueue::extend(Offset offset, LeaseId lease_id) {
    MutexLock lock(mutex_);
    expire_leases_locked();
    NARAD_ASSIGN_OR_RETURN(Lease * lease, find_lease_locked(offset, lease_id));
    by_deadline_.erase({lease->deadline, offset});
    lease->deadline = clock_.now() + limits_.visibility_timeout;
    by_deadline_.emplace(lease->deadline, offset);
    return lease->deadline;
}

Status PartitionQueue::nack(Offset offset, LeaseId lease_id, std::string_view reason) {
    MutexLock lock(mutex_);
    expire_leases_locked();
    NARAD_ASSIGN_OR_RETURN(Lease * lease, find_lease_locked(offset, lease_id));
    uint32_t delivered = lease->delivery;
    end_lease_locked(*lease);
    if (!reason.empty()) reasons_[offset] = std::string(reason.substr(0, kMaxNackReasonBytes));
    requeue_locked(offset, delivered);
    return Status::ok();
}

std::vector<Exhausted> PartitionQueue::exhausted() const {
    MutexLock lock(mutex_);
    std::vector<Exhausted> out;
    for (const auto& [offset, deliveries] : exhausted_) {
        auto reason = reasons_.find(offset);
        out.push_back({offset, deliveries, reason == reasons_.end() ? "" : reason->second});
    }
    return out;
}

bool PartitionQueue::settle_exhausted(Offset offset) {
    MutexLock lock(mutex_);
    if (exhausted_.erase(offset) == 0) return false;
    settle_locked(offset);
    return true;
}

void PartitionQueue::requeue_locked(Offset offset, uint32_t delivered) {
    if (limits_.max_deliveries > 0 && delivered >= limits_.max_deliveries) {
        exhausted_.emplace(offset, delivered);
    } else {
        redeliver_.emplace(offset, delivered);
    }
}

void PartitionQueue::skip(Offset offset) {
    MutexLock lock(mutex_);
    if (offset < frontier_ || acked_ahead_.contains(offset)) return;
    if (auto it = in_flight_.find(offset); it != in_flight_.end()) end_lease_locked(it->second);
    redeliver_.erase(offset);
    exhausted_.erase(offset);
    settle_locked(offset);
}

void PartitionQueue::skip_below(Offset oldest) {
    MutexLock lock(mutex_);
    if (oldest <= frontier_) return;
    frontier_ = oldest;
    acked_ahead_.erase(acked_ahead_.begin(), acked_ahead_.lower_bound(oldest));
    redeliver_.erase(redeliver_.begin(), redeliver_.lower_bound(oldest));
    exhausted_.erase(exhausted_.begin(), exhausted_.lower_bound(oldest));
    reasons_.erase(reasons_.begin(), reasons_.lower_bound(oldest));
    for (auto it = by_deadline_.begin(); it != by_deadline_.end();) {
        if (it->second < oldest) {
            in_flight_.erase(it->second);
            it = by_deadline_.erase(it);
        } else {
            ++it;
        }
    }
    next_unread_ = std::max(next_unread_, oldest);
    advance_frontier_locked();
    ++position_version_;
}

size_t PartitionQueue::expire_leases() {
    MutexLock lock(mutex_);
    return expire_leases_locked();
}

std::optional<MonoTime> PartitionQueue::next_deadline() const {
    MutexLock lock(mutex_);
    if (by_deadline_.empty()) return std::nullopt;
    return by_deadline_.begin()->first;
}

ConsumerPosition PartitionQueue::position() const {
    MutexLock lock(mutex_);
    return ConsumerPosition{frontier_,
                            std::vector<Offset>(acked_ahead_.begin(), acked_ahead_.end())};
}

uint64_t PartitionQueue::position_version() const {
    MutexLock lock(mutex_);
    return position_version_;
}

QueueStats PartitionQueue::stats() const {
    MutexLock lock(mutex_);
    return QueueStats{
        .in_flight = static_cast<uint32_t>(in_flight_.size()),
        .acked_ahead = static_cast<uint32_t>(acked_ahead_.size()),
        .frontier = frontier_,
        .next_unread = next_unread_,
    };
}

Result<Lease*> PartitionQueue::find_lease_locked(Offset offset, LeaseId lease_id) {
    // Lapsed leases were ended by the caller's expire_leases_locked(), so a lease found here is
    // live; any other handle (unknown, superseded, lapsed) is gone.
    auto it = in_flight_.find(offset);
    if (it == in_flight_.end() || it->second.lease_id != lease_id) {
        return Status(Errc::gone, "lease on offset " + std::to_string(offset.value()) +
                                      " lapsed or was never held");
    }
    return &it->second;
}

void PartitionQueue::end_lease_locked(const Lease& lease) {
    by_deadline_.erase({lease.deadline, lease.offset});
    in_flight_.erase(lease.offset);  // destroys `lease`: last
}

Lease PartitionQueue::grant_lease_locked(Offset offset, uint32_t delivery) {
    uint64_t id = next_lease_id_++;
    if (id == 0) id = next_lease_id_++;  // 0 means "no lease" in handles; skip it on wrap-around
    Lease lease{offset, LeaseId(id), clock_.now() + limits_.visibility_timeout, delivery};
    in_flight_.emplace(offset, lease);
    by_deadline_.emplace(lease.deadline, offset);
    return lease;
}

size_t PartitionQueue::expire_leases_locked() {
    MonoTime now = clock_.now();
    size_t lapsed = 0;
    while (!by_deadline_.empty() && by_deadline_.begin()->first <= now) {
        Offset offset = by_deadline_.begin()->second;
        by_deadline_.erase(by_deadline_.begin());
        auto it = in_flight_.find(offset);
        NARAD_ASSERT(it != in_flight_.end(), "deadline without a lease");
        uint32_t delivered = it->second.delivery;
        in_flight_.erase(it);
        requeue_locked(offset, delivered);
        ++lapsed;
    }
    return lapsed;
}

void PartitionQueue::settle_locked(Offset offset) {
    reasons_.erase(offset);
    if (offset == frontier_) {
        frontier_ = frontier_.next();
        advance_frontier_locked();
    } else {
        acked_ahead_.insert(offset);
    }
    ++position_version_;
}

void PartitionQueue::advance_frontier_locked() {
    while (!acked_ahead_.empty() && *acked_ahead_.begin() == frontier_) {
        acked_ahead_.erase(acked_ahead_.begin());
        frontier_ = frontier_.next();
    }
    next_unread_ = std::max(next_unread_, frontier_);
}

}  // namespace narad::queue
