#include "node/node.h"

#include <unistd.h>

#include <set>

#include "api/api.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/periodic.h"
#include "io/file_system.h"
#include "meta/local_meta_store.h"
#include "net/http_server.h"
#include "node/topic_backend.h"
#include "queue/offset_committer.h"
#include "wal/dispatcher.h"
#include "wal/local_committer.h"

namespace narad::node {

Result<std::pair<std::string, uint16_t>> split_host_port(std::string_view address) {
    auto colon = address.rfind(':');
    if (colon == std::string_view::npos) {
        return Status(Errc::invalid_argument,
                      "address \"" + std::string(address) + "\" is not host:port");
    }
    std::string host(address.substr(0, colon));
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    std::string port_text(address.substr(colon + 1));
    char* end = nullptr;
    long port = std::strtol(port_text.c_str(), &end, 10);
    if (port_text.empty() || *end != '\0' || port < 0 || port > 65535) {
        return Status(Errc::invalid_argument,
                      "address \"" + std::string(address) + "\" has no valid port");
    }
    return std::make_pair(host, static_cast<uint16_t>(port));
}

namespace {

std::string host_name() {
    char buffer[256] = {0};
    if (::gethostname(buffer, sizeof buffer - 1) != 0) return "narad";
    return buffer;
}

storage::LogOptions log_options(const StorageConfig& storage) {
    storage::LogOptions options;
    options.segment_bytes_max = storage.segment_bytes;
    options.codec = storage.codec == "zstd" ? storage::Codec::zstd : storage::Codec::none;
    // Narad's levels map onto zstd's: fastest 1, default 3, better 7, best 11.
    const std::string& level = storage.compression_level;
    options.compression_level = level == "best"      ? 11
                                : level == "better"  ? 7
                                : level == "default" ? 3
                                                     : 1;
    return options;
}

}  // namespace

class Node::Impl {
  public:
    explicit Impl(Config config) : config_(std::move(config)) {
        if (config_.cluster.node_id.empty()) config_.cluster.node_id = host_name();
    }

    ~Impl() { stop(); }

    Status start() {
        MonoTime boot_started = clock_.now();
        const std::string& data = config_.storage.data_dir;
        NARAD_RETURN_IF_ERROR(fs_.create_directories(data));
        auto store = meta::LocalMetaStore::open(fs_, io::join_path(data, "meta"));
        if (!store.is_ok()) return store.status().with_context("opening the metastore");
        store_ = std::move(*store);

        logs_ =
            std::make_unique<storage::LogManager>(fs_, clock_, data, log_options(config_.storage));
        offsets_ = std::make_unique<queue::OffsetCommitter>(
            fs_, Millis(config_.storage.offset_commit_interval_ms));

        auto [host, port] = split_host_port(config_.http.addr).value();
        net::ServerOptions server_options;
        server_options.address = host.empty() ? "0.0.0.0" : host;
        server_options.port = port;
        server_options.threads = 2;
        server_options.read_timeout = std::chrono::duration_cast<Millis>(config_.http.read_timeout);
        server_options.write_timeout =
            std::chrono::duration_cast<Millis>(config_.http.write_timeout);
        server_options.idle_timeout = std::chrono::duration_cast<Millis>(config_.http.idle_timeout);
        server_options.shutdown_grace =
            std::chrono::duration_cast<Millis>(config_.http.shutdown_grace);
        router_ = std::make_unique<api::Router>(clock_);
        server_ = std::make_unique<net::HttpServer>(server_options, *router_);

        consume_ = std::make_unique<queue::ConsumeService>(fs_, clock_, *store_, *logs_, guards_,
                                                           *offsets_, *server_);
        backend_ = std::make_unique<TopicBackend>(fs_, data, *store_, *logs_, guards_, *consume_);
        auto swept = backend_->sweep();
        if (!swept.is_ok())
            return swept.status().with_context("start-up sweep of topic directories");
        if (*swept > 0) NARAD_LOG_INFO("start-up sweep removed {} stale topic directories", *swept);

        logs_->set_append_listener(
            [this](const std::string& topic, PartitionId partition, Offset hwm) {
                consume_->on_append(topic, partition, hwm);
            });
        watch_id_ = store_->watch(
            [this](const meta::MetaSnapshot& snapshot) { consume_->apply_limits(snapshot); });

        wal::WalOptions wal_options;
        wal_options.segment_bytes_max = config_.storage.wal_segment_bytes;
        wal_options.max_pending_bytes = config_.storage.wal_max_pending_bytes;
        auto wal = wal::IngressWal::open(fs_, clock_, io::join_path(data, "ingress"), wal_options);
        if (!wal.is_ok()) return wal.status().with_context("opening the ingress WAL");
        wal_ = std::move(*wal);
        committer_ = std::make_unique<wal::LocalCommitter>(fs_, clock_, *store_, *logs_, guards_);
        wal::DispatcherOptions dispatcher_options;
        dispatcher_options.threads = config_.storage.dispatcher_threads;
        dispatcher_ =
            std::make_unique<wal::Dispatcher>(clock_, *wal_, *committer_, dispatcher_options);
        produce_ = std::make_unique<wal::ProduceService>(clock_, *store_, *wal_);

        meta::TopicPolicy policy;
        policy.default_partitions = config_.topic.default_partitions;
        policy.max_partitions = config_.topic.max_partitions;
        policy.default_retention_ms = config_.topic.default_retention_age_ms;
        policy.default_visibility_timeout_ms = config_.topic.default_visibility_timeout_ms;
        policy.default_max_in_flight = config_.topic.default_max_in_flight_per_partition;
        policy.default_max_acked_ahead = config_.topic.default_max_acked_ahead_per_partition;
        topics_ = std::make_unique<meta::TopicFrontend>(
            *store_, clock_, policy, meta::place_on(NodeId(config_.cluster.node_id)));
        blocking_ = std::make_unique<ThreadPool>("narad-blocking", 2);

        context_ = std::make_unique<api::ApiContext>(api::ApiContext{
            .clock = clock_,
            .store = *store_,
            .topics = *topics_,
            .produce = *produce_,
            .consume = *consume_,
            .logs = *logs_,
            .blocking = *blocking_,
            .purge_topic = [this](std::string_view t) { return backend_->purge_if_deleted(t); },
            .node_id = NodeId(config_.cluster.node_id),
            .advertise_addr = config_.http.addr,
            .max_consume_wait = std::chrono::duration_cast<Millis>(config_.http.max_consume_wait),
            .ready = [this] { return ready_.load(); },
            .shutting_down = [this] { return shutting_down_.load(); },
        });
        api::register_routes(*router_, *context_);

        maintenance_ = std::make_unique<PeriodicTask>(
            "narad-maintain", Millis(config_.storage.retention_check_interval_ms),
            [this] { maintain(); });

        offsets_->start();
        consume_->start();
        wal_->start();
        dispatcher_->start();
        maintenance_->start();
        Status listening = server_->start();
        if (!listening.is_ok()) return listening;
        register_node_metrics();
        ready_ = true;
        double boot_seconds = std::chrono::duration<double>(clock_.now() - boot_started).count();
        metrics::Registry::global()
            .gauge("narad_boot_duration_seconds", "Time to start.")
            .get()
            .set(boot_seconds);
        NARAD_LOG_INFO("narad node {} serving on {} (data in {}), started in {:.3f}s",
                       config_.cluster.node_id, config_.http.addr, data, boot_seconds);
        started_ = true;
        return Status::ok();
    }

