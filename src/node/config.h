// Narad's configuration: every setting with its default, as Narad 3.2 defines them, plus ours.
// Loaded in layers (config_loader.h): defaults, then the JSON file, then NARAD_* environment
// variables, then flags; then validated as a whole. The table in config_loader.cc names each
// setting once (file key, variable, flag, rule, doc line). A plain value, built once at start-up
// and read-only afterwards.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/clock.h"

namespace narad::node {

using std::chrono::nanoseconds;

struct HttpConfig {
    std::string addr = ":7942";
    std::string pprof_addr;  // accepted for compatibility; Narad (C++) has no pprof
    nanoseconds read_timeout = std::chrono::seconds(10);
    nanoseconds write_timeout = std::chrono::seconds(30);
    nanoseconds idle_timeout = std::chrono::seconds(60);
    nanoseconds shutdown_grace = std::chrono::seconds(10);
    nanoseconds max_consume_wait = std::chrono::seconds(10);
    int64_t max_header_bytes = 65'536;  // request line plus headers; larger gets 431
    int64_t max_connections = 4096;     // 0: no cap; beyond it, clients wait in the backlog
    int64_t max_connections_per_address = 1024;  // 0: no cap; beyond it, 503 and closed
    // Concurrent consumes / produces per identity (the client's address until users exist) per
    // node; 0: no cap. More get 429.
    int64_t max_consume_in_flight_per_identity = 1024;
    int64_t max_produce_in_flight_per_identity = 0;
    // Bodies of batch produces over 1 MiB being read at once, per node; 0: no budget.
    int64_t max_batch_body_bytes_in_flight = 256ll << 20;
    std::string metrics_addr;  // a second listener for /metrics, /healthz and /readyz
    bool metrics_unauthenticated = false;
};

struct PeerConfig {
    std::string id;
    std::string addr;
};

struct ClusterConfig {
    std::string addr = ":7943";
    std::string node_id;  // empty: the host name
    std::vector<PeerConfig> peers;
    std::vector<std::string> initial_members;
    std::string advertise_addr;  // host:port peers dial for this node's cluster port
    // Narad's Raft tuning: validated as Narad does, without effect on the etcd metastore.
    int64_t raft_snapshot_threshold = 8192;
    nanoseconds raft_snapshot_interval = std::chrono::seconds(120);
    int64_t raft_trailing_logs = 10'240;
    // Ours (the etcd metastore, docs/cluster.md):
    std::string name = "narad";               // the etcd key prefix /narad/<name>/
    std::string join;                         // host:port of a member's cluster port
    std::vector<std::string> meta_endpoints;  // an external etcd; empty: host a local member
    uint16_t etcd_client_port = 7944;
    uint16_t etcd_peer_port = 7945;
    std::string etcd_binary = "etcd";
    int64_t voters = 3;  // nodes hosting an etcd voter (odd, 1 to 5)
    // A decommission never leaves fewer etcd voters than this (the spec's MinVoters).
    int64_t min_voters = 3;
    // A node whose liveness key has been gone this long is dead (Narad compiles in 30 s):
    // producers skip its partitions and its queued records go to live siblings.
    nanoseconds dead_after = std::chrono::seconds(30);
    // The liveness lease's TTL: a killed node's key vanishes this long after its last keep-alive.
    nanoseconds lease_ttl = std::chrono::seconds(10);
    nanoseconds controller_tick = std::chrono::seconds(10);
};

// Partition moves (docs/moves.md, "Settings"): the spec's constants, Narad's compiled-in values,
// settable here (the `move` block, NARAD_MOVE_*) so tests and operators can change them.
struct MoveConfig {
    nanoseconds freeze_ttl = std::chrono::seconds(30);
    int64_t lag_bytes = 4ll << 20;
    int64_t copy_rate = 0;  // bytes per second; 0: unthrottled
    int64_t max_in_flight = 8;
    int64_t max_passes = 20;
    int64_t passes_without_progress = 3;
    nanoseconds force_promote_after = std::chrono::minutes(2);
    nanoseconds dead_target_abort_after = std::chrono::minutes(2);
    int64_t sweep_every = 30;  // move-runner ticks
    // The owner's self-fence ends this long before its liveness lease could expire (at most a
    // quarter of cluster.lease_ttl).
    nanoseconds self_fence_margin = std::chrono::seconds(2);
};

struct StorageConfig {
    std::string data_dir = "data";
    std::string codec = "none";                 // none | zstd
    std::string compression_level = "fastest";  // fastest | default | better | best
    int64_t idle_log_eviction_ms = 1'800'000;   // 0 disables
    int64_t cold_retention_walk_ms = 300'000;   // retention of closed logs; 0 disables
    // How long an acked position may wait before it is synced (ours: every write is synced).
    int64_t consumer_offset_commit_interval_ms = 100;
    bool ingress_wal_prealloc = false;  // accepted; our WAL has no zero-filled spares
    // Internal settings (not configurable from the file, as in Narad).
    uint64_t segment_bytes = 64ull << 20;
    int64_t retention_check_interval_ms = 60'000;
    uint64_t wal_segment_bytes = 32ull << 20;
    uint64_t wal_max_pending_bytes = 256ull << 20;
    // Partition commits are bound by fdatasync, not CPU: enough workers that a commit to one
    // partition never waits for another's sync.
    uint32_t dispatcher_threads = 8;
};

struct TopicDefaultsConfig {
    int64_t default_partitions = 3;
    int64_t max_partitions = 108;
    int64_t default_retention_age_ms = 604'800'000;
    int64_t default_visibility_timeout_ms = 30'000;
    int64_t default_max_in_flight_per_partition = 1024;
    int64_t default_max_acked_ahead_per_partition = 1024;
};

struct FanoutConfig {
    int64_t max_batch_records = 4096;
    int64_t max_batch_bytes = 4ll << 20;
    int64_t linger_ms = 25;
};

struct LogConfig {
    std::string level = "info";
    std::string format = "json";
};

struct SecurityConfig {
    bool enabled = true;
    std::string admin_password;           // environment only
    std::string cluster_secret;           // environment only
    std::string cluster_secret_previous;  // environment only
    std::string tls_cert_file;            // the API port's TLS, beyond Narad
    std::string tls_key_file;
    std::string cluster_tls_cert_file;
    std::string cluster_tls_key_file;
    std::string cluster_tls_ca_file;
    bool allow_plaintext_raft = false;
    bool allow_insecure_cluster = false;
    bool allow_legacy_cluster_auth = false;
};

// Narad's remote-cluster limits: accepted and validated; remotes are not built yet.
struct RemotesConfig {
    std::vector<std::string> allowed_hosts;
    std::vector<int64_t> allowed_ports{443};
    std::vector<std::string> allow_addresses;
    int64_t max_held_bytes = 256ll << 20;
    bool api_hop_encrypted = false;
};

struct Config {
    HttpConfig http;
    ClusterConfig cluster;
    MoveConfig move;
    StorageConfig storage;
    TopicDefaultsConfig topic;
    FanoutConfig fanout;
    LogConfig log;
    SecurityConfig security;
    RemotesConfig remotes;
    // Settings given (file or environment) that are accepted but have no effect here, each with
    // the reason; start-up logs them.
    std::vector<std::string> inert;
};

}  // namespace narad::node
