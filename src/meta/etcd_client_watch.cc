// EtcdClient::watch: one thread per watch reading one gateway watch stream.
//
// Resume without loss or repeat. The watch remembers the last revision it delivered (`last_`):
// the mod_revision of the newest event handed to on_batch, or the header revision of a progress
// notification (etcd sends those only to a watcher that is caught up). The header revision of a
// batch with events is NOT used: a watcher still catching up on history gets batches stamped with
// the store's current revision while older events are yet to come. etcd never splits one revision
// across batches, so after a disconnect the new stream starts at last_ + 1, and any event at or
// below last_ is dropped in case a member sends one again.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/base64.h"
#include "base/log.h"
#include "meta/etcd_client.h"
#include "meta/etcd_client_json.h"
#include "meta/etcd_stream_reader.h"

namespace narad::meta {
namespace {

constexpr Millis kBackoffFirst{50};
constexpr Millis kBackoffMax{1'000};
// A stream silent this long is reopened: it may be a connection to a member that is cut off
// (a half-open TCP connection never ends by itself). Reopening costs one request.
constexpr Millis kIdleReopen{30'000};

}  // namespace

class EtcdClient::WatchImpl final : public EtcdWatch {
  public:
    WatchImpl(EtcdTransport& transport, const EtcdClientOptions& options, Clock& clock,
              size_t first_endpoint, std::string key, std::string range_end, int64_t start_revision,
              std::function<void(const WatchBatch&)> on_batch,
              std::function<void(const Status&)> on_error)
        : transport_(transport),
          options_(options),
          endpoint_(first_endpoint),
          key_(std::move(key)),
          range_end_(std::move(range_end)),
          on_batch_(std::move(on_batch)),
          on_error_(std::move(on_error)),
          reader_(clock) {
        if (start_revision > 0) last_ = start_revision - 1;
    }

    ~WatchImpl() override { reader_.stop(); }

    // Opens the first stream on the caller's thread, so that every change made after watch()
    // returns is seen. A compacted start revision is reported through on_error, like later ones.
    Status open_first() {
        Status last;
        for (size_t i = 0; i < options_.endpoints.size(); ++i) {
            last = open();
            if (last.is_ok() || last.code() == Errc::gone) return Status::ok();
            endpoint_ = (endpoint_ + 1) % options_.endpoints.size();
        }
        return last;
    }

    void start() {
        reader_.start("narad-watch", [this] { run(); });
    }

  private:
    // Opens a stream on endpoint_ and waits for etcd to confirm the watch. Errc::gone when the
    // start revision is compacted (then finished_ is set).
    Status open() {
        nlohmann::json request = {{"key", base64_encode(key_)}, {"progress_notify", true}};
        if (!range_end_.empty()) request["range_end"] = base64_encode(range_end_);
        if (last_) request["start_revision"] = std::to_string(*last_ + 1);
        nlohmann::json body = {{"create_request", request}};
        const auto& endpoint = options_.endpoints[endpoint_];
        auto opened =
            transport_.open_stream(endpoint, "/v3/watch", body.dump(), options_.connect_timeout);
        if (!opened.is_ok()) return opened.status();
        NARAD_RETURN_IF_ERROR(reader_.install(std::move(opened).value()));
        created_ = false;
        // The confirmation (or an error) comes first.
        while (!created_) {
            auto line = reader_.stream()->next(options_.call_timeout);
            if (!line.is_ok()) {
                reader_.close();
                return line.status().with_context("opening a watch on " + endpoint);
            }
            Status handled = handle(*line);
            if (!handled.is_ok()) {
                reader_.close();
                return handled;
            }
        }
        return Status::ok();
    }

    // Applies one message of the stream. An error means the stream must be dropped; Errc::gone
    // means the watch is over.
    Status handle(const std::string& line) {
        auto parsed = gateway::parse_watch_message(line);
        if (!parsed.is_ok()) return parsed.status();
        auto& message = *parsed;
        if (message.canceled) {
            if (message.compact_revision > 0) {
                finished_ = true;
                return Status(Errc::gone, "etcd compacted the watched history up to revision " +
                                              std::to_string(message.compact_revision));
            }
            return Status(Errc::unavailable, "etcd cancelled the watch: " + message.cancel_reason);
        }
        if (message.created) {
            created_ = true;
            // A watch from "now": later changes are those after the revision etcd had then.
            if (!last_) last_ = message.header_revision;
            return Status::ok();
        }
        WatchBatch batch;
        for (auto& event : message.events) {
            if (last_ && event.kv.mod_revision <= *last_) continue;  // delivered before
            batch.revision = std::max(batch.revision, event.kv.mod_revision);
            batch.events.push_back(std::move(event));
        }
        if (message.events.empty() && (!last_ || message.header_revision > *last_)) {
            batch.revision = message.header_revision;  // a progress notification
        }
        if (batch.revision == 0) return Status::ok();
        last_ = batch.revision;
        on_batch_(batch);
        return Status::ok();
    }

    void run() {
        Millis backoff = kBackoffFirst;
        while (!finished_) {
            if (reader_.stopping()) return;
            if (!reader_.stream()) {
                Status opened = open();
                if (!opened.is_ok()) {
                    if (finished_) break;
                    NARAD_LOG_DEBUG("etcd watch: {}", opened.to_string());
                    endpoint_ = (endpoint_ + 1) % options_.endpoints.size();
                    if (!reader_.wait_backoff(backoff)) return;
                    backoff = std::min(backoff * 2, kBackoffMax);
                }
                continue;
            }
            auto line = reader_.stream()->next(kIdleReopen);
            if (!line.is_ok()) {
                reader_.close();
                if (line.code() != Errc::timeout) {
                    NARAD_LOG_DEBUG("etcd watch stream ended: {}", line.status().to_string());
                    endpoint_ = (endpoint_ + 1) % options_.endpoints.size();
                }
                continue;
            }
            backoff = kBackoffFirst;
            Status handled = handle(*line);
            if (!handled.is_ok()) reader_.close();
        }
        reader_.close();
        if (!reader_.stopping()) {
            on_error_(Status(Errc::gone,
                             "etcd compacted the watched history; re-read and watch "
                             "again from the revision read"));
        }
    }

    EtcdTransport& transport_;
    const EtcdClientOptions options_;
    size_t endpoint_;  // the endpoint being used; owned by the watch thread
    const std::string key_;
    const std::string range_end_;
    std::function<void(const WatchBatch&)> on_batch_;
    std::function<void(const Status&)> on_error_;

    // Owned by the watch thread (or by open_first before the thread starts).
    std::optional<int64_t> last_;  // the last revision delivered (or known to hold no change)
    bool created_ = false;
    bool finished_ = false;

    EtcdStreamReader reader_;
};

Result<std::unique_ptr<EtcdWatch>> EtcdClient::watch(
    std::string key, std::string range_end, int64_t start_revision,
    std::function<void(const WatchBatch&)> on_batch, std::function<void(const Status&)> on_error) {
    if (options_.endpoints.empty()) {
        return Status(Errc::invalid_argument, "no etcd endpoints configured");
    }
    size_t first = preferred_.load(std::memory_order_relaxed) % options_.endpoints.size();
    auto watch = std::make_unique<WatchImpl>(transport_, options_, clock_, first, std::move(key),
                                             std::move(range_end), start_revision,
                                             std::move(on_batch), std::move(on_error));
    NARAD_RETURN_IF_ERROR(watch->open_first());
    watch->start();
    return std::unique_ptr<EtcdWatch>(std::move(watch));
}

}  // namespace narad::meta
