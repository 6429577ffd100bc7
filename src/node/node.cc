#include "node/node.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <thread>

#include "api/access.h"
#include "api/cluster_routes.h"
#include "api/decommission_routes.h"
#include "api/health_routes.h"
#include "api/in_flight_limits.h"
#include "api/internal_routes.h"
#include "api/membership_routes.h"
#include "api/message_routes.h"
#include "api/move_routes.h"
#include "api/node_status.h"
#include "api/produce_gate.h"
#include "api/request_json.h"
#include "api/topic_routes.h"
#include "api/user_routes.h"
#include "auth/authenticator.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/mutex.h"
#include "base/periodic.h"
#include "base/url.h"
#include "cluster/placement.h"
#include "fanout/engine.h"
#include "io/file_system.h"
#include "move/handoff.h"
#include "move/marker.h"
#include "move/runner.h"
#include "net/http_server.h"
#include "net/peer_pool.h"
#include "node/cluster_runtime.h"
#include "node/data_dir_metrics.h"
#include "node/power_cut.h"
#include "node/root_admin.h"
#include "node/topic_backend.h"
#include "queue/dead_letter.h"
#include "queue/offset_committer.h"
#include "storage/retention_service.h"
#include "wal/dispatcher.h"
#include "wal/local_committer.h"
#include "wal/owner_liveness.h"
#include "wal/routing_committer.h"

namespace narad::node {

namespace {

// Moves of this node that may freeze their sources at once (worker.h, CutoverSlots).
constexpr uint32_t kConcurrentCutovers = 2;

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

    std::function<void()> on_decommissioned_;  // set before start()

    // Tries to seed the root user now, then every 2 s until the cluster has one (a new cluster's
    // metastore may not take writes yet).
    void start_root_seeding() {
        node::RootAdminOptions options{
            .data_dir = config_.storage.data_dir,
            .password = config_.security.admin_password,
            .node_id = config_.cluster.node_id,
        };
        root_seeding_ =
            std::make_unique<PeriodicTask>("root-seed", clock_, Millis(2'000), [this, options] {
                if (root_seeded_.load()) return;
                Status seeded = node::seed_root_admin(*store_, fs_, clock_, options);
                if (seeded.is_ok()) {
                    root_seeded_ = true;
                } else {
                    NARAD_LOG_WARN("root admin not seeded yet: {}", seeded.to_string());
                }
            });
        root_seeding_->start();
        root_seeding_->run_now();
    }

    // The node-to-node plane's secrets (docs/security.md, "Node to node"). A secured node given
    // none (and, by the config checks, no peers to join) gets one of its own for this process
    // only, so nothing but itself can pass its cluster port; with security off and no secret the
    // plane is open.
    void settle_cluster_secrets() {
        cluster_secrets_ = {.current = config_.security.cluster_secret,
                            .previous = config_.security.cluster_secret_previous};
        if (!cluster_secrets_.empty()) return;
        if (config_.security.enabled) {
            cluster_secrets_.current = auth::generate_cluster_secret();
            NARAD_LOG_INFO(
                "single node with no cluster secret: generated a per-process secret, so node RPC "
                "is closed to other processes");
            return;
        }
        plane_access_ = net::PlaneAccess::open;
        NARAD_LOG_WARN("node RPC plane is unauthenticated (security off and no cluster secret)");
    }

    // security.cluster_tls_*: the cluster port's mutual TLS, if configured.
    std::optional<net::TlsFiles> cluster_tls_files() const {
        const SecurityConfig& s = config_.security;
        if (s.cluster_tls_cert_file.empty()) return std::nullopt;
        return net::TlsFiles{s.cluster_tls_cert_file, s.cluster_tls_key_file,
                             s.cluster_tls_ca_file};
    }
    // How this node dials peers: its cluster certificate, checked by the cluster's authority only
    // (peers are known by address, not by a name in their certificates).
    std::optional<net::ClientTls> cluster_client_tls() const {
        auto files = cluster_tls_files();
        if (!files) return std::nullopt;
        return net::ClientTls{*files, net::HostCheck::signature_only};
    }

    // Loads every TLS file again (SIGHUP, or a file that changed): new connections use them.
    Status reload_tls() {
        MutexLock lock(tls_reload_mutex_);
        // Stamped first: a file that changes while it loads is loaded again on the next tick.
        tls_stamp_ = tls_files_stamp();
        Status result;
        auto reload = [&result](const char* what, Status reloaded) {
            if (reloaded.is_ok()) return;
            NARAD_LOG_ERROR(
                "TLS for the {} not reloaded, its previous certificates stay in force: {}", what,
                reloaded.to_string());
            if (result.is_ok()) result = reloaded.with_context(what);
        };
        if (server_) reload("API port", server_->reload_tls());
        if (metrics_server_) reload("metrics listener", metrics_server_->reload_tls());
        if (cluster_server_) reload("cluster port", cluster_server_->reload_tls());
        if (peers_) reload("calls to other nodes", peers_->reload_tls());
        if (result.is_ok()) NARAD_LOG_INFO("TLS certificates reloaded");
        return result;
    }

