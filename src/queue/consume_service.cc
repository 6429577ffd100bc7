#include "queue/consume_service.h"

#include "base/mutex.h"
#include "base/periodic.h"
#include "base/thread_pool.h"
#include "queue/consume_metrics.h"

namespace narad::queue {

class ConsumeService::Impl {
  public:
    Impl(io::FileSystem& fs, Clock& clock, meta::MetaStore& store, storage::LogManager& logs,
         storage::TopicGuards& guards, OffsetCommitter& committer, ConsumeOptions options)
        : clock_(clock),
          store_(store),
          options_(options),
          metrics_(consume_metrics()),
          queues_(fs, clock, store, logs, guards, committer),
          reader_(store, logs, queues_, metrics_, options.max_batch_bytes),
          polls_(
              clock, metrics_,
              [this](const ConsumeRequest& request) { return reader_.reserve(request); },
              [this](const std::string& topic, const std::vector<Delivery>& deliveries) {
                  std::vector<HeldLease> leases;
                  leases.reserve(deliveries.size());
                  for (const Delivery& d : deliveries) {
                      leases.push_back({d.partition, d.offset, d.lease_id});
                  }
                  return queues_.release(topic, leases);
              }),
          reaper_("narad-reaper", clock, options.reaper_interval, [this] { reap(); }) {}

    ~Impl() { stop(); }

    void start() {
        MutexLock lifecycle(lifecycle_mutex_);
        if (running_) return;
        running_ = true;
        stopped_ = false;
        reaper_.start();
        collector_id_ = metrics::Registry::global().add_collector(
            [this] { queues_.report(metrics_, clock_.wall_now()); });
    }

    void stop() {
        MutexLock lifecycle(lifecycle_mutex_);
        if (stopped_) return;
        stopped_ = true;
        running_ = false;
        reaper_.stop();
        if (collector_id_ != 0) {
            metrics::Registry::global().remove_collector(collector_id_);
            collector_id_ = 0;
        }
        polls_.shut_down();
    }

    Status settle(std::string_view topic, PartitionId partition, Offset offset, LeaseId lease_id,
                  Settle kind, std::string_view reason) {
        meta::MetaSnapshot record_view = store_.snapshot();
        const meta::Topic* record = record_view->find_topic(topic);
        if (record == nullptr) return Status(Errc::not_found, "topic not found");
        std::shared_ptr<PartitionQueue> queue = queues_.find(topic, partition, record->incarnation);
        Status stale(Errc::gone, "receipt handle no longer matches an active reservation");
        if (!queue) return stale;
        // An ack can only unblock waiters when the partition was held back by a cap; waking every
        // parked consumer on every ack would be a thundering herd.
        QueueStats before = queue->stats();
        bool capped = before.in_flight >= record->max_in_flight_per_partition ||
                      before.acked_ahead >= record->max_acked_ahead_per_partition;
        Status status;
        switch (kind) {
            case Settle::ack:
                status = queue->ack(offset, lease_id);
                break;
            case Settle::extend: {
                auto extended = queue->extend(offset, lease_id);
                status = extended.is_ok() ? Status::ok() : extended.status();
                if (status.is_ok()) metrics_.extended.with({std::string(topic)}).inc();
                break;
            }
            case Settle::nack:
                status = queue->nack(offset, lease_id, reason);
                if (status.is_ok()) metrics_.nacked.with({std::string(topic)}).inc();
                break;
        }
        if (status.code() == Errc::gone) return stale;
        if (status.is_ok() && kind == Settle::nack) polls_.wake(std::string(topic), 1);
        if (status.is_ok() && kind == Settle::ack && capped) {
            polls_.wake(std::string(topic), LongPolls::kWakeAll);
        }
        return status;
    }

    bool settle_exhausted(const ExhaustedMessage& message) {
        if (!queues_.settle_exhausted(message)) return false;
        // The frontier moved: a capped partition opens up.
        polls_.wake(message.topic, LongPolls::kWakeAll);
        return true;
    }

