#include "wal/local_committer.h"

#include <shared_mutex>

#include "base/log.h"
#include "base/metrics.h"
#include "base/mutex.h"

namespace narad::wal {
namespace {

struct Metrics {
    metrics::Family<metrics::Counter>& produced = metrics::Registry::global().counter(
        "narad_messages_produced_total", "Messages committed to partitions owned here.",
        {"topic", "partition"});
    metrics::Family<metrics::Counter>& produced_bytes = metrics::Registry::global().counter(
        "narad_bytes_produced_total", "Payload bytes committed to partitions owned here.",
        {"topic", "partition"});
    metrics::Family<metrics::Counter>& errors = metrics::Registry::global().counter(
        "narad_errors_total", "Errors by component and kind.", {"component", "kind"});
};

Metrics& metrics_instance() {
    static Metrics* m = new Metrics();
    return *m;
}

}  // namespace

LocalCommitter::LocalCommitter(io::FileSystem& fs, Clock& clock, meta::MetaStore& store,
                               storage::LogManager& logs, storage::TopicGuards& guards,
                               storage::PartitionGates* gates)
    : fs_(fs), clock_(clock), store_(store), logs_(logs), guards_(guards), gates_(gates) {}

Status LocalCommitter::commit(const std::string& topic, const std::string& incarnation,
                              PartitionId partition, std::span<const storage::Record> records) {
    if (owner_fence_) NARAD_RETURN_IF_ERROR(owner_fence_());
    auto guard = guards_.guard(topic);
    ReaderLock topic_lock(*guard);
    meta::MetaSnapshot record_view = store_.snapshot();
    const meta::Topic* record = record_view->find_topic(topic);
    if (record == nullptr || record->incarnation.value() != incarnation ||
        partition.value() >= record->partitions) {
        return Status(Errc::not_found, "topic not found");
    }
    {
        // One preparation at a time: concurrent workers committing to sibling partitions would
        // otherwise race on the marker's temporary file.
        MutexLock lock(mutex_);
        if (prepared_.count({topic, incarnation}) == 0) {
            Status status = storage::prepare_topic_directory(fs_, logs_.topic_directory(topic),
                                                             record->incarnation);
            if (!status.is_ok()) {
                metrics_instance().errors.with({"messaging", "partition_open"}).inc();
                NARAD_LOG_ERROR("cannot prepare the directory of topic {}: {}", topic,
                                status.to_string());
                return Status(Errc::unavailable, status.message());
            }
            prepared_.insert({topic, incarnation});
        }
    }
    std::shared_ptr<storage::PartitionGates::Gate> gate;
    std::shared_lock<SharedMutex> produce_lock;
    if (gates_ != nullptr) {
        gate = gates_->gate(topic, partition);
        produce_lock = std::shared_lock(gate->produce);
        if (gate->frozen.load()) {
            return Status(Errc::frozen, "partition " + std::to_string(partition.value()) + " of '" +
                                            topic + "' is frozen for a move; retry");
        }
    }
    auto log = logs_.get(topic, partition, storage::CreateIfMissing::yes);
    if (!log.is_ok()) {
        metrics_instance().errors.with({"messaging", "partition_open"}).inc();
        return log.status();
    }
    // Narad stamps records with the commit time at the owner.
    int64_t now_ms = clock_.wall_ms();
    std::vector<storage::Record> stamped(records.begin(), records.end());
    uint64_t bytes = 0;
    for (auto& r : stamped) {
        r.timestamp_ms = now_ms;
        bytes += r.value.size();
    }
    auto appended = (*log)->append(stamped);
    if (!appended.is_ok()) {
        metrics_instance().errors.with({"messaging", "append"}).inc();
        return appended.status();
    }
    std::string p = std::to_string(partition.value());
    metrics_instance().produced.with({topic, p}).inc(appended->appended);
    metrics_instance().produced_bytes.with({topic, p}).inc(static_cast<double>(bytes));
    return Status::ok();
}

}  // namespace narad::wal