    // The modification times of every configured TLS file, to notice a renewal.
    std::string tls_files_stamp() const {
        const SecurityConfig& s = config_.security;
        std::string stamp;
        for (const std::string* path : {&s.tls_cert_file, &s.tls_key_file, &s.cluster_tls_cert_file,
                                        &s.cluster_tls_key_file, &s.cluster_tls_ca_file}) {
            if (path->empty()) continue;
            struct stat info {};
            if (::stat(path->c_str(), &info) == 0) {
                stamp += std::to_string(info.st_mtim.tv_sec) + "." +
                         std::to_string(info.st_mtim.tv_nsec) + "/" + std::to_string(info.st_size);
            }
            stamp += ";";
        }
        return stamp;
    }

    Status start() {
        MonoTime boot_started = clock_.now();
        const std::string& data = config_.storage.data_dir;
        NARAD_RETURN_IF_ERROR(fs_.create_directories(data));
        settle_cluster_secrets();
        {
            MutexLock lock(tls_reload_mutex_);
            tls_stamp_ = tls_files_stamp();
        }
        auto cluster = ClusterRuntime::start(cluster_options(), clock_);
        if (!cluster.is_ok()) return cluster.status().with_context("joining the cluster");
        cluster_ = std::move(*cluster);
        store_ = &cluster_->store();

        // The owner's self-fence (docs/moves.md): commits are made visible, and leases handed out,
        // only while this node's liveness lease is known valid.
        storage::LogOptions partition_options = log_options(config_.storage);
        partition_options.before_publish = [this] { return owner_fence(); };
        logs_ = std::make_unique<storage::LogManager>(fs_, clock_, data, partition_options);
        offsets_ = std::make_unique<queue::OffsetCommitter>(
            fs_, clock_, Millis(config_.storage.consumer_offset_commit_interval_ms));

        auto listen = split_host_port(config_.http.addr);
        if (!listen.is_ok()) return listen.status().with_context("http.addr");
        auto [host, port] = *listen;
        net::ServerOptions server_options;
        server_options.address = host.empty() ? "0.0.0.0" : host;
        server_options.port = port;
        // One I/O thread per core (at least two): they only parse, route and answer.
        server_options.threads = std::max(2u, std::thread::hardware_concurrency());
        // The batch produce route takes bodies up to 16 MiB; every other route keeps 1 MiB.
        server_options.body_limit_ceiling_bytes = api::kMaxBatchBodyBytes;
        server_options.read_timeout = std::chrono::duration_cast<Millis>(config_.http.read_timeout);
        server_options.write_timeout =
            std::chrono::duration_cast<Millis>(config_.http.write_timeout);
        server_options.idle_timeout = std::chrono::duration_cast<Millis>(config_.http.idle_timeout);
        server_options.shutdown_grace =
            std::chrono::duration_cast<Millis>(config_.http.shutdown_grace);
        server_options.header_limit_bytes = static_cast<uint32_t>(config_.http.max_header_bytes);
        server_options.connections_max = static_cast<uint32_t>(config_.http.max_connections);
        server_options.connections_per_address_max =
            static_cast<uint32_t>(config_.http.max_connections_per_address);
        if (!config_.security.tls_cert_file.empty()) {
            server_options.tls =
                net::TlsFiles{config_.security.tls_cert_file, config_.security.tls_key_file, ""};
        }
        router_ = std::make_unique<api::Router>(clock_, api::ContentTypeGuard::on);
        in_flight_ = std::make_unique<api::InFlightLimits>(api::InFlightOptions{
            .max_consume_per_identity = config_.http.max_consume_in_flight_per_identity,
            .max_produce_per_identity = config_.http.max_produce_in_flight_per_identity,
            .max_batch_body_bytes = config_.http.max_batch_body_bytes_in_flight,
        });
        server_ = std::make_unique<net::HttpServer>(server_options, *router_);

        consume_ = std::make_unique<queue::ConsumeService>(fs_, clock_, *store_, *logs_, guards_,
                                                           *offsets_);
        // Consume reads (and the log opens they may need) run on a pool of their own, one thread
        // per core, so an I/O thread never waits on the disk.
        reads_ = std::make_unique<ThreadPool>("narad-read",
                                              std::max(1u, std::thread::hardware_concurrency()));
        consume_->set_readers([pool = reads_.get()](std::function<void()> read) {
            return pool->post(std::move(read));
        });
        // Only partitions owned here and not frozen for a move hand out new leases.
        consume_->set_serving_filter(
            [this](const meta::MetaState& state, std::string_view topic, PartitionId partition) {
                return serves_here(state, topic, partition);
            });
        backend_ = std::make_unique<TopicBackend>(fs_, data, *store_, *logs_, guards_, *consume_);
        // The view the sweep starts from: the purger follows deletes from it, so a topic deleted
        // before the watcher is registered is still purged.
        meta::MetaSnapshot swept_view = store_->snapshot();
        auto swept = backend_->sweep();
        if (!swept.is_ok())
            return swept.status().with_context("start-up sweep of topic directories");
        if (*swept > 0) NARAD_LOG_INFO("start-up sweep removed {} stale topic directories", *swept);

        logs_->set_append_listener(
            [this](const std::string& topic, PartitionId partition, Offset hwm) {
                consume_->on_append(topic, partition, hwm);
                if (fanout_) fanout_->on_append(topic, partition);
            });
        wal::WalOptions wal_options;
        wal_options.segment_bytes_max = config_.storage.wal_segment_bytes;
        wal_options.max_pending_bytes = config_.storage.wal_max_pending_bytes;
        auto wal = wal::IngressWal::open(fs_, clock_, io::join_path(data, "ingress"), wal_options);
        if (!wal.is_ok()) return wal.status().with_context("opening the ingress WAL");
        wal_ = std::move(*wal);
        committer_ =
            std::make_unique<wal::LocalCommitter>(fs_, clock_, *store_, *logs_, guards_, &gates_);
        committer_->set_owner_fence([this] { return owner_fence(); });
        build_routing();
        wal::DispatcherOptions dispatcher_options;
        dispatcher_options.threads = config_.storage.dispatcher_threads;
        dispatcher_options.reroute = reroute_.get();
        dispatcher_ = std::make_unique<wal::Dispatcher>(clock_, *wal_, *routing_committer_,
                                                        dispatcher_options);
        // A request for partitions served here skips the WAL (one fdatasync, not two).
        wal::DirectOptions direct_options;
        // One worker per core: more only shrink each partition's group (a fdatasync each) and
        // add context switches; at 64 single-message connections on 2 cores, 2 workers answered
        // 1.5x the rate of 8 (docs/benchmarks.md, "The direct produce path").
        direct_options.threads = std::max(1u, std::thread::hardware_concurrency());
        direct_ = std::make_unique<wal::DirectCommits>(
            *wal_, *committer_,
            [this](const meta::MetaState& state, std::string_view topic, PartitionId partition) {
                return serves_here(state, topic, partition);
            },
            direct_options);
        produce_ = std::make_unique<wal::ProduceService>(clock_, *store_, *wal_, liveness_.get(),
                                                         direct_.get());
        build_fanout();

        meta::TopicPolicy policy;
        policy.default_partitions = config_.topic.default_partitions;
        policy.max_partitions = config_.topic.max_partitions;
        policy.default_retention_ms = config_.topic.default_retention_age_ms;
        policy.default_visibility_timeout_ms = config_.topic.default_visibility_timeout_ms;
        policy.default_max_in_flight = config_.topic.default_max_in_flight_per_partition;
        policy.default_max_acked_ahead = config_.topic.default_max_acked_ahead_per_partition;
        // Placement plans from a linearizable view (the controller makes every topic write).
        meta::EtcdMetaStore* etcd_store = &cluster_->store();
        topics_ = std::make_unique<meta::TopicFrontend>(
            *store_, clock_, policy,
            [etcd_store](const meta::MetaState&, const meta::Topic& topic, uint32_t first,
                         uint32_t count) -> Result<std::vector<NodeId>> {
                NARAD_ASSIGN_OR_RETURN(meta::MetaSnapshot view, etcd_store->sync());
                return cluster::spread_partitions(*view, topic, first, count);
            });
        blocking_ = std::make_unique<ThreadPool>("narad-blocking", 2);
        purger_ = std::make_unique<DeletedTopicPurger>(
            [this](std::string_view topic) { return backend_->purge_if_deleted(topic); },
            *blocking_, std::move(swept_view));

        audit_ = std::make_unique<api::AuditLog>(fs_, clock_, io::join_path(data, "audit.log"),
                                                 NodeId(config_.cluster.node_id));
        // Each head is screened before its body is read: credentials first (with security on),
        // then the in-flight caps, which count per user once the screen has named one.
        api::Router::Screen auth_screen;
        if (config_.security.enabled) {
            authenticator_ = std::make_unique<auth::Authenticator>(*store_, clock_);
            api::MetricsAuth metrics = config_.http.metrics_unauthenticated
                                           ? api::MetricsAuth::open
                                           : api::MetricsAuth::required;
            router_->set_gate(api::make_auth_gate(access(), metrics));
            auth_screen = api::make_auth_screen(access(), metrics);
        }
        router_->set_screen([auth_screen, limits = in_flight_.get()](net::HttpRequest& head) {
            if (auth_screen) {
                if (auto refused = auth_screen(head)) return refused;
            }
            return limits->screen(head);
        });
        NARAD_RETURN_IF_ERROR(build_metrics_port(server_options));
        NARAD_RETURN_IF_ERROR(build_moves());
        node_status_ = std::make_unique<api::NodeStatusSources>(api::NodeStatusSources{
            .self = NodeId(config_.cluster.node_id),
            .gate = produce_gate_,
            .dispatch_backlog = [this] { return wal_->stats().pending_records; },
            .fs = fs_,
            .data_dir = data,
            .runner = runner_.get(),
            .pool = *blocking_,
        });
        register_public_routes();
        NARAD_RETURN_IF_ERROR(build_cluster_port(server_options));
        wire_controller_hooks();
        // The watcher runs on the replica's thread from here on, so it is registered only once
        // everything it reads (purger_, handoff_) exists, and before anything is served.
        watch_id_ = store_->watch([this](const meta::MetaSnapshot& snapshot) {
            follow_own_record(*snapshot);
            consume_->apply_limits(snapshot);
            purger_->on_snapshot(snapshot);
            handoff_->on_snapshot(snapshot);
        });
        follow_own_record(*store_->snapshot());  // a restart in the middle of a drain

        retention_ = std::make_unique<storage::RetentionService>(
            clock_, *logs_,
            [store = store_] {
                std::vector<storage::TopicRetention> topics;
                for (const auto& [name, topic] : store->snapshot()->topics) {
                    topics.push_back({name, topic.partitions, Millis(topic.retention_ms)});
                }
                return topics;
            },
            storage::RetentionOptions{
                .check_interval = Millis(config_.storage.retention_check_interval_ms),
                .cold_walk_interval = Millis(config_.storage.cold_retention_walk_ms),
                .idle_eviction = Millis(config_.storage.idle_log_eviction_ms),
            });
        // A renewed certificate is noticed on the same cadence as retention's (docs/security.md).
        tls_watch_ = std::make_unique<PeriodicTask>(
            "narad-tls-watch", clock_, Millis(config_.storage.retention_check_interval_ms),
            [this] { reload_tls_if_changed(); });

        offsets_->start();
        consume_->start();
        wal_->start();
        dispatcher_->start();
        direct_->start();
        fanout_->start();
        dead_letter_task_->start();
        retention_->start();
        tls_watch_->start();
        if (config_.security.enabled) start_root_seeding();
        runner_->start();
        if (cluster_server_) {
            Status cluster_listening = cluster_server_->start();
            if (!cluster_listening.is_ok()) {
                return cluster_listening.with_context("cluster port " + config_.cluster.addr);
            }
        }
        if (metrics_server_) {
            Status metrics_listening = metrics_server_->start();
            if (!metrics_listening.is_ok()) {
                return metrics_listening.with_context("http.metrics_addr " +
                                                      config_.http.metrics_addr);
            }
        }
        Status listening = server_->start();
        if (!listening.is_ok()) return listening;
        data_metrics_ = std::make_unique<DataDirMetrics>(fs_, clock_, data, *store_, *logs_,
                                                         metrics::Registry::global());
        data_metrics_->start();
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
        if (dead_letter_task_) dead_letter_task_->stop();
        if (consume_) consume_->stop();
        if (runner_) runner_->stop();
        if (server_) server_->stop();
        if (metrics_server_) metrics_server_->stop();
        if (cluster_server_) cluster_server_->stop();
        if (root_seeding_) root_seeding_->stop();
        // Queued password checks answer `unavailable` while the routes they lead to still exist.
        if (authenticator_) authenticator_->stop();
        if (retention_) retention_->stop();
        if (tls_watch_) tls_watch_->stop();
        if (blocking_) blocking_->stop();
        if (reads_) reads_->stop();
        if (routing_pool_) routing_pool_->stop();
        if (commit_pool_) commit_pool_->stop();
        if (move_pool_) move_pool_->stop();
        if (fanout_) fanout_->stop();
        // What the direct path still holds goes to the WAL, so it is stopped first.
        if (direct_) direct_->stop();
        if (dispatcher_) dispatcher_->stop();
        if (wal_) wal_->stop();
        if (offsets_) offsets_->stop();
        if (store_ && watch_id_ != 0) store_->unwatch(watch_id_);
        // Last: the controller resigns and the liveness key goes only once nothing is served.
        if (cluster_) cluster_->stop();
        if (data_metrics_) data_metrics_->stop();
        if (logs_) logs_->close_all();
        if (started_) NARAD_LOG_INFO("narad node {} stopped", config_.cluster.node_id);
    }

