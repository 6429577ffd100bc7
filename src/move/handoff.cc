#include "move/handoff.h"

#include "base/failpoint.h"
#include "base/log.h"
#include "base/mutex.h"
#include "base/random.h"
#include "fanout/cursor_file.h"
#include "move/marker.h"
#include "queue/consumer_offset_file.h"
#include "storage/segment_scan.h"

namespace narad::move {
namespace {

int64_t wall_ns(WallTime time) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

std::string describe(const std::string& topic, PartitionId partition) {
    return "'" + topic + "' partition " + std::to_string(partition.value());
}

}  // namespace

HandoffService::HandoffService(Clock& clock, io::FileSystem& fs, meta::MetaStore& store,
                               NodeId self, storage::LogManager& logs,
                               storage::PartitionGates& gates, queue::ConsumeService& consume,
                               HandoffOptions options)
    : clock_(clock),
      fs_(fs),
      store_(store),
      self_(std::move(self)),
      logs_(logs),
      gates_(gates),
      consume_(consume),
      options_(options) {
    options_.lease_drain = std::min(options_.lease_drain, options_.freeze_ttl / 4);
}

Status HandoffService::check_owner(const std::string& topic, PartitionId partition) const {
    meta::MetaSnapshot view = store_.snapshot();
    const meta::Topic* record = view->find_topic(topic);
    if (record == nullptr || partition.value() >= record->partitions) {
        return Status(Errc::not_found, "topic or partition not found");
    }
    const meta::Assignment* assignment = view->find_assignment(topic, partition);
    if (assignment == nullptr || assignment->owner != self_) {
        return Status(Errc::not_owner, describe(topic, partition) + " is not owned here");
    }
    return Status::ok();
}

std::vector<CursorSidecar> HandoffService::read_cursor_sidecars(const std::string& topic,
                                                                PartitionId partition) {
    std::vector<CursorSidecar> sidecars;
    std::string directory = logs_.partition_directory(topic, partition);
    auto names = fs_.list_directory(directory);
    if (!names.is_ok()) return sidecars;
    for (const std::string& name : *names) {
        std::string child = fanout::child_of_cursor_file(name);
        if (child.empty()) continue;
        std::string path = io::join_path(directory, name);
        // A file caught in the middle of a write is read again; one that never verifies is not
        // shipped (the new owner then resumes the link from the oldest offset, never the tail).
        std::optional<std::string> verified;
        for (int attempt = 0; attempt < 3 && !verified; ++attempt) {
            auto bytes = io::read_file(fs_, path);
            if (!bytes.is_ok()) break;
            if (fanout::decode_cursor(*bytes, path).is_ok()) verified = std::move(*bytes);
        }
        if (!verified) {
            NARAD_LOG_WARN("move listing of {}: fan-out cursor {} does not verify; not shipped",
                           describe(topic, partition), name);
            continue;
        }
        sidecars.push_back({std::move(child), std::move(*verified)});
    }
    return sidecars;
}

Result<TransferListing> HandoffService::read_listing(const std::string& topic,
                                                     PartitionId partition) {
    TransferListing listing;
    // Opening first: a partition not open since a restart reports its recovered boundary.
    auto log = logs_.get(topic, partition, storage::CreateIfMissing::no);
    if (!log.is_ok() && log.code() != Errc::not_found) return log.status();
    // 1. The consumer position: the in-memory one (ahead of the file by up to a committer tick),
    //    else the file.
    if (auto position = consume_.position(topic, partition)) {
        listing.frontier = position->frontier;
        listing.acked_ahead = std::move(position->acked_ahead);
    } else {
        std::string path =
            io::join_path(logs_.partition_directory(topic, partition), queue::kConsumerOffsetFile);
        auto stored = queue::read_consumer_position(fs_, path);
        if (stored.is_ok()) {
            listing.frontier = stored->frontier;
            listing.acked_ahead = std::move(stored->acked_ahead);
        } else if (stored.code() != Errc::not_found) {
            // An unreadable position costs redeliveries at the new owner, never a gap.
            NARAD_LOG_WARN("move listing of {}: consumer position unreadable ({}); listing 0",
                           describe(topic, partition), stored.status().to_string());
        }
    }
    listing.cursors = read_cursor_sidecars(topic, partition);
    listing.source_clock_ns = wall_ns(clock_.wall_now());
    if (!log.is_ok()) return listing;  // never written: nothing to copy
    // 2. The high watermark, 3. the segments (committed bytes only).
    listing.high_watermark = (*log)->high_watermark();
    std::string directory = logs_.partition_directory(topic, partition);
    for (const storage::SegmentInfo& segment : (*log)->segments()) {
        SegmentListing item;
        item.base = segment.base;
        item.size_bytes = segment.size_bytes;
        item.sealed = segment.sealed;
        item.modified_ns = wall_ns(segment.modified);
        if (segment.sealed) {
            auto index =
                fs_.stat(io::join_path(directory, storage::segment_index_name(segment.base)));
            if (index.is_ok()) item.index_bytes = index->size;
        }
        listing.segments.push_back(item);
    }
    // The marker of the move that installed this copy, if one did: what the owner vouches for.
    auto marker = read_marker(fs_, directory);
    if (marker.is_ok()) {
        listing.marker = std::move(*marker);
        auto written = fs_.stat(io::join_path(directory, kMoveMarkerFile));
        if (written.is_ok()) listing.marker_written_ns = wall_ns(written->modified);
    } else if (marker.code() != Errc::not_found) {
        NARAD_LOG_WARN("move listing of {}: its move marker is unreadable ({})",
                       describe(topic, partition), marker.status().to_string());
    }
    return listing;
}

Result<TransferListing> HandoffService::list(const std::string& topic, PartitionId partition) {
    NARAD_RETURN_IF_ERROR(check_owner(topic, partition));
    return read_listing(topic, partition);
}

Result<std::string> HandoffService::read_chunk(const std::string& topic, PartitionId partition,
                                               Offset base, ChunkKind kind, uint64_t offset,
                                               uint64_t length) {
    NARAD_RETURN_IF_ERROR(check_owner(topic, partition));
    length = std::min(length, options_.max_chunk_bytes);
    std::string name = kind == ChunkKind::log ? storage::segment_log_name(base)
                                              : storage::segment_index_name(base);
    std::string path = io::join_path(logs_.partition_directory(topic, partition), name);
    NARAD_ASSIGN_OR_RETURN(auto file, fs_.open(path, io::kRead));
    std::string bytes(length, '\0');
    size_t filled = 0;
    while (filled < length) {
        NARAD_ASSIGN_OR_RETURN(
            size_t got, file->read_at(offset + filled, bytes.data() + filled, length - filled));
        if (got == 0) break;
        filled += got;
    }
    bytes.resize(filled);
    return bytes;
}

Result<Handoff> HandoffService::prepare(const std::string& topic, PartitionId partition,
                                        const FreezeToken& token) {
    NARAD_RETURN_IF_ERROR(check_owner(topic, partition));
    if (!token.value().empty()) return rearm(topic, partition, token);
    MutexLock serial(prepare_mutex_);
    return freeze(topic, partition);
}

Result<Handoff> HandoffService::freeze(const std::string& topic, PartitionId partition) {
    Key key{topic, partition};
    {
        // A freeze already held (a destination that lost our reply, or one that restarted) is
        // replaced: its token stops working, so its holder freezes again before it flips.
        MutexLock lock(mutex_);
        auto it = freezes_.find(key);
        if (it != freezes_.end() && it->second.closed) {
            return Status(Errc::not_owner, describe(topic, partition) + " moved away");
        }
    }
    auto gate = gates_.gate(topic, partition);
    MonoTime started = clock_.now();
    {
        // Every commit that passed the gate finishes before this lock is ours.
        WriterLock produce(gate->produce);
        gate->frozen = true;
    }
    FreezeToken token(random_hex(16));
    auto lease = store_.hold_freeze(key, token, options_.freeze_ttl);
    if (!lease.is_ok()) {
        bool held_before;
        {
            MutexLock lock(mutex_);
            held_before = freezes_.count(key) > 0;
        }
        if (!held_before) gate->frozen = false;
        return lease.status().with_context("writing the freeze key");
    }
    std::optional<Freeze> replaced;
    {
        MutexLock lock(mutex_);
        auto it = freezes_.find(key);
        if (it != freezes_.end()) replaced = it->second;
        freezes_[key] = Freeze{token, *lease, replaced ? replaced->started : started,
                               clock_.now() + options_.freeze_ttl, false};
    }
    if (replaced) (void)store_.release_freeze(replaced->lease);
    // Leases already out: give their holders a moment to ack, so their acks travel with the
    // position instead of being redelivered by the new owner.
    constexpr Millis kDrainPoll{5};
    for (int64_t polls = options_.lease_drain / kDrainPoll; polls > 0; --polls) {
        auto stats = consume_.stats(topic, partition);
        if (!stats || stats->in_flight == 0) break;
        clock_.sleep_for(kDrainPoll);
    }
    NARAD_FAILPOINT("move.source.before_final_listing");
    Result<TransferListing> listing = [&] {
        WriterLock produce(gate->produce);
        return read_listing(topic, partition);
    }();
    if (!listing.is_ok()) return listing.status();
    NARAD_LOG_INFO("move: froze {} for handoff at high watermark {}", describe(topic, partition),
                   listing->high_watermark.value());
    return Handoff{token, std::move(*listing)};
}

Status HandoffService::renew(const Key& key, const FreezeToken& token) {
    int64_t lease = 0;
    {
        MutexLock lock(mutex_);
        auto it = freezes_.find(key);
        if (it == freezes_.end() || it->second.token != token || it->second.closed ||
            clock_.now() >= it->second.deadline) {
            return Status(Errc::conflict, "the freeze of " + describe(key.topic, key.partition) +
                                              " named by this token is no longer active");
        }
        lease = it->second.lease;
    }
    Status renewed = store_.renew_freeze(lease);
    if (!renewed.is_ok()) {
        if (renewed.code() == Errc::not_found) {
            return Status(Errc::conflict, "the freeze key of " +
                                              describe(key.topic, key.partition) +
                                              " expired in the metastore");
        }
        return renewed.with_context("re-arming the freeze");
    }
    MutexLock lock(mutex_);
    auto it = freezes_.find(key);
    if (it == freezes_.end() || it->second.token != token) {
        return Status(Errc::conflict,
                      "the freeze of " + describe(key.topic, key.partition) + " was replaced");
    }
    it->second.deadline = clock_.now() + options_.freeze_ttl;
    return Status::ok();
}

Result<Handoff> HandoffService::rearm(const std::string& topic, PartitionId partition,
                                      const FreezeToken& token) {
    NARAD_RETURN_IF_ERROR(renew(Key{topic, partition}, token));
    NARAD_ASSIGN_OR_RETURN(TransferListing listing, read_listing(topic, partition));
    return Handoff{token, std::move(listing)};
}

Status HandoffService::fence(const std::string& topic, PartitionId partition,
                             const FreezeToken& token, Offset hwm) {
    NARAD_RETURN_IF_ERROR(check_owner(topic, partition));
    NARAD_RETURN_IF_ERROR(renew(Key{topic, partition}, token));
    // Under the freeze nothing commits, so the open log's watermark is final.
    Offset now;
    auto log = logs_.get(topic, partition, storage::CreateIfMissing::no);
    if (log.is_ok()) {
        now = (*log)->high_watermark();
    } else if (log.code() != Errc::not_found) {
        return log.status();
    }
    if (now != hwm) {
        return Status(Errc::conflict, "the high watermark of " + describe(topic, partition) +
                                          " is " + std::to_string(now.value()) +
                                          ", not the copied " + std::to_string(hwm.value()));
    }
    return Status::ok();
}

void HandoffService::tick() {
    close_moved_away();
    std::vector<Key> due;
    {
        MutexLock lock(mutex_);
        MonoTime now = clock_.now();
        for (const auto& [key, freeze] : freezes_) {
            if (!freeze.closed && now >= freeze.deadline) due.push_back(key);
        }
    }
    for (const Key& key : due) lift(key);
}

void HandoffService::lift(const Key& key) {
    int64_t lease = 0;
    {
        MutexLock lock(mutex_);
        auto it = freezes_.find(key);
        if (it == freezes_.end() || it->second.closed || clock_.now() < it->second.deadline) return;
        lease = it->second.lease;
    }
    // Revoke first: once the key is gone no flip can commit, however late it arrives.
    Status revoked = store_.release_freeze(lease);
    if (!revoked.is_ok() && revoked.code() != Errc::not_found) {
        NARAD_LOG_WARN("move: cannot end the freeze of {} yet (revoking: {}); it stays frozen",
                       describe(key.topic, key.partition), revoked.to_string());
        return;
    }
    auto assignment = store_.read_assignment(key);
    if (!assignment.is_ok()) {
        NARAD_LOG_WARN("move: cannot end the freeze of {} yet (reading the owner: {})",
                       describe(key.topic, key.partition), assignment.status().to_string());
        return;
    }
    if (assignment->has_value() && (*assignment)->owner == self_) {
        {
            MutexLock lock(mutex_);
            auto it = freezes_.find(key);
            if (it == freezes_.end() || it->second.lease != lease) return;  // frozen again
            freezes_.erase(it);
        }
        gates_.gate(key.topic, key.partition)->frozen = false;
        NARAD_LOG_WARN("move: the freeze of {} lapsed without a flip; it takes commits again",
                       describe(key.topic, key.partition));
        return;
    }
    close_partition(key);
}

void HandoffService::close_partition(const Key& key) {
    {
        MutexLock lock(mutex_);
        Freeze& freeze = freezes_[key];
        if (freeze.closed) return;
        freeze.closed = true;
    }
    gates_.gate(key.topic, key.partition)->frozen = true;
    consume_.drop_partition(key.topic, key.partition, queue::LastPosition::write);
    Status closed = logs_.close_partition(key.topic, key.partition);
    if (!closed.is_ok()) {
        NARAD_LOG_WARN("move: {} moved away but its log stays open: {}",
                       describe(key.topic, key.partition), closed.to_string());
    }
    NARAD_LOG_INFO("move: {} moved away; closed here", describe(key.topic, key.partition));
}

void HandoffService::on_snapshot(const meta::MetaSnapshot& snapshot) {
    // Runs on the replica's thread, which must not block: the closing happens in tick().
    MutexLock lock(mutex_);
    for (const auto& [key, freeze] : freezes_) {
        if (freeze.closed) continue;
        const meta::Assignment* now = snapshot->find_assignment(key.topic, key.partition);
        if (now == nullptr || now->owner != self_) moved_away_.insert(key);
    }
}

void HandoffService::close_moved_away() {
    std::set<Key> moved;
    {
        MutexLock lock(mutex_);
        moved.swap(moved_away_);
    }
    for (const Key& key : moved) {
        int64_t lease = 0;
        {
            MutexLock lock(mutex_);
            auto it = freezes_.find(key);
            if (it == freezes_.end() || it->second.closed) continue;
            lease = it->second.lease;
        }
        close_partition(key);
        (void)store_.release_freeze(lease);
    }
}

Status HandoffService::release_stale_freezes() {
    // Freeze keys are per partition; a restarted source holds no freeze, so any key naming one of
    // its partitions is stale and must go before it takes a commit.
    meta::MetaSnapshot view = store_.snapshot();
    for (const auto& [key, assignment] : view->assignments) {
        if (assignment.owner != self_ || assignment.target.value().empty()) continue;
        NARAD_RETURN_IF_ERROR(store_.remove_freeze(key));
    }
    return Status::ok();
}

void HandoffService::forget(const std::string& topic, PartitionId partition) {
    {
        MutexLock lock(mutex_);
        freezes_.erase(Key{topic, partition});
    }
    gates_.gate(topic, partition)->frozen = false;
}

std::vector<FreezeReport> HandoffService::freezes() const {
    MutexLock lock(mutex_);
    std::vector<FreezeReport> out;
    MonoTime now = clock_.now();
    for (const auto& [key, freeze] : freezes_) {
        out.push_back(FreezeReport{key.topic, key.partition,
                                   std::chrono::duration_cast<Millis>(now - freeze.started),
                                   freeze.closed});
    }
    return out;
}

}  // namespace narad::move
