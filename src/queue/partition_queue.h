// PartitionQueue: the consumer state of one partition on its owner node: which offsets are leased
// out (in flight), which are acked, and where the frontier is (every offset below it is acked).
//
// Delivery is at-least-once: reserve() hands out the lowest offsets that are neither acked nor
// leased, each under a lease that lasts the topic's visibility timeout. ack() settles an offset;
// extend() restarts its lease; nack() ends the lease at once so the offset is delivered again
// (first). A lease that runs out makes its offset deliverable again; acking, extending or nacking
// it afterwards answers Errc::gone, as does any handle that does not name the current lease of that
// offset.
//
// Flow control, as Narad: at most `max_in_flight` leases at once (reserve returns nothing beyond);
// at most `max_acked_ahead` acked offsets above the frontier gate delivery: while the window is
// full reserve() hands out only the offset that blocks the frontier. Acks are always accepted, so
// the set may pass the cap by the leases already out (never by more).
//
// Only the frontier and the acked-ahead set are persisted (by the OffsetCommitter): after a crash,
// leased and unacked offsets are delivered again and acked ones may be, but none is skipped.
//
// Thread-safe: every method takes the queue's own mutex; none blocks on I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/ids.h"
#include "base/mutex.h"
#include "base/status.h"

namespace narad::queue {

struct QueueLimits {
    Millis visibility_timeout{30'000};
    uint32_t max_in_flight = 1024;
    uint32_t max_acked_ahead = 1024;
    // Dead letters: an offset whose lease ends without an ack (nack or lapse) on its
    // max_deliveries-th delivery is not delivered again but set aside as exhausted until its dead
    // letter is durable (0: deliver forever).
    uint32_t max_deliveries = 0;
};

// An offset set aside for the dead-letter topic.
struct Exhausted {
    Offset offset;
    uint32_t deliveries = 0;
    std::string reason;  // the last nack's reason, if one was given
};
inline constexpr size_t kMaxNackReasonBytes = 256;

// What survives a restart: every offset below `frontier` is acked, and so is each of `acked_ahead`
// (sorted, all >= frontier).
struct ConsumerPosition {
    Offset frontier;
    std::vector<Offset> acked_ahead;

    bool operator==(const ConsumerPosition&) const = default;
};

// A lease on one offset.
struct Lease {
    Offset offset;
    LeaseId lease_id;
    MonoTime deadline;
    uint32_t delivery = 1;  // 1 for the first delivery, 2 for the first redelivery, ...
};

struct QueueStats {
    uint32_t in_flight = 0;
    uint32_t acked_ahead = 0;
    Offset frontier;
    Offset next_unread;  // lowest offset never handed out
};

class PartitionQueue {
  public:
    PartitionQueue(Clock& clock, ConsumerPosition start, QueueLimits limits);

    void set_limits(QueueLimits limits);

    // Leases up to `max` deliverable offsets below `high_watermark`, lowest first (redeliveries of
    // nacked or lapsed offsets come before new ones). Empty when nothing is deliverable or the
    // in-flight cap is reached.
    std::vector<Lease> reserve(Offset high_watermark, size_t max);

    Status ack(Offset offset, LeaseId lease_id);
    // Restarts the lease's visibility window; returns the new deadline.
    Result<MonoTime> extend(Offset offset, LeaseId lease_id);
    // `reason` (at most kMaxNackReasonBytes are kept) goes with the offset's dead letter.
    Status nack(Offset offset, LeaseId lease_id, std::string_view reason = {});

    // The offsets waiting for their dead letter, lowest first.
    std::vector<Exhausted> exhausted() const;
    // Settles an exhausted offset once its dead letter is durable; false when it no longer waits
    // (retention or a skip settled it meanwhile).
    bool settle_exhausted(Offset offset);

    // Settles an offset without a consumer: its frame is corrupt and will never be readable. Works
    // whether or not it is leased, and ignores the acked-ahead cap.
    void skip(Offset offset);
    // Settles every offset below `oldest`: retention deleted them (their records are gone).
    void skip_below(Offset oldest);

    // Ends lapsed leases now; returns how many lapsed (so the caller can wake waiting consumers).
    // reserve() also does this lazily.
    size_t expire_leases();
    // The earliest lease deadline, if any lease is out.
    std::optional<MonoTime> next_deadline() const;

    ConsumerPosition position() const;
    // Changes whenever the persisted position changes, so the committer can skip unchanged queues.
    uint64_t position_version() const;
    QueueStats stats() const;

  private:
    // Why a lease check failed, or the lease it found.
    Result<Lease*> find_lease_locked(Offset offset, LeaseId lease_id) REQUIRES(mutex_);
    void end_lease_locked(const Lease& lease) REQUIRES(mutex_);
    Lease grant_lease_locked(Offset offset, uint32_t delivery) REQUIRES(mutex_);
    size_t expire_leases_locked() REQUIRES(mutex_);
    // An ended lease's offset: delivered again, or set aside once it has had its deliveries.
    void requeue_locked(Offset offset, uint32_t delivered) REQUIRES(mutex_);
    // Marks `offset` acked (it is not yet) and moves the frontier over acked offsets.
    void settle_locked(Offset offset) REQUIRES(mutex_);
    void advance_frontier_locked() REQUIRES(mutex_);

    Clock& clock_;
    mutable Mutex mutex_;
    QueueLimits limits_ GUARDED_BY(mutex_);
    // Every offset below frontier_ is acked; frontier_ itself never is.
    Offset frontier_ GUARDED_BY(mutex_);
    // Acked offsets above the frontier (all > frontier_).
    std::set<Offset> acked_ahead_ GUARDED_BY(mutex_);
    // Leased offsets, and the same leases ordered by deadline for expiry.
    std::unordered_map<Offset, Lease> in_flight_ GUARDED_BY(mutex_);
    std::set<std::pair<MonoTime, Offset>> by_deadline_ GUARDED_BY(mutex_);
    // Offsets handed out before whose lease ended without an ack (nack or lapse), with how many
    // times each was delivered; delivered again before any new offset.
    std::map<Offset, uint32_t> redeliver_ GUARDED_BY(mutex_);
    // Offsets that had max_deliveries deliveries, waiting for their dead letter (with how many).
    std::map<Offset, uint32_t> exhausted_ GUARDED_BY(mutex_);
    // The last nack reason given per unsettled offset.
    std::map<Offset, std::string> reasons_ GUARDED_BY(mutex_);
    // The lowest offset never handed out (>= frontier_). Every offset in [frontier_, next_unread_)
    // is exactly one of: acked ahead, in flight, waiting for redelivery, exhausted. Offsets at or
    // above it may also be acked ahead (skip() of a frame never handed out); reserve() steps over
    // those.
    Offset next_unread_ GUARDED_BY(mutex_);
    uint64_t next_lease_id_ GUARDED_BY(mutex_);
    uint64_t position_version_ GUARDED_BY(mutex_) = 0;
};

}  // namespace narad::queue