    uint16_t http_port() const { return server_ ? server_->port() : 0; }
    bool ready() const { return ready_; }

  private:
    // Whether this node may commit to and lease from the partition now: it owns it, the partition
    // is not frozen for a move and the owner fence holds.
    bool serves_here(const meta::MetaState& state, std::string_view topic,
                     PartitionId partition) const {
        const meta::Assignment* assignment = state.find_assignment(topic, partition);
        bool owned = assignment == nullptr || state.members.empty() ||
                     assignment->owner.value() == config_.cluster.node_id;
        return owned && !gates_.frozen(topic, partition) && owner_fence().is_ok();
    }

    Status owner_fence() const {
        if (cluster_->membership().lease_valid()) return Status::ok();
        return Status(Errc::unavailable,
                      "this node's liveness lease is not known valid (cut off from etcd?): it "
                      "commits nothing and hands out no leases until it reaches etcd again");
    }

    // The host other nodes reach this one at: cluster.advertise_addr's when set, else the API
    // address's host when it names one, else the cluster address's, else the host name.
    std::string advertised_host() const {
        if (auto advertised = split_host_port(config_.cluster.advertise_addr); advertised.is_ok()) {
            return advertised->first;
        }
        auto usable = [](const std::string& address) -> std::string {
            auto split = split_host_port(address);
            if (!split.is_ok()) return {};
            const std::string& host = split->first;
            return host.empty() || host == "0.0.0.0" || host == "::" ? std::string() : host;
        };
        std::string host = usable(config_.http.addr);
        if (host.empty()) host = usable(config_.cluster.addr);
        return host.empty() ? host_name() : host;
    }

