#include "move/sweep.h"

#include <fmt/format.h>

#include <charconv>
#include <shared_mutex>

#include "base/log.h"
#include "base/metrics.h"
#include "move/quarantine.h"
#include "storage/frame_format.h"
#include "storage/segment_scan.h"
#include "storage/topic_directory.h"

namespace narad::move {
namespace {

metrics::Gauge& orphan_dirs_gauge() {
    static metrics::Gauge& gauge =
        metrics::Registry::global()
            .gauge("narad_orphan_topic_dirs",
                   "Directories of topics this node's replica no longer knows that the last sweep "
                   "left: without an incarnation marker, or not yet confirmed gone.")
            .get();
    return gauge;
}

// "p00007" -> 7.
std::optional<uint32_t> partition_of(std::string_view name) {
    if (name.size() != 6 || name[0] != 'p') return std::nullopt;
    uint32_t partition = 0;
    auto [end, error] = std::from_chars(name.data() + 1, name.data() + 6, partition);
    if (error != std::errc() || end != name.data() + 6) return std::nullopt;
    return partition;
}

WallTime wall_from_ns(int64_t ns) { return WallTime(std::chrono::nanoseconds(ns)); }

}  // namespace

Judgement judge_copy(const NodeId& self, const LocalCopy& local, const TransferListing& owner,
                     WallTime now, WallTime marker_written, Millis unstamped_grace) {
    if (!local.unexpired_records) return {CopyVerdict::reclaim, "no unexpired records"};
    bool owner_records = false;
    for (const SegmentListing& segment : owner.segments) owner_records |= segment.size_bytes > 0;
    if (!owner_records || owner.high_watermark.value() == 0) {
        return {CopyVerdict::quarantine, "the owner lists no records"};
    }
    if (!owner.marker) {
        return {CopyVerdict::quarantine,
                "the owner holds records but no move marker, so they did not come from this copy"};
    }
    const MoveMarker& marker = *owner.marker;
    if (marker.source != self) {
        return {CopyVerdict::quarantine,
                "the owner's move marker records a move from " + marker.source.value()};
    }
    if (marker.durable_at_ms == 0 && now - marker_written < unstamped_grace) {
        return {CopyVerdict::defer, "the owner's marker has no durable stamp and is recent"};
    }
    Offset vouched = std::min(owner.high_watermark, marker.promoted_high_watermark);
    for (const LocalCopy::Segment& mine : local.segments) {
        if (mine.base >= vouched) continue;
        auto theirs =
            std::find_if(owner.segments.begin(), owner.segments.end(),
                         [&](const SegmentListing& segment) { return segment.base == mine.base; });
        if (theirs == owner.segments.end()) {
            return {CopyVerdict::quarantine,
                    fmt::format("segment {} below the vouched position {} is missing at the owner",
                                mine.base.value(), vouched.value())};
        }
        if (mine.sealed && theirs->size_bytes < mine.size_bytes) {
            return {CopyVerdict::quarantine,
                    fmt::format("sealed segment {} is shorter at the owner ({} bytes, {} here)",
                                mine.base.value(), theirs->size_bytes, mine.size_bytes)};
        }
    }
    if (local.next_offset > marker.promoted_high_watermark) {
        return {CopyVerdict::quarantine,
                fmt::format("the local copy is ahead of the position it was promoted at "
                            "elsewhere (local_next_offset={}, promoted_hwm={}): records past it "
                            "exist only here",
                            local.next_offset.value(), marker.promoted_high_watermark.value())};
    }
    return {CopyVerdict::reclaim, "the owner vouches for it"};
}

StaleCopySweep::StaleCopySweep(MoveContext& context, SweepOptions options)
    : context_(context), options_(options) {}

SweepReport StaleCopySweep::run(const std::function<bool(const meta::PartitionKey&)>& busy) {
    SweepReport report;
    std::string topics = io::join_path(context_.data_dir, "topics");
    auto names = context_.fs.list_directory(topics);
    if (names.is_ok()) {
        meta::MetaSnapshot view = context_.store.snapshot();
        for (const std::string& name : *names) {
            if (size_t at = name.find(kStaleIncarnationInfix); at != std::string::npos) {
                remove_stale_incarnation(name, at, report);
                continue;
            }
            auto info = context_.fs.stat(io::join_path(topics, name));
            if (!info.is_ok() || !info->is_directory) continue;
            sweep_topic(name, *view, busy, report);
        }
    }
    orphan_dirs_gauge().set(report.orphan_topic_dirs);
    if (report.quarantined > 0) {
        publish_quarantine_metrics(list_quarantined(context_.fs, context_.data_dir));
    }
    return report;
}

void StaleCopySweep::sweep_topic(const std::string& name, const meta::MetaState& view,
                                 const std::function<bool(const meta::PartitionKey&)>& busy,
                                 SweepReport& report) {
    std::string directory = context_.logs.topic_directory(name);
    // The incarnation first, then the owner: both from one snapshot, and the marker is checked
    // again under the guard before anything is renamed or removed.
    auto incarnation = storage::read_incarnation(context_.fs, directory);
    const meta::Topic* record = view.find_topic(name);
    if (!incarnation.is_ok()) {
        if (record == nullptr) ++report.orphan_topic_dirs;  // markerless: the start-up sweep's
        return;
    }
    if (record == nullptr || record->incarnation != *incarnation) {
        remove_deleted(name, *incarnation, report);
        return;
    }
    auto entries = context_.fs.list_directory(directory);
    if (!entries.is_ok()) return;
    for (const std::string& entry : *entries) {
        auto partition = partition_of(entry);
        if (!partition) continue;
        meta::PartitionKey key{name, PartitionId(*partition)};
        const meta::Assignment* assignment = view.find_assignment(name, key.partition);
        if (assignment == nullptr || assignment->owner == context_.self || busy(key)) continue;
        auto local = read_local(io::join_path(directory, entry), Millis(record->retention_ms));
        if (!local.is_ok()) {
            ++report.deferred;  // its own copy cannot be listed
            continue;
        }
        if (!local->unexpired_records) {
            act(key, *incarnation, CopyVerdict::reclaim, "no unexpired records", assignment->owner,
                report);
            continue;
        }
        auto listing = context_.source.list(assignment->owner, name, key.partition);
        if (!listing.is_ok()) {
            ++report.deferred;  // the owner cannot be asked now
            NARAD_LOG_DEBUG("sweep: cannot ask {} about '{}' partition {}: {}",
                            assignment->owner.value(), name, *partition,
                            listing.status().to_string());
            continue;
        }
        Judgement judgement =
            judge_copy(context_.self, *local, *listing, context_.clock.wall_now(),
                       wall_from_ns(listing->marker_written_ns), options_.unstamped_grace);
        if (judgement.verdict == CopyVerdict::defer) {
            ++report.deferred;
            continue;
        }
        act(key, *incarnation, judgement.verdict, judgement.reason, assignment->owner, report);
    }
}

Result<LocalCopy> StaleCopySweep::read_local(const std::string& directory, Millis retention) {
    NARAD_ASSIGN_OR_RETURN(std::vector<std::string> names, context_.fs.list_directory(directory));
    std::vector<std::pair<Offset, io::FileInfo>> segments;
    for (const std::string& name : names) {
        Offset base;
        if (!storage::parse_segment_name(name, storage::kLogSuffix, base)) continue;
        NARAD_ASSIGN_OR_RETURN(io::FileInfo info, context_.fs.stat(io::join_path(directory, name)));
        segments.emplace_back(base, info);
    }
    std::sort(segments.begin(), segments.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    LocalCopy local;
    WallTime now = context_.clock.wall_now();
    for (size_t i = 0; i < segments.size(); ++i) {
        const auto& [base, info] = segments[i];
        bool unexpired =
            info.size > 0 && (retention.count() == 0 || now - info.modified < retention);
        if (!unexpired) continue;
        local.unexpired_records = true;
        local.segments.push_back({base, info.size, i + 1 < segments.size()});
    }
    if (!segments.empty()) {
        // Where the frames end, read without recovering (nothing here is changed).
        const Offset last = segments.back().first;
        NARAD_ASSIGN_OR_RETURN(
            auto file,
            context_.fs.open(io::join_path(directory, storage::segment_log_name(last)), io::kRead));
        auto scan = storage::scan_active_segment(*file, last, nullptr);
        local.next_offset = scan.is_ok() ? scan->end : last;
    }
    return local;
}

void StaleCopySweep::act(const meta::PartitionKey& key, const IncarnationId& incarnation,
                         CopyVerdict verdict, const std::string& reason, const NodeId& owner,
                         SweepReport& report) {
    auto guard = context_.guards.guard(key.topic);
    WriterLock topic_lock(*guard);
    auto marker = storage::read_incarnation(context_.fs, context_.logs.topic_directory(key.topic));
    if (!marker.is_ok() || *marker != incarnation) return;  // deleted and recreated meanwhile
    meta::MetaSnapshot view = context_.store.snapshot();
    const meta::Assignment* now = view->find_assignment(key.topic, key.partition);
    if (now == nullptr || now->owner == context_.self) return;  // moved back here meanwhile
    std::string directory = context_.logs.partition_directory(key.topic, key.partition);
    context_.consume.drop_partition(key.topic, key.partition, queue::LastPosition::discard);
    Status closed = context_.logs.close_partition(key.topic, key.partition);
    if (!closed.is_ok()) {
        NARAD_LOG_WARN("sweep: cannot close '{}' partition {}: {}", key.topic,
                       key.partition.value(), closed.to_string());
        return;
    }
    if (verdict == CopyVerdict::reclaim) {
        Status removed = context_.fs.remove_all(directory);
        if (removed.is_ok()) removed = context_.fs.sync_directory(io::parent_path(directory));
        if (!removed.is_ok()) {
            NARAD_LOG_WARN("sweep: cannot remove {}: {}", directory, removed.to_string());
            return;
        }
        ++report.reclaimed;
        NARAD_LOG_INFO("sweep: reclaimed the local copy of '{}' partition {} ({}; owner {})",
                       key.topic, key.partition.value(), reason, owner.value());
        return;
    }
    auto aside = set_aside(context_.fs, context_.clock, directory, directory + kQuarantineSuffix);
    if (!aside.is_ok()) {
        NARAD_LOG_ERROR("sweep: cannot set aside {}: {}", directory, aside.status().to_string());
        return;
    }
    ++report.quarantined;
    NARAD_LOG_ERROR(
        "reclaim: the new owner cannot vouch for the local partition copy; quarantined instead of "
        "deleted, its records may exist only here. Operator action required (topic={}, "
        "partition={}, owner={}, reason={}, quarantine_dir={})",
        key.topic, key.partition.value(), owner.value(), reason, *aside);
}

void StaleCopySweep::remove_stale_incarnation(const std::string& name, size_t at,
                                              SweepReport& report) {
    // <topic>.stale-<incarnation>[-<ms>]: removed once the metastore confirms it gone.
    std::string topic = name.substr(0, at);
    std::string incarnation = name.substr(at + std::string_view(kStaleIncarnationInfix).size());
    incarnation = incarnation.substr(0, incarnation.find('-'));
    auto confirmed = context_.store.read_topic(topic);
    if (!confirmed.is_ok()) return;
    if (confirmed->has_value() && (*confirmed)->incarnation.value() == incarnation) return;
    std::string path = io::join_path(io::join_path(context_.data_dir, "topics"), name);
    Status removed = context_.fs.remove_all(path);
    if (removed.is_ok()) removed = context_.fs.sync_directory(io::parent_path(path));
    if (!removed.is_ok()) {
        NARAD_LOG_WARN("sweep: cannot remove {}: {}", path, removed.to_string());
        return;
    }
    ++report.topics_removed;
    NARAD_LOG_INFO("sweep: removed {}, a set-aside directory of deleted incarnation {}", path,
                   incarnation);
}

void StaleCopySweep::remove_deleted(const std::string& name, const IncarnationId& incarnation,
                                    SweepReport& report) {
    if (report.topics_removed >= options_.max_topic_removals) {
        ++report.orphan_topic_dirs;
        return;
    }
    // The replica may lag: only a linearizable read may confirm the incarnation gone.
    auto confirmed = context_.store.read_topic(name);
    if (!confirmed.is_ok()) {
        ++report.orphan_topic_dirs;
        return;
    }
    if (confirmed->has_value() && (*confirmed)->incarnation == incarnation) return;  // current
    auto guard = context_.guards.guard(name);
    WriterLock topic_lock(*guard);
    const meta::Topic* record = context_.store.snapshot()->find_topic(name);
    auto marker = storage::read_incarnation(context_.fs, context_.logs.topic_directory(name));
    if ((record != nullptr && record->incarnation == incarnation) || !marker.is_ok() ||
        *marker != incarnation) {
        return;  // recreated, or served, meanwhile
    }
    context_.consume.drop_topic(name);
    Status removed = context_.logs.remove_topic(name);
    if (!removed.is_ok()) {
        NARAD_LOG_WARN("sweep: cannot remove the directory of deleted topic '{}': {}", name,
                       removed.to_string());
        ++report.orphan_topic_dirs;
        return;
    }
    ++report.topics_removed;
    NARAD_LOG_INFO("sweep: removed the local data of deleted topic '{}' (incarnation {})", name,
                   incarnation.value());
}

}  // namespace narad::move
