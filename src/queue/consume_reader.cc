#include "queue/consume_reader.h"

#include <algorithm>

#include "base/log.h"

namespace narad::queue {

ConsumeReader::ConsumeReader(meta::MetaStore& store, storage::LogManager& logs,
                             PartitionQueues& queues, ConsumeMetrics& metrics,
                             uint64_t max_batch_bytes)
    : store_(store),
      logs_(logs),
      queues_(queues),
      metrics_(metrics),
      max_batch_bytes_(max_batch_bytes) {}

void ConsumeReader::set_serving_filter(ServingFilter filter) { serving_ = std::move(filter); }

Result<std::vector<Delivery>> ConsumeReader::reserve(const ConsumeRequest& request) {
    meta::MetaSnapshot snapshot = store_.snapshot();
    const meta::Topic* topic = snapshot->find_topic(request.topic);
    if (topic == nullptr) return Status(Errc::not_found, "topic not found");
    std::vector<PartitionId> order;
    if (request.partition) {
        if (request.partition->value() >= topic->partitions) {
            return Status(Errc::invalid_argument, "invalid argument: partition out of range");
        }
        order.push_back(*request.partition);
    } else {
        uint32_t start = next_start(request.topic, topic->partitions);
        for (uint32_t i = 0; i < topic->partitions; ++i) {
            order.push_back(PartitionId((start + i) % topic->partitions));
        }
    }
    std::vector<Delivery> out;
    uint64_t bytes = 0;
    for (PartitionId partition : order) {
        if (out.size() >= request.max || bytes >= max_batch_bytes_) break;
        if (serving_ && !serving_(*snapshot, topic->name, partition)) continue;
        auto log = logs_.get(topic->name, partition, storage::CreateIfMissing::no);
        if (!log.is_ok()) {
            if (log.code() == Errc::not_found) continue;  // never written to
            return log.status();
        }
        if ((*log)->high_watermark().value() == 0) continue;
        NARAD_ASSIGN_OR_RETURN(auto queue, queues_.load(*topic, partition));
        size_t before = out.size();
        Status taken =
            take_from(*topic, partition, **log, *queue, request.max - out.size(), bytes, out);
        // Counted once per partition: a metric lookup per message would cost more than the
        // read.
        uint64_t value_bytes = 0;
        for (size_t i = before; i < out.size(); ++i) value_bytes += out[i].value.size();
        if (out.size() > before) {
            std::string p = std::to_string(partition.value());
            metrics_.consumed.with({topic->name, p}).inc(static_cast<double>(out.size() - before));
            metrics_.consumed_bytes.with({topic->name, p}).inc(static_cast<double>(value_bytes));
        }
        NARAD_RETURN_IF_ERROR(taken);
    }
    return out;
}

// Reserves and reads up to `want` messages of one partition into `out`.
Status ConsumeReader::take_from(const meta::Topic& topic, PartitionId partition,
                                storage::PartitionLog& log, PartitionQueue& queue, size_t want,
                                uint64_t& bytes, std::vector<Delivery>& out) {
    for (int round = 0; round < 2 && want > 0; ++round) {
        std::vector<Lease> leases = queue.reserve(log.high_watermark(), want);
        if (leases.empty()) return Status::ok();
        std::sort(leases.begin(), leases.end(),
                  [](const Lease& a, const Lease& b) { return a.offset < b.offset; });
        bool retention_skipped = false;
        size_t i = 0;
        while (i < leases.size()) {
            size_t run = 1;
            while (i + run < leases.size() && leases[i + run].offset == leases[i].offset + run) {
                ++run;
            }
            if (bytes >= max_batch_bytes_) {
                // Over the response budget: hand the leases back untouched.
                for (size_t k = i; k < leases.size(); ++k) {
                    (void)queue.nack(leases[k].offset, leases[k].lease_id);
                }
                return Status::ok();
            }
            auto read = log.read(leases[i].offset, run, max_batch_bytes_ - bytes);
            if (!read.is_ok()) {
                if (read.code() != Errc::gone) {
                    for (size_t k = i; k < leases.size(); ++k) {
                        (void)queue.nack(leases[k].offset, leases[k].lease_id);
                    }
                    return read.status();
                }
                // Retention deleted these before they were consumed.
                Offset frontier = queue.stats().frontier;
                Offset oldest = log.oldest_offset();
                if (oldest > frontier) {
                    NARAD_LOG_WARN("{}/{}: {} messages aged out before they were acked", topic.name,
                                   partition.value(), oldest.distance_from(frontier));
                    queues_.count_dropped(topic.name, partition, oldest.distance_from(frontier));
                }
                queue.skip_below(oldest);
                // The leases still standing (at or above the new oldest offset) were never
                // read: hand them back and reserve afresh in the next round.
                for (size_t k = i; k < leases.size(); ++k) {
                    if (leases[k].offset >= oldest) {
                        (void)queue.nack(leases[k].offset, leases[k].lease_id);
                    }
                }
                retention_skipped = true;
                break;
            }
            std::map<uint64_t, storage::StoredRecord*> by_offset;
            for (auto& record : read->records) by_offset[record.offset.value()] = &record;
            for (Offset corrupt : read->corrupt) {
                queue.skip(corrupt);
                metrics_.corrupt.with({topic.name, std::to_string(partition.value())}).inc();
            }
            for (size_t k = i; k < i + run; ++k) {
                const Lease& lease = leases[k];
                auto found = by_offset.find(lease.offset.value());
                if (found == by_offset.end()) {
                    bool corrupt = std::find(read->corrupt.begin(), read->corrupt.end(),
                                             lease.offset) != read->corrupt.end();
                    // Not read because of the byte budget: give the lease back.
                    if (!corrupt) (void)queue.nack(lease.offset, lease.lease_id);
                    continue;
                }
                storage::StoredRecord& record = *found->second;
                bytes += record.value.size() + record.key.size();
                out.push_back(Delivery{partition, record.offset, std::move(record.key),
                                       std::move(record.value), record.timestamp_ms,
                                       lease.lease_id});
                --want;
            }
            i += run;
        }
        if (!retention_skipped) return Status::ok();
    }
    return Status::ok();
}

Result<std::optional<Delivery>> ConsumeReader::replay(std::string_view topic, PartitionId partition,
                                                      Offset offset) {
    meta::MetaSnapshot snapshot = store_.snapshot();
    const meta::Topic* record = snapshot->find_topic(topic);
    if (record == nullptr) return Status(Errc::not_found, "topic not found");
    if (partition.value() >= record->partitions) {
        return Status(Errc::invalid_argument, "invalid argument: partition out of range");
    }
    auto log = logs_.get(topic, partition, storage::CreateIfMissing::no);
    if (!log.is_ok()) {
        if (log.code() == Errc::not_found) return std::optional<Delivery>();
        return log.status();
    }
    std::shared_ptr<storage::PartitionLog> partition_log = *log;
    if (offset >= partition_log->high_watermark()) return std::optional<Delivery>();
    auto read = partition_log->read(offset, 1, max_batch_bytes_);
    std::string prefix = "receipt handle no longer matches an active reservation: offset " +
                         std::to_string(offset.value());
    if (!read.is_ok()) {
        if (read.code() == Errc::gone) {
            return Status(Errc::gone, prefix + " aged out of retention (oldest retained: " +
                                          std::to_string(partition_log->oldest_offset().value()) +
                                          ")");
        }
        return read.status();
    }
    if (read->records.empty() || read->records.front().offset != offset) {
        return Status(Errc::gone, prefix + " is not readable");
    }
    // A replay reads; it is not counted as consumed (Narad since 3.0.1).
    storage::StoredRecord& record_read = read->records.front();
    return std::optional<Delivery>(
        Delivery{partition, record_read.offset, std::move(record_read.key),
                 std::move(record_read.value), record_read.timestamp_ms, LeaseId(0)});
}

uint32_t ConsumeReader::next_start(const std::string& topic, uint32_t partitions) {
    MutexLock lock(cursor_mutex_);
    return cursors_[topic]++ % partitions;
}

}  // namespace narad::queue