    ClusterRuntimeOptions cluster_options() const {
        const ClusterConfig& cluster = config_.cluster;
        std::string host = advertised_host();
        auto port_of = [](const std::string& address) {
            auto split = split_host_port(address);
            return split.is_ok() ? std::to_string(split->second) : std::string("0");
        };
        ClusterRuntimeOptions options;
        options.node_id = NodeId(cluster.node_id);
        options.data_dir = config_.storage.data_dir;
        options.cluster_name = cluster.name;
        options.api_addr = host + ":" + port_of(config_.http.addr);
        options.cluster_addr = cluster.advertise_addr.empty() ? host + ":" + port_of(cluster.addr)
                                                              : cluster.advertise_addr;
        options.meta_endpoints = cluster.meta_endpoints;
        options.join = cluster.join;
        options.cluster_secrets = cluster_secrets_;
        options.cluster_tls = cluster_client_tls();
        // etcd listens on an IP address; a host name is advertised for the API only.
        options.etcd_host = is_ip_address(host) ? host : "127.0.0.1";
        options.etcd_client_port = cluster.etcd_client_port;
        options.etcd_peer_port = cluster.etcd_peer_port;
        options.etcd_binary = cluster.etcd_binary;
        // A topic of topic.max_partitions partitions is created in one txn.
        options.etcd_max_txn_ops = meta::EtcdMetaStore::txn_ops_for(
            static_cast<uint32_t>(std::min<int64_t>(config_.topic.max_partitions, 1'000'000)));
        options.voters = static_cast<uint32_t>(cluster.voters);
        options.controller.voters = static_cast<uint32_t>(cluster.voters);
        options.controller.min_voters = static_cast<uint32_t>(cluster.min_voters);
        options.lease_ttl_seconds = std::max<int64_t>(
            1, std::chrono::duration_cast<std::chrono::seconds>(cluster.lease_ttl).count());
        options.controller.tick = std::chrono::duration_cast<Millis>(cluster.controller_tick);
        options.controller.dead_after = std::chrono::duration_cast<Millis>(cluster.dead_after);
        const MoveConfig& move = config_.move;
        options.controller.max_in_flight_moves = static_cast<uint32_t>(move.max_in_flight);
        options.controller.force_promote_after =
            std::chrono::duration_cast<Millis>(move.force_promote_after);
        options.controller.dead_target_abort_after =
            std::chrono::duration_cast<Millis>(move.dead_target_abort_after);
        options.self_fence_margin =
            std::min(std::chrono::duration_cast<Millis>(move.self_fence_margin),
                     std::chrono::duration_cast<Millis>(cluster.lease_ttl) / 4);
        return options;
    }