    void stop() {
        if (stopped_) return;
        stopped_ = true;
        shutting_down_ = true;
        ready_ = false;
        // Answer parked long-polls first so the HTTP server can drain within its grace period.
        if (consume_) consume_->stop();
        if (server_) server_->stop();
        if (maintenance_) maintenance_->stop();
        if (blocking_) blocking_->stop();
        if (dispatcher_) dispatcher_->stop();
        if (wal_) wal_->stop();
        if (offsets_) offsets_->stop();
        if (store_ && watch_id_ != 0) store_->unwatch(watch_id_);
        if (collector_id_ != 0) metrics::Registry::global().remove_collector(collector_id_);
        if (logs_) logs_->close_all();
        if (started_) NARAD_LOG_INFO("narad node {} stopped", config_.cluster.node_id);
    }

    uint16_t http_port() const { return server_ ? server_->port() : 0; }
    bool ready() const { return ready_; }

  private:
    // Retention and idle-log eviction, every retention_check_interval.
    void maintain() {
        meta::MetaSnapshot snapshot = store_->snapshot();
        for (const auto& [name, topic] : snapshot->topics) {
            if (topic.retention_ms <= 0) continue;
            for (uint32_t p = 0; p < topic.partitions; ++p) {
                auto log = logs_->get(name, PartitionId(p), storage::CreateIfMissing::no);
                if (!log.is_ok()) continue;
                auto result = (*log)->enforce_retention(Millis(topic.retention_ms));
                if (!result.is_ok()) {
                    NARAD_LOG_WARN("retention of {}/{} failed: {}", name, p,
                                   result.status().to_string());
                } else if (result->segments_deleted > 0) {
                    NARAD_LOG_INFO("retention deleted {} segments ({} records) of {}/{}",
                                   result->segments_deleted, result->records_deleted, name, p);
                }
            }
        }
        if (config_.storage.idle_log_eviction_ms > 0) {
            logs_->evict_idle(Millis(config_.storage.idle_log_eviction_ms));
        }
    }