    void drop_topic(std::string_view topic) {
        queues_.drop_topic(topic);
        polls_.forget(topic);
        metrics_.remove_topic(std::string(topic));
    }

    void drop_partition(std::string_view topic, PartitionId partition, LastPosition last) {
        queues_.drop_partition(topic, partition, last);
        polls_.forget(topic, partition);
    }

    Clock& clock_;
    meta::MetaStore& store_;
    const ConsumeOptions options_;
    ConsumeMetrics& metrics_;
    PartitionQueues queues_;
    ConsumeReader reader_;
    LongPolls polls_;

  private:
    // Ends lapsed leases and wakes the topics that have waiters for them.
    void reap() {
        for (const auto& topic : queues_.expire_leases()) polls_.wake(topic, LongPolls::kWakeAll);
    }

    PeriodicTask reaper_;    // constructed last: its pass uses everything above
    Mutex lifecycle_mutex_;  // serialises start() and stop()
    bool running_ GUARDED_BY(lifecycle_mutex_) = false;
    bool stopped_ GUARDED_BY(lifecycle_mutex_) = false;
    uint64_t collector_id_ GUARDED_BY(lifecycle_mutex_) = 0;
};

ConsumeService::ConsumeService(io::FileSystem& fs, Clock& clock, meta::MetaStore& store,
                               storage::LogManager& logs, storage::TopicGuards& guards,
                               OffsetCommitter& committer, ConsumeOptions options)
    : impl_(std::make_unique<Impl>(fs, clock, store, logs, guards, committer, options)) {}
ConsumeService::~ConsumeService() = default;
void ConsumeService::start() { impl_->start(); }
void ConsumeService::stop() { impl_->stop(); }
void ConsumeService::consume(ConsumeRequest request, Done done) {
    impl_->polls_.consume(std::move(request), std::move(done));
}
Result<std::optional<Delivery>> ConsumeService::replay(std::string_view topic,
                                                       PartitionId partition, Offset offset) {
    return impl_->reader_.replay(topic, partition, offset);
}
Status ConsumeService::settle(std::string_view topic, PartitionId partition, Offset offset,
                              LeaseId lease_id, Settle kind, std::string_view reason) {
    return impl_->settle(topic, partition, offset, lease_id, kind, reason);
}
std::vector<ExhaustedMessage> ConsumeService::exhausted() { return impl_->queues_.exhausted(); }
bool ConsumeService::settle_exhausted(const ExhaustedMessage& message) {
    return impl_->settle_exhausted(message);
}
void ConsumeService::on_append(const std::string& topic, PartitionId partition, Offset hwm) {
    impl_->polls_.on_append(topic, partition, hwm);
}
void ConsumeService::drop_topic(std::string_view topic) { impl_->drop_topic(topic); }
void ConsumeService::apply_limits(const meta::MetaSnapshot& snapshot) {
    impl_->queues_.apply_limits(snapshot);
}
std::optional<QueueStats> ConsumeService::stats(std::string_view topic,
                                                PartitionId partition) const {
    return impl_->queues_.stats(topic, partition);
}
void ConsumeService::set_serving_filter(ServingFilter filter) {
    impl_->reader_.set_serving_filter(std::move(filter));
}
void ConsumeService::set_readers(Readers run) { impl_->polls_.set_readers(std::move(run)); }
Status ConsumeService::run_read(std::function<void()> read) {
    return impl_->polls_.run_read(std::move(read));
}
std::optional<ConsumerPosition> ConsumeService::position(std::string_view topic,
                                                         PartitionId partition) const {
    return impl_->queues_.position(topic, partition);
}
void ConsumeService::drop_partition(std::string_view topic, PartitionId partition,
                                    LastPosition last) {
    impl_->drop_partition(topic, partition, last);
}

}  // namespace narad::queue