    // The fan-out engine (docs/fanout.md) and the dead-letterer (docs/dead-letters.md): fan-out
    // links run for the parent partitions owned here, and copies and dead letters go through the
    // routing committer, as the dispatcher's batches do, to wherever their partition lives.
    void build_fanout() {
        dead_letterer_ =
            std::make_unique<queue::DeadLetterer>(clock_, *store_, *consume_, *routing_committer_);
        dead_letter_task_ = std::make_unique<PeriodicTask>(
            "narad-deadletter", clock_, Millis(200), [this] { (void)dead_letterer_->run_once(); });
        fanout::FanoutOptions options;
        options.max_batch_records = static_cast<uint32_t>(config_.fanout.max_batch_records);
        options.max_batch_bytes = static_cast<uint64_t>(config_.fanout.max_batch_bytes);
        options.linger = Millis(config_.fanout.linger_ms);
        options.owns = [this](const meta::MetaState& state, std::string_view topic,
                              PartitionId partition) {
            const meta::Assignment* assignment = state.find_assignment(topic, partition);
            return assignment == nullptr ? state.members.empty()
                                         : assignment->owner.value() == config_.cluster.node_id;
        };
        options.installed_links = [this](std::string_view topic, PartitionId partition) {
            std::vector<fanout::LinkRef> links;
            auto marker = move::read_marker(fs_, logs_->partition_directory(topic, partition));
            if (marker.is_ok()) {
                for (const move::ChildLink& link : marker->children) {
                    links.push_back({link.child, link.attach_epoch});
                }
            }
            return links;
        };
        fanout_ = std::make_unique<fanout::FanoutEngine>(clock_, fs_, *store_, *logs_,
                                                         *routing_committer_, std::move(options));
    }