    void register_node_metrics() {
        auto& registry = metrics::Registry::global();
        auto& topics_total = registry.gauge("narad_topics_total", "Topics in the metastore.");
        auto& partitions_total =
            registry.gauge("narad_partitions_total", "Partitions owned here with an open log.");
        auto& data_size =
            registry.gauge("narad_data_dir_size_bytes", "Bytes under the data directory.");
        auto& data_available = registry.gauge("narad_data_dir_available_bytes",
                                              "Free bytes on the data directory's disk.");
        auto& topic_bytes =
            registry.gauge("narad_topic_bytes", "Bytes of a topic's segments.", {"topic"});
        auto& partition_bytes =
            registry.gauge("narad_partition_size_bytes", "Bytes of a partition's segments.",
                           {"topic", "partition"});
        auto& segments =
            registry.gauge("narad_segments", "Segments of a partition.", {"topic", "partition"});
        collector_id_ = registry.add_collector([&, this] {
            meta::MetaSnapshot snapshot = store_->snapshot();
            topics_total.get().set(static_cast<double>(snapshot->topics.size()));
            double open_partitions = 0;
            // Deleted topics' series go; the others are overwritten below.
            std::set<std::string> current;
            for (const auto& [name, topic] : snapshot->topics) current.insert(name);
            for (const std::string& gone : reported_topics_) {
                if (current.count(gone)) continue;
                topic_bytes.remove({gone});
                partition_bytes.remove_prefix({gone});
                segments.remove_prefix({gone});
            }
            reported_topics_ = std::move(current);
            for (const auto& [name, topic] : snapshot->topics) {
                double bytes = 0;
                for (uint32_t p = 0; p < topic.partitions; ++p) {
                    auto log = logs_->get_if_open(name, PartitionId(p));
                    if (!log) continue;
                    storage::LogStats stats = log->stats();
                    ++open_partitions;
                    bytes += static_cast<double>(stats.size_bytes);
                    partition_bytes.with({name, std::to_string(p)})
                        .set(static_cast<double>(stats.size_bytes));
                    segments.with({name, std::to_string(p)}).set(stats.segments);
                }
                topic_bytes.with({name}).set(bytes);
            }
            partitions_total.get().set(open_partitions);
            data_size.get().set(static_cast<double>(data_directory_bytes()));
            auto space = fs_.space(config_.storage.data_dir);
            if (space.is_ok())
                data_available.get().set(static_cast<double>(space->available_bytes));
        });
    }

    // Bytes of the regular files under the data directory (temporary files excluded), rescanned at
    // most every 30 s because a walk of a large data directory is not free.
    uint64_t data_directory_bytes() {
        MonoTime now = clock_.now();
        if (data_bytes_scanned_ != MonoTime() &&
            now - data_bytes_scanned_ < std::chrono::seconds(30)) {
            return data_bytes_;
        }
        data_bytes_scanned_ = now;
        uint64_t total = 0;
        std::vector<std::string> pending{config_.storage.data_dir};
        while (!pending.empty()) {
            std::string directory = std::move(pending.back());
            pending.pop_back();
            auto names = fs_.list_directory(directory);
            if (!names.is_ok()) continue;
            for (const std::string& name : *names) {
                std::string path = io::join_path(directory, name);
                auto info = fs_.stat(path);
                if (!info.is_ok()) continue;
                if (info->is_directory) {
                    pending.push_back(path);
                } else if (!name.ends_with(".tmp")) {
                    total += info->size;
                }
            }
        }
        data_bytes_ = total;
        return total;
    }

    Config config_;
    std::set<std::string> reported_topics_;  // only touched by the metrics collector
    MonoTime data_bytes_scanned_;
    uint64_t data_bytes_ = 0;
    io::FileSystem& fs_ = io::posix_file_system();
    Clock& clock_ = SystemClock::instance();
    storage::TopicGuards guards_;
    std::unique_ptr<meta::LocalMetaStore> store_;
    std::unique_ptr<storage::LogManager> logs_;
    std::unique_ptr<queue::OffsetCommitter> offsets_;
    std::unique_ptr<api::Router> router_;
    std::unique_ptr<net::HttpServer> server_;
    std::unique_ptr<queue::ConsumeService> consume_;
    std::unique_ptr<TopicBackend> backend_;
    std::unique_ptr<wal::IngressWal> wal_;
    std::unique_ptr<wal::LocalCommitter> committer_;
    std::unique_ptr<wal::Dispatcher> dispatcher_;
    std::unique_ptr<wal::ProduceService> produce_;
    std::unique_ptr<meta::TopicFrontend> topics_;
    std::unique_ptr<ThreadPool> blocking_;
    std::unique_ptr<api::ApiContext> context_;
    std::unique_ptr<PeriodicTask> maintenance_;
    uint64_t watch_id_ = 0;
    uint64_t collector_id_ = 0;
    std::atomic<bool> ready_{false};
    std::atomic<bool> shutting_down_{false};
    bool started_ = false;
    bool stopped_ = false;
};

Node::Node(Config config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Node::~Node() = default;
Status Node::start() { return impl_->start(); }
void Node::stop() { impl_->stop(); }
uint16_t Node::http_port() const { return impl_->http_port(); }
bool Node::ready() const { return impl_->ready(); }

}  // namespace narad::node