    // Cluster routing (net/peer_pool, wal/routing_committer, wal/owner_liveness): calls for
    // partitions owned elsewhere go to their owners over the cluster port. With a single-node
    // metastore (no members) every partition is local and nothing here changes behaviour.
    void build_routing() {
        liveness_ = std::make_unique<wal::OwnerLiveness>(
            clock_, std::chrono::duration_cast<Millis>(config_.cluster.dead_after));
        net::PeerPoolOptions peer_options;
        if (plane_access_ == net::PlaneAccess::proved) peer_options.secrets = cluster_secrets_;
        peer_options.tls = cluster_client_tls();
        peers_ = std::make_unique<net::PeerPool>(
            [this](const NodeId& node) -> std::optional<std::string> {
                meta::MetaSnapshot snapshot = store_->snapshot();
                const meta::MemberInfo* member = snapshot->find_member(node);
                if (member == nullptr || member->cluster_addr.empty()) return std::nullopt;
                return member->cluster_addr;
            },
            peer_options);
        routing_committer_ = std::make_unique<wal::RoutingCommitter>(
            *store_, NodeId(config_.cluster.node_id), *committer_, *peers_);
        reroute_ = std::make_unique<wal::DeadOwnerReroute>(*store_, *liveness_);
        // Forwarded consumes park here for up to their wait: more threads than the blocking pool.
        routing_pool_ = std::make_unique<ThreadPool>("narad-route", 16, 1'000);
        commit_pool_ = std::make_unique<ThreadPool>("narad-commit", 8, 10'000);
    }

    // http.metrics_addr: a listener of its own for /metrics, /healthz and /readyz, without the
    // API's cross-site guard (it takes no writes).
    Status build_metrics_port(const net::ServerOptions& public_options) {
        if (config_.http.metrics_addr.empty()) return Status::ok();
        auto address = split_host_port(config_.http.metrics_addr);
        if (!address.is_ok()) return address.status().with_context("http.metrics_addr");
        net::ServerOptions options = public_options;
        options.address = address->first.empty() ? "0.0.0.0" : address->first;
        options.port = address->second;
        options.threads = 1;
        options.body_limit_ceiling_bytes = 0;
        metrics_router_ = std::make_unique<api::Router>(clock_, api::ContentTypeGuard::off);
        api::register_health_routes(*metrics_router_, health_routes(), api::MetricsRoute::served);
        metrics_server_ = std::make_unique<net::HttpServer>(options, *metrics_router_);
        return Status::ok();
    }

    // The node-to-node port (always served: other nodes join through it), behind the cluster
    // handshake unless the plane is open (settle_cluster_secrets).
    Status build_cluster_port(const net::ServerOptions& public_options) {
        auto address = split_host_port(config_.cluster.addr);
        if (!address.is_ok()) return address.status().with_context("cluster.addr");
        net::ServerOptions options = public_options;
        options.address = address->first.empty() ? "0.0.0.0" : address->first;
        options.port = address->second;
        // A dispatcher batch (4 MiB of payload plus framing) must fit.
        options.body_limit_bytes = 16ull << 20;
        // Mutual TLS with the cluster's own files, never the API port's certificate.
        options.tls.reset();
        if (auto files = cluster_tls_files()) options.tls = *files;
        internal_router_ =
            std::make_unique<api::InternalRouter>(clock_, cluster_secrets_, plane_access_);
        api::Router& internal = internal_router_->routes();
        commit_context_ = std::make_unique<api::InternalCommitContext>(api::InternalCommitContext{
            *store_, NodeId(config_.cluster.node_id), *committer_, *commit_pool_});
        api::register_internal_commit_route(internal, *commit_context_);
        move_routes_ = std::make_unique<api::MoveRouteContext>(
            api::MoveRouteContext{*handoff_, *runner_, *move_pool_});
        api::register_internal_move_routes(internal, *move_routes_);
        api::register_internal_message_routes(internal, api::InternalMessageRouteContext{
                                                            .messages = message_routes(),
                                                            .logs = *logs_,
                                                            .blocking = *blocking_,
                                                            .fanout = fanout_.get(),
                                                        });
        api::register_controller_topic_routes(internal, topic_routes());
        api::register_controller_move_routes(internal, move_routes());
        api::register_controller_decommission_routes(internal, decommission_routes());
        api::register_membership_routes(
            internal,
            api::MembershipRouteContext{
                .join = [this](std::string_view body) { return cluster_->handle_join(body); },
                .host_etcd = [this] { return cluster_->host_etcd(); },
                .pool = *blocking_,
            });
        api::register_node_status_route(internal, *node_status_);
        cluster_server_ = std::make_unique<net::HttpServer>(options, *internal_router_);
        return Status::ok();
    }

    // What the controller asks of other nodes while it drives a decommission.
    void wire_controller_hooks() {
        net::PeerPool* peers = peers_.get();
        cluster_->controller().set_hooks(cluster::ControllerHooks{
            .node_status = [peers](const NodeId& node) -> Result<cluster::NodeStatus> {
                NARAD_ASSIGN_OR_RETURN(std::string body,
                                       api::fetch_node_status(*peers, node, Millis(2'000)));
                return api::decode_node_status(body);
            },
            .host_etcd =
                [peers](const NodeId& node) {
                    return api::ask_to_host_etcd(*peers, node, Millis(60'000));
                },
        });
    }

    // This node's own member record: a drain reaches the produce gate, and the record's removal
    // at the end of a decommission stops the node (on the replica's thread: nothing blocks).
    void follow_own_record(const meta::MetaState& state) {
        const meta::MemberInfo* self = state.find_member(NodeId(config_.cluster.node_id));
        if (self != nullptr) {
            if (self->draining != produce_gate_.draining()) {
                NARAD_LOG_INFO(self->draining
                                   ? "this node is draining: it refuses client produce and "
                                     "sheds its partitions"
                                   : "this node is no longer draining: it takes client produce");
            }
            produce_gate_.set_draining(self->draining);
            had_record_ = true;
            return;
        }
        if (!had_record_ || !produce_gate_.draining() || decommissioned_.exchange(true)) return;
        NARAD_LOG_INFO(
            "this node has been decommissioned: it owns no partition, its ingress WAL is empty "
            "and it has left the cluster; it stops serving now");
        if (on_decommissioned_) on_decommissioned_();
    }

    // Partition moves (docs/moves.md): this node's source side, and its runner of moves targeted
    // here. Freeze keys a previous run left are removed before any commit is taken.
    Status build_moves() {
        const ClusterConfig& cluster = config_.cluster;
        const MoveConfig& move = config_.move;
        move::HandoffOptions handoff_options;
        handoff_options.freeze_ttl = std::chrono::duration_cast<Millis>(move.freeze_ttl);
        handoff_ =
            std::make_unique<move::HandoffService>(clock_, fs_, *store_, NodeId(cluster.node_id),
                                                   *logs_, gates_, *consume_, handoff_options);
        Status released = handoff_->release_stale_freezes();
        if (!released.is_ok()) return released.with_context("releasing stale freeze keys");
        source_client_ = std::make_unique<api::PeerSourceClient>(*peers_, Millis(30'000),
                                                                 handoff_options.freeze_ttl);
        move::MoveOptions options;
        options.freeze_ttl = handoff_options.freeze_ttl;
        cutovers_ = std::make_unique<move::CutoverSlots>(kConcurrentCutovers);
        options.lag_bytes = static_cast<uint64_t>(move.lag_bytes);
        options.copy.bytes_per_second = static_cast<uint64_t>(move.copy_rate);
        options.max_passes = static_cast<uint32_t>(move.max_passes);
        options.max_stalled_passes = static_cast<uint32_t>(move.passes_without_progress);
        options.force_promote_after = std::chrono::duration_cast<Millis>(move.force_promote_after);
        options.source_dead_after = std::chrono::duration_cast<Millis>(cluster.dead_after);
        move_context_ = std::make_unique<move::MoveContext>(move::MoveContext{
            .clock = clock_,
            .fs = fs_,
            .store = *store_,
            .self = NodeId(cluster.node_id),
            .data_dir = config_.storage.data_dir,
            .logs = *logs_,
            .guards = guards_,
            .consume = *consume_,
            .handoff = *handoff_,
            .source = *source_client_,
            .options = options,
            .cutovers = cutovers_.get(),
        });
        move::RunnerOptions runner_options;
        runner_options.sweep_every = static_cast<uint32_t>(move.sweep_every);
        runner_ = std::make_unique<move::MoveRunner>(*move_context_, runner_options);
        move_pool_ = std::make_unique<ThreadPool>("narad-move", 4, 1'000);
        return Status::ok();
    }

    // Loads the TLS files again when one of them changed since the last load.
    void reload_tls_if_changed() {
        bool changed = false;
        {
            MutexLock lock(tls_reload_mutex_);
            changed = tls_files_stamp() != tls_stamp_;
        }
        if (!changed) return;
        NARAD_LOG_INFO("a TLS file changed; reloading");
        (void)reload_tls();
    }

    // The services each route group uses (api/*_routes.h), built from this node's components.
    api::AccessContext access() const { return {*store_, authenticator_.get()}; }
    api::OwnerRouting owner_routing() const {
        return {.pool = *routing_pool_,
                .self = NodeId(config_.cluster.node_id),
                .peers = peers_.get(),
                .liveness = liveness_.get()};
    }
    api::ControllerForward controller_forward() {
        return {.store = *store_,
                .is_controller = [this] { return cluster_->controller().is_controller(); },
                .routing = owner_routing()};
    }
    api::ClusterLimits cluster_limits() const {
        return {.dead_after = std::chrono::duration_cast<Millis>(config_.cluster.dead_after),
                .min_voters = static_cast<uint32_t>(config_.cluster.min_voters),
                .max_in_flight_moves = static_cast<uint32_t>(config_.move.max_in_flight)};
    }
    // Ready once started, a controller is known and, with security on, the cluster has its root
    // user (before that, nobody could sign in).
    bool ready_to_serve() const {
        return ready_.load() && !store_->snapshot()->controller.value().empty() &&
               (!config_.security.enabled || root_seeded_.load());
    }

    api::HealthRouteContext health_routes() {
        return {
            .ready = [this] { return ready_to_serve(); },
            .shutting_down = [this] { return shutting_down_.load(); },
            .blocking = *blocking_,
        };
    }
    api::MessageRouteContext message_routes() {
        return {
            .clock = clock_,
            .store = *store_,
            .produce = *produce_,
            .consume = *consume_,
            .max_consume_wait = std::chrono::duration_cast<Millis>(config_.http.max_consume_wait),
            .produce_gate = &produce_gate_,
            .shutting_down = [this] { return shutting_down_.load(); },
            .access = access(),
            .routing = owner_routing(),
        };
    }
    api::TopicRouteContext topic_routes() {
        return {
            .store = *store_,
            .topics = *topics_,
            .logs = *logs_,
            .blocking = *blocking_,
            .purge_topic = [this](std::string_view t) { return backend_->purge_if_deleted(t); },
            .ready = [this] { return ready_to_serve(); },
            .fanout = fanout_.get(),
            .access = access(),
            .routing = owner_routing(),
            .controller = controller_forward(),
        };
    }
    api::PublicMoveRouteContext move_routes() {
        return {
            .clock = clock_,
            .store = *store_,
            .dead_after = cluster_limits().dead_after,
            .runner = runner_.get(),
            .blocking = *blocking_,
            .audit = audit_.get(),
            .routing = owner_routing(),
            .controller = controller_forward(),
        };
    }
    api::DecommissionRouteContext decommission_routes() {
        return {
            .clock = clock_,
            .self = NodeId(config_.cluster.node_id),
            .etcd_store = &cluster_->store(),
            .limits = cluster_limits(),
            .blocking = *blocking_,
            .audit = audit_.get(),
            .controller = controller_forward(),
        };
    }

    // The API port's routes.
    void register_public_routes() {
        api::Router& router = *router_;
        api::register_topic_routes(router, topic_routes());
        api::register_message_routes(router, message_routes());
        api::register_health_routes(router, health_routes(),
                                    config_.http.metrics_addr.empty()
                                        ? api::MetricsRoute::served
                                        : api::MetricsRoute::elsewhere);
        api::register_user_routes(router, api::UserRouteContext{
                                              .clock = clock_,
                                              .store = *store_,
                                              .blocking = *blocking_,
                                              .access = access(),
                                              .audit = audit_.get(),
                                          });
        api::register_cluster_routes(
            router, api::ClusterRouteContext{
                        .clock = clock_,
                        .store = *store_,
                        .cluster_name = config_.cluster.name,
                        .limits = cluster_limits(),
                        .is_controller = [this] { return cluster_->controller().is_controller(); },
                        .etcd_members = [this] { return cluster_->client().member_list(); },
                        .node_status = node_status_.get(),
                        .blocking = *blocking_,
                        .routing = owner_routing(),
                    });
        api::register_decommission_routes(router, decommission_routes());
        api::register_public_move_routes(router, move_routes());
    }

    Config config_;
    io::FileSystem& fs_ = node_file_system(config_.storage.data_dir);
    Clock& clock_ = SystemClock::instance();
    storage::TopicGuards guards_;
    storage::PartitionGates gates_;
    std::unique_ptr<ClusterRuntime> cluster_;
    meta::MetaStore* store_ = nullptr;  // the cluster's metastore
    std::unique_ptr<storage::LogManager> logs_;
    std::unique_ptr<queue::OffsetCommitter> offsets_;
    std::unique_ptr<api::InFlightLimits> in_flight_;
    std::unique_ptr<api::Router> router_;
    std::unique_ptr<net::HttpServer> server_;
    std::unique_ptr<api::Router> metrics_router_;
    std::unique_ptr<net::HttpServer> metrics_server_;
    std::unique_ptr<queue::ConsumeService> consume_;
    std::unique_ptr<ThreadPool> reads_;  // consume reads, off the I/O threads
    std::unique_ptr<TopicBackend> backend_;
    std::unique_ptr<wal::IngressWal> wal_;
    std::unique_ptr<wal::LocalCommitter> committer_;
    std::unique_ptr<api::AuditLog> audit_;
    std::unique_ptr<auth::Authenticator> authenticator_;
    std::unique_ptr<PeriodicTask> root_seeding_;  // until the cluster has its root user
    std::atomic<bool> root_seeded_{false};
    std::unique_ptr<wal::Dispatcher> dispatcher_;
    std::unique_ptr<wal::DirectCommits> direct_;
    std::unique_ptr<fanout::FanoutEngine> fanout_;
    std::unique_ptr<queue::DeadLetterer> dead_letterer_;
    std::unique_ptr<PeriodicTask> dead_letter_task_;
    std::unique_ptr<wal::ProduceService> produce_;
    std::unique_ptr<meta::TopicFrontend> topics_;
    std::unique_ptr<ThreadPool> blocking_;
    std::unique_ptr<DeletedTopicPurger> purger_;
    std::unique_ptr<storage::RetentionService> retention_;
    std::unique_ptr<PeriodicTask> tls_watch_;  // notices renewed TLS files
    // Cluster routing (build_routing / build_cluster_port).
    std::unique_ptr<wal::OwnerLiveness> liveness_;
    std::unique_ptr<net::PeerPool> peers_;
    std::unique_ptr<wal::RoutingCommitter> routing_committer_;
    std::unique_ptr<wal::DeadOwnerReroute> reroute_;
    std::unique_ptr<ThreadPool> routing_pool_;
    std::unique_ptr<ThreadPool> commit_pool_;
    auth::ClusterSecrets cluster_secrets_;  // settle_cluster_secrets()
    Mutex tls_reload_mutex_;
    std::string tls_stamp_ GUARDED_BY(tls_reload_mutex_);  // tls_files_stamp() at the last load
    net::PlaneAccess plane_access_ = net::PlaneAccess::proved;
    std::unique_ptr<api::InternalRouter> internal_router_;
    std::unique_ptr<api::InternalCommitContext> commit_context_;
    std::unique_ptr<net::HttpServer> cluster_server_;
    std::unique_ptr<move::HandoffService> handoff_;
    std::unique_ptr<api::PeerSourceClient> source_client_;
    std::unique_ptr<move::CutoverSlots> cutovers_;
    std::unique_ptr<move::MoveContext> move_context_;
    std::unique_ptr<move::MoveRunner> runner_;
    std::unique_ptr<ThreadPool> move_pool_;
    std::unique_ptr<api::MoveRouteContext> move_routes_;
    api::ProduceGate produce_gate_;
    std::unique_ptr<api::NodeStatusSources> node_status_;
    std::unique_ptr<DataDirMetrics> data_metrics_;
    std::atomic<bool> had_record_{false};
    std::atomic<bool> decommissioned_{false};
    uint64_t watch_id_ = 0;
    std::atomic<bool> ready_{false};
    std::atomic<bool> shutting_down_{false};
    bool started_ = false;
    bool stopped_ = false;
};

Node::Node(Config config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Node::~Node() = default;
Status Node::start() { return impl_->start(); }
Status Node::reload_tls() { return impl_->reload_tls(); }
void Node::stop() { impl_->stop(); }
uint16_t Node::http_port() const { return impl_->http_port(); }
void Node::on_decommissioned(std::function<void()> callback) {
    impl_->on_decommissioned_ = std::move(callback);
}
bool Node::ready() const { return impl_->ready(); }

}  // namespace narad::node
