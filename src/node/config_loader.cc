#include "node/config_loader.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <variant>

#include "base/duration.h"
#include "base/log.h"
#include "base/names.h"
#include "base/url.h"
#include "io/file_system.h"

namespace narad::node {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Problems = std::vector<std::string>;

// Where a setting's value lives in Config; its type decides how the file and the environment
// spell it.
using Target =
    std::variant<std::string*, int64_t*, nanoseconds*, bool*, uint16_t*, std::vector<std::string>*,
                 std::vector<int64_t>*, std::vector<PeerConfig>*>;

// Which Go parser Narad uses for an integer variable: its name is in the error text.
enum class IntSyntax { parse_int, atoi };
enum class EmptyString { is_a_value, keeps_default };

// One setting, described once: the file key ("section.name"; empty for a variable only), the
// variable (empty for the file only), the `narad serve` flag that also sets it, where it lives,
// its check (cross-setting rules sit with the setting they constrain) and its documentation. A
// non-empty `inert` marks a Narad setting that is read and checked but has no effect here, and
// says why; start-up logs it when it is given.
struct Setting {
    std::string_view key;
    std::string_view env;
    std::string_view flag;
    Target (*bind)(Config&);
    void (*check)(const Config&, Problems&) = nullptr;
    std::string_view rule;
    std::string_view doc;
    std::string_view inert;
    IntSyntax syntax = IntSyntax::parse_int;
    EmptyString empty = EmptyString::is_a_value;
};

#define NARAD_FIELD(member) [](Config& c) -> Target { return &c.member; }

void require(Problems& problems, bool ok, std::string message) {
    if (!ok) problems.push_back(std::move(message));
}

std::string trim(std::string_view s) {
    size_t begin = s.find_first_not_of(" \t\r\n");
    if (begin == std::string_view::npos) return "";
    size_t end = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(begin, end - begin + 1));
}

std::vector<std::string> split_trimmed(std::string_view s, char separator) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        size_t end = s.find(separator, start);
        if (end == std::string_view::npos) end = s.size();
        std::string item = trim(s.substr(start, end - start));
        if (!item.empty()) out.push_back(std::move(item));
        start = end + 1;
    }
    return out;
}

// Go's strconv.Atoi / ParseInt: optional sign, decimal digits, must fit in int64.
Result<int64_t> parse_int(const std::string& text, const char* function) {
    const char* s = text.c_str();
    char* end = nullptr;
    errno = 0;
    long long value = std::strtoll(s, &end, 10);
    bool digits_only = !text.empty() && text.find_first_of(" \t\n") == std::string::npos;
    if (!digits_only || end == s || *end != '\0') {
        return Status(Errc::invalid_argument,
                      std::string(function) + ": parsing \"" + text + "\": invalid syntax");
    }
    if (errno == ERANGE) {
        return Status(Errc::invalid_argument,
                      std::string(function) + ": parsing \"" + text + "\": value out of range");
    }
    return static_cast<int64_t>(value);
}

Result<bool> parse_bool(const std::string& text) {
    if (text == "1" || text == "t" || text == "T" || text == "TRUE" || text == "true" ||
        text == "True") {
        return true;
    }
    if (text == "0" || text == "f" || text == "F" || text == "FALSE" || text == "false" ||
        text == "False") {
        return false;
    }
    return Status(Errc::invalid_argument,
                  "strconv.ParseBool: parsing \"" + text + "\": invalid syntax");
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool addr_matches(const std::string& a, const std::string& b) {
    if (a == b) return true;
    if (a.starts_with(":")) return b.ends_with(a);
    if (b.starts_with(":")) return a.ends_with(b);
    return false;
}

// How an address is used: one to listen on may leave the host empty and take port 0 (any free
// port); one that others dial must name a host and a real port.
enum class AddressUse { listen, dial };

// A listen or peer address must name a port; checked here so that nothing later has to assume it
// (a missing port is an error at start-up, never an abort). Empty is left to the caller.
void check_address(Problems& problems, std::string_view field, const std::string& address,
                   AddressUse use) {
    if (trim(address).empty()) return;
    auto split = split_host_port(address);
    if (!split.is_ok()) {
        problems.push_back(std::string(field) + " \"" + address +
                           "\" must be host:port with a port from 0 to 65535");
    } else if (use == AddressUse::dial && (split->first.empty() || split->second == 0)) {
        problems.push_back(std::string(field) + " \"" + address +
                           "\" must name a host and a port other than 0");
    }
}

void check_positive(Problems& problems, nanoseconds value, std::string_view key) {
    require(problems, value.count() > 0, std::string(key) + " must be > 0");
}

void check_max_consume_wait(const Config& c, Problems& problems) {
    const HttpConfig& http = c.http;
    require(problems, http.max_consume_wait.count() >= 0, "http.max_consume_wait must be >= 0");
    if (http.write_timeout.count() > 0 && http.max_consume_wait >= http.write_timeout) {
        problems.push_back("http.max_consume_wait (" + format_duration(http.max_consume_wait) +
                           ") must be < http.write_timeout (" +
                           format_duration(http.write_timeout) + ")");
    }
    if (http.max_consume_wait > http.shutdown_grace) {
        problems.push_back("http.max_consume_wait (" + format_duration(http.max_consume_wait) +
                           ") must be <= http.shutdown_grace (" +
                           format_duration(http.shutdown_grace) + ")");
    }
}

void check_metrics_addr(const Config& c, Problems& problems) {
    const std::string& addr = c.http.metrics_addr;
    if (trim(addr).empty()) return;
    check_address(problems, "http.metrics_addr", addr, AddressUse::listen);
    require(problems, addr != c.http.addr && addr != c.cluster.addr,
            "http.metrics_addr must differ from http.addr and cluster.addr");
}

void check_meta_endpoints(const Config& c, Problems& problems) {
    for (const std::string& endpoint : c.cluster.meta_endpoints) {
        std::string_view rest = endpoint;
        bool https = rest.starts_with("https://");
        if (!https && !rest.starts_with("http://")) {
            problems.push_back("cluster.meta_endpoints: \"" + endpoint +
                               "\" must be http://host:port or https://host:port");
            continue;
        }
        if (https && c.security.cluster_tls_cert_file.empty()) {
            problems.push_back("cluster.meta_endpoints: \"" + endpoint +
                               "\" is https, which needs security.cluster_tls_* (the node's "
                               "client certificate and the authority of etcd's)");
            continue;
        }
        rest.remove_prefix(https ? 8 : 7);
        check_address(problems, "cluster.meta_endpoints",
                      std::string(rest.substr(0, rest.find('/'))), AddressUse::dial);
    }
}

// Narad's rules for its static voter list, kept so that a Narad file that passes there passes here.
void check_peers(const Config& c, Problems& problems) {
    const ClusterConfig& cluster = c.cluster;
    if (cluster.peers.empty()) return;
    require(problems, !cluster.node_id.empty(),
            "cluster.node_id must not be empty when cluster.peers is set");
    if (cluster.peers.size() < 3) {
        problems.push_back("cluster.peers must list at least 3 voters including self, got " +
                           std::to_string(cluster.peers.size()));
    }
    std::vector<std::string> ids, addrs;
    bool has_id = false, has_addr = false, has_voter = false;
    for (size_t i = 0; i < cluster.peers.size(); ++i) {
        const PeerConfig& peer = cluster.peers[i];
        std::string where = "cluster.peers[" + std::to_string(i) + "]";
        require(problems, !peer.id.empty(), where + ".id must not be empty");
        require(problems, !peer.addr.empty(), where + ".addr must not be empty");
        if (std::find(ids.begin(), ids.end(), peer.id) != ids.end()) {
            problems.push_back("cluster peer id \"" + peer.id + "\" must be unique");
        }
        if (std::find(addrs.begin(), addrs.end(), peer.addr) != addrs.end()) {
            problems.push_back("cluster peer addr \"" + peer.addr + "\" must be unique");
        }
        ids.push_back(peer.id);
        addrs.push_back(peer.addr);
        has_id |= peer.id == cluster.node_id;
        has_addr |= addr_matches(peer.addr, cluster.addr);
        has_voter |= peer.id == cluster.node_id && addr_matches(peer.addr, cluster.addr);
    }
    require(problems, has_id,
            "cluster.peers must include local node id \"" + cluster.node_id + "\"");
    require(problems, has_addr,
            "cluster.peers must include local cluster address \"" + cluster.addr + "\"");
    require(problems, has_voter,
            "cluster.peers must include local voter \"" + cluster.node_id + "\"@" + cluster.addr);
}

void check_default_partitions(const Config& c, Problems& problems) {
    const TopicDefaultsConfig& topic = c.topic;
    require(problems, topic.default_partitions >= 3, "topic.default_partitions must be >= 3");
    if (topic.default_partitions > topic.max_partitions) {
        problems.push_back("topic.default_partitions (" + std::to_string(topic.default_partitions) +
                           ") must not exceed topic.max_partitions (" +
                           std::to_string(topic.max_partitions) + ")");
    }
}

void check_default_retention(const Config& c, Problems& problems) {
    int64_t retention = c.topic.default_retention_age_ms;
    if (retention < 0) {
        problems.push_back("topic.default_retention_age_ms must be >= 0");
    } else if (retention != 0 && retention < 3'600'000) {
        problems.push_back("topic.default_retention_age_ms (" + std::to_string(retention) +
                           ") must be >= 3600000 (1 hour) or 0 (keep forever)");
    }
}

void check_default_visibility(const Config& c, Problems& problems) {
    int64_t visibility = c.topic.default_visibility_timeout_ms;
    int64_t retention = c.topic.default_retention_age_ms;
    require(problems, visibility > 0, "topic.default_visibility_timeout_ms must be > 0");
    if (retention > 0 && visibility > retention) {
        problems.push_back("topic.default_visibility_timeout_ms (" + std::to_string(visibility) +
                           ") must not exceed topic.default_retention_age_ms (" +
                           std::to_string(retention) + ")");
    }
}

void check_cluster_tls(const Config& c, Problems& problems) {
    const SecurityConfig& s = c.security;
    int given = !s.cluster_tls_cert_file.empty() + !s.cluster_tls_key_file.empty() +
                !s.cluster_tls_ca_file.empty();
    require(problems, given == 0 || given == 3,
            "security.cluster_tls_cert_file, security.cluster_tls_key_file and "
            "security.cluster_tls_ca_file must be set together or not at all");
}

void check_api_tls(const Config& c, Problems& problems) {
    const SecurityConfig& s = c.security;
    require(problems, s.tls_cert_file.empty() == s.tls_key_file.empty(),
            "security.tls_cert_file and security.tls_key_file must be set together or not at all");
}

void check_cluster_secret(const Config& c, Problems& problems) {
    const SecurityConfig& s = c.security;
    if (s.enabled && (!c.cluster.peers.empty() || !c.cluster.join.empty())) {
        require(problems, !s.cluster_secret.empty(),
                "security.cluster_secret (NARAD_CLUSTER_SECRET) is required when security is "
                "enabled with cluster peers or --join");
    }
    require(problems, s.cluster_secret_previous.empty() || !s.cluster_secret.empty(),
            "NARAD_CLUSTER_SECRET_PREVIOUS is set without NARAD_CLUSTER_SECRET: during a rotation "
            "the new secret is NARAD_CLUSTER_SECRET and the old one NARAD_CLUSTER_SECRET_PREVIOUS");
}

bool remotes_configured(const RemotesConfig& r) {
    RemotesConfig defaults;
    return !r.allowed_hosts.empty() || r.allowed_ports != defaults.allowed_ports ||
           !r.allow_addresses.empty() || r.max_held_bytes != defaults.max_held_bytes ||
           r.api_hop_encrypted;
}

// A CIDR such as 127.0.0.0/8 or fd00::/8: an address, a slash, a prefix length that fits it.
bool is_cidr(const std::string& text) {
    auto slash = text.find('/');
    if (slash == std::string::npos || slash + 1 >= text.size()) return false;
    std::string address = text.substr(0, slash);
    std::string bits = text.substr(slash + 1);
    if (bits.size() > 3 || !std::all_of(bits.begin(), bits.end(), ::isdigit)) return false;
    bool v6 = address.find(':') != std::string::npos;
    auto parsed = split_host_port(v6 ? "[" + address + "]:0" : address + ":0");
    if (!parsed.is_ok()) return false;
    if (!v6) {
        int dots = 0;
        for (char ch : address) {
            if (ch == '.')
                ++dots;
            else if (!std::isdigit(static_cast<unsigned char>(ch)))
                return false;
        }
        if (dots != 3) return false;
    }
    return std::stoi(bits) <= (v6 ? 128 : 32);
}

void check_remotes(const Config& c, Problems& problems) {
    const RemotesConfig& r = c.remotes;
    if (remotes_configured(r) && !c.security.enabled) {
        problems.push_back(
            "remotes settings require security.enabled: a node without API authorization must "
            "not hold remote credentials");
    }
    require(problems, !r.allowed_ports.empty(),
            "remotes.allowed_ports must name at least one port");
    require(problems,
            std::all_of(r.allowed_ports.begin(), r.allowed_ports.end(),
                        [](int64_t p) { return p >= 1 && p <= 65535; }),
            "remotes.allowed_ports entries must be 1..65535");
    require(problems, std::all_of(r.allow_addresses.begin(), r.allow_addresses.end(), is_cidr),
            "remotes.allow_addresses entries must be CIDRs such as 127.0.0.0/8");
    require(problems,
            std::none_of(r.allowed_hosts.begin(), r.allowed_hosts.end(),
                         [](const std::string& h) { return h.empty(); }),
            "remotes.allowed_hosts entries must not be empty");
    require(problems, r.max_held_bytes >= 0, "remotes.max_held_bytes must be >= 0");
}

constexpr std::string_view kNoGoRuntime = "this node is C++: it has no Go runtime to profile";
constexpr std::string_view kNoRaft =
    "the metastore is etcd (DESIGN.md); it keeps its own snapshots and Raft log";
constexpr std::string_view kStaticPeers =
    "members come from etcd and --join, not a static voter list; the list is checked as Narad "
    "checks it";
constexpr std::string_view kNoRemotes = "remote clusters are not built yet";

// Every setting, in the order the reference and the checks list them.
const std::vector<Setting>& settings() {
    static const std::vector<Setting> table = {
        // http
        {.key = "http.addr",
         .env = "NARAD_HTTP_ADDR",
         .flag = "--addr, --port",
         .bind = NARAD_FIELD(http.addr),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, !trim(c.http.addr).empty(), "http.addr must not be empty");
                 check_address(p, "http.addr", c.http.addr, AddressUse::listen);
                 require(p, c.http.addr != c.cluster.addr,
                         "http.addr and cluster.addr must differ");
             },
         .rule = "host:port; differs from cluster.addr",
         .doc = "Where the client API listens; `:7942` is every interface."},
        {.key = "http.pprof_addr",
         .env = "NARAD_HTTP_PPROF_ADDR",
         .flag = "--pprof-addr",
         .bind = NARAD_FIELD(http.pprof_addr),
         .doc = "Narad's Go profiler listener.",
         .inert = kNoGoRuntime},
        {.key = "http.read_timeout",
         .env = "NARAD_HTTP_READ_TIMEOUT",
         .bind = NARAD_FIELD(http.read_timeout),
         .check = [](const Config& c,
                     Problems& p) { check_positive(p, c.http.read_timeout, "http.read_timeout"); },
         .rule = "> 0",
         .doc = "The longest time to receive one request."},
        {.key = "http.write_timeout",
         .env = "NARAD_HTTP_WRITE_TIMEOUT",
         .bind = NARAD_FIELD(http.write_timeout),
         .check =
             [](const Config& c, Problems& p) {
                 check_positive(p, c.http.write_timeout, "http.write_timeout");
             },
         .rule = "> 0",
         .doc = "The longest time to send one response; longer than `http.max_consume_wait`."},
        {.key = "http.idle_timeout",
         .env = "NARAD_HTTP_IDLE_TIMEOUT",
         .bind = NARAD_FIELD(http.idle_timeout),
         .check = [](const Config& c,
                     Problems& p) { check_positive(p, c.http.idle_timeout, "http.idle_timeout"); },
         .rule = "> 0",
         .doc = "An idle keep-alive connection is closed after this."},
        {.key = "http.shutdown_grace",
         .env = "NARAD_HTTP_SHUTDOWN_GRACE",
         .bind = NARAD_FIELD(http.shutdown_grace),
         .check =
             [](const Config& c, Problems& p) {
                 check_positive(p, c.http.shutdown_grace, "http.shutdown_grace");
             },
         .rule = "> 0",
         .doc = "On SIGTERM, requests in flight get this long to finish."},
        {.key = "http.max_consume_wait",
         .env = "NARAD_HTTP_MAX_CONSUME_WAIT",
         .bind = NARAD_FIELD(http.max_consume_wait),
         .check = check_max_consume_wait,
         .rule = ">= 0, < http.write_timeout, <= http.shutdown_grace",
         .doc = "The longest long poll; a longer `wait` is cut to it (and the answer says so in "
                "`X-Narad-Wait-Clamped`). `0` means 30 s."},
        {.key = "http.max_header_bytes",
         .env = "NARAD_HTTP_MAX_HEADER_BYTES",
         .bind = NARAD_FIELD(http.max_header_bytes),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.http.max_header_bytes >= 4096 && c.http.max_header_bytes <= 1 << 20,
                         "http.max_header_bytes must be between 4096 and 1048576");
             },
         .rule = "4096 to 1048576",
         .doc = "The largest request line plus headers; a larger one is answered `431`."},
        {.key = "http.max_connections",
         .env = "NARAD_HTTP_MAX_CONNECTIONS",
         .bind = NARAD_FIELD(http.max_connections),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.http.max_connections >= 0 && c.http.max_connections <= 1'000'000,
                         "http.max_connections must be between 0 and 1000000");
             },
         .rule = "0 (no cap) to 1000000",
         .doc = "Open client connections; at the cap the node stops accepting and new clients wait "
                "in the listen backlog until one closes."},
        {.key = "http.max_connections_per_address",
         .env = "NARAD_HTTP_MAX_CONNECTIONS_PER_ADDRESS",
         .bind = NARAD_FIELD(http.max_connections_per_address),
         .check =
             [](const Config& c, Problems& p) {
                 require(p,
                         c.http.max_connections_per_address >= 0 &&
                             c.http.max_connections_per_address <= 1'000'000,
                         "http.max_connections_per_address must be between 0 and 1000000");
             },
         .rule = "0 (no cap) to 1000000",
         .doc = "Open connections from one client IP address, on the API and cluster ports; one "
                "more is answered 503 and closed. Raise it (or 0) when clients reach the node "
                "through one proxy or NAT address."},
        {.key = "http.max_consume_in_flight_per_identity",
         .env = "NARAD_HTTP_MAX_CONSUME_IN_FLIGHT_PER_IDENTITY",
         .bind = NARAD_FIELD(http.max_consume_in_flight_per_identity),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.http.max_consume_in_flight_per_identity >= 0,
                         "http.max_consume_in_flight_per_identity must be >= 0");
             },
         .rule = ">= 0 (0: no cap)",
         .doc = "Concurrent consumes per user on this node (per client address with security off, "
                "or before the user's first sign-in here); more get `429`. A batch "
                "consume counts as its `max`, clamped to the cap."},
        {.key = "http.max_produce_in_flight_per_identity",
         .env = "NARAD_HTTP_MAX_PRODUCE_IN_FLIGHT_PER_IDENTITY",
         .bind = NARAD_FIELD(http.max_produce_in_flight_per_identity),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.http.max_produce_in_flight_per_identity >= 0,
                         "http.max_produce_in_flight_per_identity must be >= 0");
             },
         .rule = ">= 0 (0: no cap)",
         .doc = "Concurrent produces per user on this node (per client address with security off, "
                "or before the user's first sign-in here); more get `429`. A batch "
                "counts as its message count, clamped to the cap, and as one while its body is "
                "read."},
        {.key = "http.max_batch_body_bytes_in_flight",
         .env = "NARAD_HTTP_MAX_BATCH_BODY_BYTES_IN_FLIGHT",
         .bind = NARAD_FIELD(http.max_batch_body_bytes_in_flight),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.http.max_batch_body_bytes_in_flight >= 0,
                         "http.max_batch_body_bytes_in_flight must be >= 0");
             },
         .rule = ">= 0 (0: no budget)",
         .doc = "Bytes of batch produce bodies larger than 1 MiB read at once on this node; a "
                "batch that would pass it is answered `503` with `Retry-After: 1`."},
        {.key = "http.metrics_addr",
         .env = "NARAD_HTTP_METRICS_ADDR",
         .bind = NARAD_FIELD(http.metrics_addr),
         .check = check_metrics_addr,
         .rule = "empty or host:port; differs from http.addr and cluster.addr",
         .doc = "A second listener serving `/metrics`, `/healthz` and `/readyz`; `/metrics` then "
                "leaves the API port."},
        {.key = "http.metrics_unauthenticated",
         .env = "NARAD_HTTP_METRICS_UNAUTHENTICATED",
         .bind = NARAD_FIELD(http.metrics_unauthenticated),
         .doc = "Serve `/metrics` on the API port without credentials."},
        // cluster
        {.key = "cluster.node_id",
         .env = "NARAD_NODE_ID",
         .flag = "--node-id",
         .bind = NARAD_FIELD(cluster.node_id),
         .check =
             [](const Config& c, Problems& p) {
                 if (c.cluster.node_id.empty()) return;
                 Status valid = validate_node_id(c.cluster.node_id);
                 require(p, valid.is_ok(), valid.message());
             },
         .rule = "empty (the host name) or [A-Za-z0-9._-]{1,255}",
         .doc = "This node's identity; keep it stable across restarts."},
        {.key = "cluster.addr",
         .env = "NARAD_CLUSTER_ADDR",
         .flag = "--cluster-port",
         .bind = NARAD_FIELD(cluster.addr),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, !trim(c.cluster.addr).empty(), "cluster.addr must not be empty");
                 check_address(p, "cluster.addr", c.cluster.addr, AddressUse::listen);
             },
         .rule = "host:port",
         .doc = "The node-to-node port (moves, forwarded produces, joins)."},
        {.key = "cluster.advertise_addr",
         .env = "NARAD_CLUSTER_ADVERTISE_ADDR",
         .bind = NARAD_FIELD(cluster.advertise_addr),
         .check =
             [](const Config& c, Problems& p) {
                 check_address(p, "cluster.advertise_addr", c.cluster.advertise_addr,
                               AddressUse::dial);
             },
         .rule = "empty or host:port with a host",
         .doc = "The host:port other nodes dial for this node's cluster port; empty derives it "
                "from the listen addresses or the host name. Its host is also advertised for the "
                "API port."},
        {.key = "cluster.peers",
         .env = "NARAD_CLUSTER_PEERS",
         .bind = NARAD_FIELD(cluster.peers),
         .check = check_peers,
         .rule = "none, or at least 3 `{id, addr}` including this node",
         .doc = "Narad's bootstrap voter list (`id@host:port,...` in the environment).",
         .inert = kStaticPeers},
        {.key = "cluster.initial_members",
         .env = "NARAD_CLUSTER_INITIAL_MEMBERS",
         .bind = NARAD_FIELD(cluster.initial_members),
         .doc = "Narad's list of nodes allowed to bootstrap a cluster.",
         .inert = "the first node started without --join bootstraps; the others join it"},
        {.key = "cluster.raft_snapshot_threshold",
         .env = "NARAD_CLUSTER_RAFT_SNAPSHOT_THRESHOLD",
         .bind = NARAD_FIELD(cluster.raft_snapshot_threshold),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.cluster.raft_snapshot_threshold > 0,
                         "cluster.raft_snapshot_threshold must be > 0");
             },
         .rule = "> 0",
         .doc = "Narad's Raft snapshot threshold.",
         .inert = kNoRaft},
        {.key = "cluster.raft_snapshot_interval",
         .env = "NARAD_CLUSTER_RAFT_SNAPSHOT_INTERVAL",
         .bind = NARAD_FIELD(cluster.raft_snapshot_interval),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.cluster.raft_snapshot_interval >= milliseconds(5),
                         "cluster.raft_snapshot_interval must be >= 5ms");
             },
         .rule = ">= 5ms",
         .doc = "Narad's Raft snapshot check interval.",
         .inert = kNoRaft},
        {.key = "cluster.raft_trailing_logs",
         .env = "NARAD_CLUSTER_RAFT_TRAILING_LOGS",
         .bind = NARAD_FIELD(cluster.raft_trailing_logs),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.cluster.raft_trailing_logs >= 0,
                         "cluster.raft_trailing_logs must be >= 0");
             },
         .rule = ">= 0",
         .doc = "Narad's Raft log entries kept behind a snapshot.",
         .inert = kNoRaft},
        {.key = "cluster.name",
         .env = "NARAD_CLUSTER_NAME",
         .flag = "--cluster-name",
         .bind = NARAD_FIELD(cluster.name),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, validate_node_id(c.cluster.name).is_ok(),
                         "cluster.name must match ^[A-Za-z0-9._-]{1,255}$");
             },
         .rule = "[A-Za-z0-9._-]{1,255}",
         .doc = "The cluster's etcd key prefix, `/narad/<name>/`."},
        {.key = "cluster.join",
         .env = "NARAD_CLUSTER_JOIN",
         .flag = "--join",
         .bind = NARAD_FIELD(cluster.join),
         .check =
             [](const Config& c, Problems& p) {
                 check_address(p, "cluster.join", c.cluster.join, AddressUse::dial);
             },
         .rule = "empty or host:port with a host",
         .doc = "A member's cluster port to join; empty starts (or restarts) its own cluster."},
        {.key = "cluster.meta_endpoints",
         .env = "NARAD_META_ENDPOINTS",
         .flag = "--meta-endpoints",
         .bind = NARAD_FIELD(cluster.meta_endpoints),
         .check = check_meta_endpoints,
         .rule = "http://host:port or https://host:port entries (https with cluster TLS)",
         .doc = "An external etcd cluster; empty: the node supervises its own etcd member. An "
                "https endpoint is dialled with security.cluster_tls_* as the client "
                "certificate and the authority of etcd's."},
        {.key = "cluster.etcd_client_port",
         .env = "NARAD_CLUSTER_ETCD_CLIENT_PORT",
         .flag = "--etcd-client-port",
         .bind = NARAD_FIELD(cluster.etcd_client_port),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.cluster.etcd_client_port != c.cluster.etcd_peer_port,
                         "cluster.etcd_client_port and cluster.etcd_peer_port must differ");
             },
         .rule = "1 to 65535; differs from cluster.etcd_peer_port",
         .doc = "The supervised etcd member's client port."},
        {.key = "cluster.etcd_peer_port",
         .env = "NARAD_CLUSTER_ETCD_PEER_PORT",
         .flag = "--etcd-peer-port",
         .bind = NARAD_FIELD(cluster.etcd_peer_port),
         .rule = "1 to 65535",
         .doc = "The supervised etcd member's peer port."},
        {.key = "cluster.voters",
         .env = "NARAD_CLUSTER_VOTERS",
         .bind = NARAD_FIELD(cluster.voters),
         .check =
             [](const Config& c, Problems& p) {
                 int64_t v = c.cluster.voters;
                 require(p, v >= 1 && v <= 5 && v % 2 == 1, "cluster.voters must be 1, 3 or 5");
             },
         .rule = "1, 3 or 5",
         .doc = "How many nodes host an etcd voter."},
        {.key = "cluster.min_voters",
         .env = "NARAD_CLUSTER_MIN_VOTERS",
         .bind = NARAD_FIELD(cluster.min_voters),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.cluster.min_voters >= 1 && c.cluster.min_voters <= 5,
                         "cluster.min_voters must be between 1 and 5");
             },
         .rule = "1 to 5",
         .doc = "A decommission never leaves fewer etcd voters than this."},
        {.key = "cluster.dead_after",
         .env = "NARAD_CLUSTER_DEAD_AFTER",
         .bind = NARAD_FIELD(cluster.dead_after),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.cluster.dead_after >= seconds(1), "cluster.dead_after must be >= 1s");
             },
         .rule = ">= 1s",
         .doc = "A node whose liveness key has been gone this long is dead."},
        {.key = "cluster.lease_ttl",
         .env = "NARAD_CLUSTER_LEASE_TTL",
         .bind = NARAD_FIELD(cluster.lease_ttl),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.cluster.lease_ttl >= seconds(1), "cluster.lease_ttl must be >= 1s");
             },
         .rule = ">= 1s",
         .doc = "The liveness lease's TTL."},
        {.key = "cluster.controller_tick",
         .env = "NARAD_CLUSTER_CONTROLLER_TICK",
         .bind = NARAD_FIELD(cluster.controller_tick),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.cluster.controller_tick >= milliseconds(100),
                         "cluster.controller_tick must be >= 100ms");
             },
         .rule = ">= 100ms",
         .doc = "How often the controller reconciles targets and the planner runs."},
        // move
        {.key = "move.freeze_ttl",
         .env = "NARAD_MOVE_FREEZE_TTL",
         .bind = NARAD_FIELD(move.freeze_ttl),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.move.freeze_ttl >= seconds(1), "move.freeze_ttl must be >= 1s");
             },
         .rule = ">= 1s",
         .doc = "How long a source stays frozen for the final copy before the freeze lapses."},
        {.key = "move.lag_bytes",
         .env = "NARAD_MOVE_LAG_BYTES",
         .bind = NARAD_FIELD(move.lag_bytes),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.move.lag_bytes >= 0, "move.lag_bytes must not be negative");
             },
         .rule = ">= 0",
         .doc = "A copy this close to the source's end freezes the source for the last pass."},
        {.key = "move.copy_rate",
         .env = "NARAD_MOVE_COPY_RATE",
         .bind = NARAD_FIELD(move.copy_rate),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.move.copy_rate >= 0, "move.copy_rate must not be negative");
             },
         .rule = ">= 0 (0: unthrottled)",
         .doc = "Bytes per second a move may copy."},
        {.key = "move.max_in_flight",
         .env = "NARAD_MOVE_MAX_IN_FLIGHT",
         .bind = NARAD_FIELD(move.max_in_flight),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.move.max_in_flight >= 1 && c.move.max_in_flight <= 1024,
                         "move.max_in_flight must be between 1 and 1024");
             },
         .rule = "1 to 1024",
         .doc = "Moves the planner keeps running at once."},
        {.key = "move.max_passes",
         .env = "NARAD_MOVE_MAX_PASSES",
         .bind = NARAD_FIELD(move.max_passes),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.move.max_passes >= 1 && c.move.max_passes <= 1000,
                         "move.max_passes must be between 1 and 1000");
             },
         .rule = "1 to 1000",
         .doc = "Copy passes before a move that cannot catch up is aborted."},
        {.key = "move.passes_without_progress",
         .env = "NARAD_MOVE_PASSES_WITHOUT_PROGRESS",
         .bind = NARAD_FIELD(move.passes_without_progress),
         .check =
             [](const Config& c, Problems& p) {
                 require(p,
                         c.move.passes_without_progress >= 1 &&
                             c.move.passes_without_progress <= c.move.max_passes,
                         "move.passes_without_progress must be between 1 and move.max_passes");
             },
         .rule = "1 to move.max_passes",
         .doc = "Passes in a row that do not shrink the lag before the move is aborted."},
        {.key = "move.force_promote_after",
         .env = "NARAD_MOVE_FORCE_PROMOTE_AFTER",
         .bind = NARAD_FIELD(move.force_promote_after),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.move.force_promote_after >= seconds(1),
                         "move.force_promote_after must be >= 1s");
             },
         .rule = ">= 1s",
         .doc = "A source dead this long has its complete copy promoted without it."},
        {.key = "move.dead_target_abort_after",
         .env = "NARAD_MOVE_DEAD_TARGET_ABORT_AFTER",
         .bind = NARAD_FIELD(move.dead_target_abort_after),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.move.dead_target_abort_after >= seconds(1),
                         "move.dead_target_abort_after must be >= 1s");
             },
         .rule = ">= 1s",
         .doc = "A target dead this long has its move aborted."},
        {.key = "move.sweep_every",
         .env = "NARAD_MOVE_SWEEP_EVERY",
         .bind = NARAD_FIELD(move.sweep_every),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.move.sweep_every >= 0, "move.sweep_every must be >= 0 (0: never)");
             },
         .rule = ">= 0 (0: never)",
         .doc = "Move-runner ticks between sweeps of leftover staging and set-aside copies."},
        {.key = "move.self_fence_margin",
         .env = "NARAD_MOVE_SELF_FENCE_MARGIN",
         .bind = NARAD_FIELD(move.self_fence_margin),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.move.self_fence_margin >= nanoseconds(0),
                         "move.self_fence_margin must be >= 0");
             },
         .rule = ">= 0",
         .doc = "An owner stops serving this long before its liveness lease could expire."},
        // storage
        {.key = "storage.data_dir",
         .env = "NARAD_DATA_DIR",
         .flag = "--data-dir",
         .bind = NARAD_FIELD(storage.data_dir),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, !c.storage.data_dir.empty(), "storage.data_dir must not be empty");
             },
         .rule = "not empty",
         .doc = "Everything the node stores.",
         .empty = EmptyString::keeps_default},
        {.key = "storage.codec",
         .bind = NARAD_FIELD(storage.codec),
         .check =
             [](const Config& c, Problems& p) {
                 std::string codec = lower(c.storage.codec);
                 require(p, codec == "zstd" || codec == "none",
                         "storage.codec \"" + c.storage.codec + "\" is not one of [zstd, none]");
             },
         .rule = "none or zstd",
         .doc = "Compression of new segment frames.",
         .empty = EmptyString::keeps_default},
        {.key = "storage.compression_level",
         .bind = NARAD_FIELD(storage.compression_level),
         .check =
             [](const Config& c, Problems& p) {
                 std::string level = lower(c.storage.compression_level);
                 require(p,
                         level == "fastest" || level == "default" || level == "better" ||
                             level == "best",
                         "storage.compression_level \"" + c.storage.compression_level +
                             "\" is not one of [fastest, default, better, best]");
             },
         .rule = "fastest, default, better or best",
         .doc = "The zstd level.",
         .empty = EmptyString::keeps_default},
        {.key = "storage.idle_log_eviction_ms",
         .bind = NARAD_FIELD(storage.idle_log_eviction_ms),
         .check =
             [](const Config& c, Problems& p) {
                 int64_t v = c.storage.idle_log_eviction_ms;
                 require(p, v == 0 || v >= 60'000,
                         "storage.idle_log_eviction_ms (" + std::to_string(v) +
                             ") must be 0 (disabled) or >= 60000");
             },
         .rule = "0 (off) or >= 60000",
         .doc = "A partition log untouched this long is closed, and reopened on next use."},
        {.key = "storage.cold_retention_walk_ms",
         .bind = NARAD_FIELD(storage.cold_retention_walk_ms),
         .check =
             [](const Config& c, Problems& p) {
                 int64_t v = c.storage.cold_retention_walk_ms;
                 require(p, v == 0 || v >= 60'000,
                         "storage.cold_retention_walk_ms (" + std::to_string(v) +
                             ") must be 0 (disabled) or >= 60000");
             },
         .rule = "0 (off) or >= 60000",
         .doc = "How often closed partition logs are opened to delete expired segments, then "
                "closed again."},
        {.key = "storage.consumer_offset_commit_interval_ms",
         .bind = NARAD_FIELD(storage.consumer_offset_commit_interval_ms),
         .check =
             [](const Config& c, Problems& p) {
                 int64_t v = c.storage.consumer_offset_commit_interval_ms;
                 require(p, v >= 10 && v <= 60'000,
                         "storage.consumer_offset_commit_interval_ms (" + std::to_string(v) +
                             ") must be between 10 and 60000");
             },
         .rule = "10 to 60000",
         .doc = "How often changed consumer positions are written and synced; a crash "
                "redelivers at most about this much of the acks."},
        {.key = "storage.ingress_wal_prealloc",
         .bind = NARAD_FIELD(storage.ingress_wal_prealloc),
         .doc = "Narad's zero-filled spare ingress WAL segments.",
         .inert = "the ingress WAL here creates each segment when it needs one"},
        // topic
        {.key = "topic.default_partitions",
         .env = "NARAD_TOPIC_DEFAULT_PARTITIONS",
         .bind = NARAD_FIELD(topic.default_partitions),
         .check = check_default_partitions,
         .rule = "3 to topic.max_partitions",
         .doc = "Partitions of a topic created without `partitions`.",
         .syntax = IntSyntax::atoi},
        {.key = "topic.max_partitions",
         .env = "NARAD_TOPIC_MAX_PARTITIONS",
         .bind = NARAD_FIELD(topic.max_partitions),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.topic.max_partitions > 0, "topic.max_partitions must be > 0");
             },
         .rule = "> 0",
         .doc = "The most partitions a topic may have. A topic and its assignments are one etcd "
                "txn: above 127 the node starts its own etcd member with `--max-txn-ops` one "
                "above this, and an external etcd (cluster.meta_endpoints) needs the same.",
         .syntax = IntSyntax::atoi},
        {.key = "topic.default_retention_age_ms",
         .env = "NARAD_TOPIC_DEFAULT_RETENTION_AGE_MS",
         .bind = NARAD_FIELD(topic.default_retention_age_ms),
         .check = check_default_retention,
         .rule = "0 (forever) or >= 3600000",
         .doc = "Retention of a topic created without `retention_ms`."},
        {.key = "topic.default_visibility_timeout_ms",
         .env = "NARAD_TOPIC_DEFAULT_VISIBILITY_TIMEOUT_MS",
         .bind = NARAD_FIELD(topic.default_visibility_timeout_ms),
         .check = check_default_visibility,
         .rule = "> 0, at most the default retention when that is not 0",
         .doc = "Lease length of a topic created without `visibility_timeout_ms`."},
        {.key = "topic.default_max_in_flight_per_partition",
         .env = "NARAD_TOPIC_DEFAULT_MAX_IN_FLIGHT_PER_PARTITION",
         .bind = NARAD_FIELD(topic.default_max_in_flight_per_partition),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.topic.default_max_in_flight_per_partition > 0,
                         "topic.default_max_in_flight_per_partition must be > 0");
             },
         .rule = "> 0",
         .doc = "Leased messages a partition may have at once."},
        {.key = "topic.default_max_acked_ahead_per_partition",
         .env = "NARAD_TOPIC_DEFAULT_MAX_ACKED_AHEAD_PER_PARTITION",
         .bind = NARAD_FIELD(topic.default_max_acked_ahead_per_partition),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.topic.default_max_acked_ahead_per_partition > 0,
                         "topic.default_max_acked_ahead_per_partition must be > 0");
             },
         .rule = "> 0",
         .doc = "Acks above the oldest unacked message a partition holds before it delivers only "
                "that message."},
        // fanout
        {.key = "fanout.max_batch_records",
         .env = "NARAD_FANOUT_MAX_BATCH_RECORDS",
         .bind = NARAD_FIELD(fanout.max_batch_records),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.fanout.max_batch_records > 0, "fanout.max_batch_records must be > 0");
             },
         .rule = "> 0",
         .doc = "Records copied to a child in one batch.",
         .syntax = IntSyntax::atoi},
        {.key = "fanout.max_batch_bytes",
         .env = "NARAD_FANOUT_MAX_BATCH_BYTES",
         .bind = NARAD_FIELD(fanout.max_batch_bytes),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.fanout.max_batch_bytes > 0 && c.fanout.max_batch_bytes <= (8 << 20),
                         "fanout.max_batch_bytes must be > 0 and at most 8388608 (a batch is one "
                         "commit on the cluster port)");
             },
         .rule = "> 0, <= 8388608",
         .doc = "Payload bytes copied to a child in one batch."},
        {.key = "fanout.linger_ms",
         .env = "NARAD_FANOUT_LINGER_MS",
         .bind = NARAD_FIELD(fanout.linger_ms),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.fanout.linger_ms >= 0, "fanout.linger_ms must be >= 0");
             },
         .rule = ">= 0",
         .doc = "How long a partly filled batch waits for more records."},
        // log
        {.key = "log.level",
         .env = "NARAD_LOG_LEVEL",
         .flag = "--log-level",
         .bind = NARAD_FIELD(log.level),
         .check =
             [](const Config& c, Problems& p) {
                 std::string level = lower(c.log.level);
                 require(
                     p, log::valid_level(level) || level == "warning",
                     "log.level \"" + c.log.level + "\" is not one of [debug, info, warn, error]");
             },
         .rule = "debug, info, warn or error",
         .doc = "The lowest level logged."},
        {.key = "log.format",
         .env = "NARAD_LOG_FORMAT",
         .flag = "--log-format",
         .bind = NARAD_FIELD(log.format),
         .check =
             [](const Config& c, Problems& p) {
                 require(p, c.log.format == "json" || c.log.format == "text",
                         "log.format \"" + c.log.format + "\" is not one of [json, text]");
             },
         .rule = "json or text",
         .doc = "One JSON object per line, or plain text."},
        // security
        {.key = "security.enabled",
         .env = "NARAD_SECURITY_ENABLED",
         .bind = NARAD_FIELD(security.enabled),
         .doc = "Users, Basic authentication and grants on the API port (docs/security.md); "
                "`false` leaves every route open, as `narad server start --dev` does."},
        {.env = "NARAD_ADMIN_PASSWORD",
         .bind = NARAD_FIELD(security.admin_password),
         .doc = "The root admin's first password; without it one is generated into "
                "`<data_dir>/admin-password`."},
        {.env = "NARAD_CLUSTER_SECRET",
         .bind = NARAD_FIELD(security.cluster_secret),
         .check = check_cluster_secret,
         .rule = "required with security on and cluster.peers or --join set",
         .doc = "The secret nodes present to each other on the cluster port."},
        {.env = "NARAD_CLUSTER_SECRET_PREVIOUS",
         .bind = NARAD_FIELD(security.cluster_secret_previous),
         .doc = "The secret being rotated out: still proved and accepted beside the current one "
                "(docs/security.md, \"Rotating the cluster secret\")."},
        {.key = "security.tls_cert_file",
         .env = "NARAD_TLS_CERT_FILE",
         .bind = NARAD_FIELD(security.tls_cert_file),
         .check = check_api_tls,
         .rule = "with security.tls_key_file, or neither",
         .doc = "PEM certificate chain for TLS on the API port (and the metrics listener): the "
                "node then speaks only https there. Reloaded on SIGHUP and when the file "
                "changes."},
        {.key = "security.tls_key_file",
         .env = "NARAD_TLS_KEY_FILE",
         .bind = NARAD_FIELD(security.tls_key_file),
         .doc = "PEM private key of security.tls_cert_file."},
        {.key = "security.cluster_tls_cert_file",
         .env = "NARAD_CLUSTER_TLS_CERT_FILE",
         .bind = NARAD_FIELD(security.cluster_tls_cert_file),
         .check = check_cluster_tls,
         .rule = "the three cluster TLS files together or none",
         .doc = "PEM certificate this node presents on the cluster port, as server and as "
                "client, and its supervised etcd member on its client and peer URLs: mutual TLS "
                "between nodes (docs/security.md). Set it when the cluster is created. Reloaded "
                "on SIGHUP and when the file changes (etcd reads it itself)."},
        {.key = "security.cluster_tls_key_file",
         .env = "NARAD_CLUSTER_TLS_KEY_FILE",
         .bind = NARAD_FIELD(security.cluster_tls_key_file),
         .doc = "PEM private key of security.cluster_tls_cert_file."},
        {.key = "security.cluster_tls_ca_file",
         .env = "NARAD_CLUSTER_TLS_CA_FILE",
         .bind = NARAD_FIELD(security.cluster_tls_ca_file),
         .doc = "PEM authority that signs every node's cluster certificate; a peer without one it "
                "signed is refused."},
        {.key = "security.allow_plaintext_raft",
         .env = "NARAD_SECURITY_ALLOW_PLAINTEXT_RAFT",
         .bind = NARAD_FIELD(security.allow_plaintext_raft),
         .doc = "Narad's consent to Raft without TLS.",
         .inert = kNoRaft},
        {.key = "security.allow_insecure_cluster",
         .env = "NARAD_SECURITY_ALLOW_INSECURE_CLUSTER",
         .bind = NARAD_FIELD(security.allow_insecure_cluster),
         .doc = "Narad's consent to several nodes with security off.",
         .inert = "a cluster with security off is not refused here"},
        {.key = "security.allow_legacy_cluster_auth",
         .env = "NARAD_SECURITY_ALLOW_LEGACY_CLUSTER_AUTH",
         .bind = NARAD_FIELD(security.allow_legacy_cluster_auth),
         .doc = "Narad's older node-to-node authentication, for rolling upgrades.",
         .inert = "no older node-to-node protocol exists here"},
        // remotes
        {.key = "remotes.allowed_hosts",
         .env = "NARAD_REMOTES_ALLOWED_HOSTS",
         .bind = NARAD_FIELD(remotes.allowed_hosts),
         .check = check_remotes,
         .rule = "any remotes setting needs security on; entries not empty",
         .doc = "Hosts a remote cluster may name.",
         .inert = kNoRemotes},
        {.key = "remotes.allowed_ports",
         .env = "NARAD_REMOTES_ALLOWED_PORTS",
         .bind = NARAD_FIELD(remotes.allowed_ports),
         .rule = "at least one port, each 1 to 65535",
         .doc = "Ports a remote cluster's URL may name.",
         .inert = kNoRemotes},
        {.key = "remotes.allow_addresses",
         .env = "NARAD_REMOTES_ALLOW_ADDRESSES",
         .bind = NARAD_FIELD(remotes.allow_addresses),
         .rule = "CIDRs",
         .doc = "Loopback or link-local ranges a remote may still reach.",
         .inert = kNoRemotes},
        {.key = "remotes.max_held_bytes",
         .env = "NARAD_REMOTES_MAX_HELD_BYTES",
         .bind = NARAD_FIELD(remotes.max_held_bytes),
         .rule = ">= 0",
         .doc = "Bytes remote children may hold across a failure.",
         .inert = kNoRemotes},
        {.key = "remotes.api_hop_encrypted",
         .env = "NARAD_REMOTES_API_HOP_ENCRYPTED",
         .bind = NARAD_FIELD(remotes.api_hop_encrypted),
         .doc = "The operator's word that the hop to this node is encrypted.",
         .inert = kNoRemotes},
    };
    return table;
}

#undef NARAD_FIELD

std::string json_type_name(const json& value) {
    if (value.is_string()) return "string";
    if (value.is_boolean()) return "bool";
    if (value.is_number()) return "number";
    if (value.is_array()) return "array";
    if (value.is_object()) return "object";
    return "null";
}

Status type_error(const json& value, std::string_view field, const char* want) {
    return Status(Errc::invalid_argument, "json: cannot unmarshal " + json_type_name(value) +
                                              " into field " + std::string(field) + " of type " +
                                              want);
}

Status port_error(std::string_view field) {
    return Status(Errc::invalid_argument,
                  std::string(field) + ": a port must be an integer from 1 to 65535");
}

const Setting* find_setting(std::string_view key) {
    for (const Setting& setting : settings()) {
        if (!setting.key.empty() && setting.key == key) return &setting;
    }
    return nullptr;
}

bool is_section(std::string_view name) {
    for (const Setting& setting : settings()) {
        if (setting.key.size() > name.size() && setting.key.starts_with(name) &&
            setting.key[name.size()] == '.') {
            return true;
        }
    }
    return false;
}

// Remembers, once, that an inert setting was given.
void note_given(const Setting& setting, Config& config) {
    if (setting.inert.empty()) return;
    std::string line = std::string(setting.key.empty() ? setting.env : setting.key) + ": " +
                       std::string(setting.inert);
    if (std::find(config.inert.begin(), config.inert.end(), line) == config.inert.end()) {
        config.inert.push_back(std::move(line));
    }
}

Status read_peer_list_json(const json& value, std::vector<PeerConfig>& peers) {
    if (!value.is_array()) return type_error(value, "cluster.peers", "array");
    std::vector<PeerConfig> read;
    for (const auto& item : value) {
        if (!item.is_object()) return type_error(item, "cluster.peers", "object");
        PeerConfig peer;
        for (const auto& [name, field] : item.items()) {
            std::string* target = name == "id" ? &peer.id : name == "addr" ? &peer.addr : nullptr;
            if (target == nullptr) {
                return Status(Errc::invalid_argument, "json: unknown field \"" + name + "\"");
            }
            if (field.is_null()) continue;
            if (!field.is_string()) return type_error(field, "cluster.peers." + name, "string");
            *target = field.get<std::string>();
        }
        read.push_back(std::move(peer));
    }
    peers = std::move(read);
    return Status::ok();
}

// One value from the file. Durations are strings with a unit, as Narad's loader wants them.
Status read_json_value(const Setting& setting, const json& v, Config& config) {
    const std::string_view key = setting.key;
    return std::visit(
        [&](auto* target) -> Status {
            using T = std::remove_pointer_t<decltype(target)>;
            if constexpr (std::is_same_v<T, std::string>) {
                if (!v.is_string()) return type_error(v, key, "string");
                std::string text = v.get<std::string>();
                if (!text.empty() || setting.empty == EmptyString::is_a_value) {
                    *target = std::move(text);
                }
            } else if constexpr (std::is_same_v<T, int64_t>) {
                if (!v.is_number_integer()) return type_error(v, key, "int");
                *target = v.get<int64_t>();
            } else if constexpr (std::is_same_v<T, nanoseconds>) {
                if (!v.is_string()) {
                    return Status(Errc::invalid_argument,
                                  "config: " + std::string(key) +
                                      ": a duration is a string with a unit, such as \"10s\"");
                }
                auto parsed = parse_duration(v.get<std::string>());
                if (!parsed.is_ok()) {
                    return Status(Errc::invalid_argument, "config: parse duration \"" +
                                                              v.get<std::string>() +
                                                              "\": " + parsed.status().message());
                }
                *target = *parsed;
            } else if constexpr (std::is_same_v<T, bool>) {
                if (!v.is_boolean()) return type_error(v, key, "bool");
                *target = v.get<bool>();
            } else if constexpr (std::is_same_v<T, uint16_t>) {
                if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 65535) {
                    return port_error("json: " + std::string(key));
                }
                *target = static_cast<uint16_t>(v.get<int64_t>());
            } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                if (!v.is_array()) return type_error(v, key, "array");
                std::vector<std::string> items;
                for (const auto& item : v) {
                    if (!item.is_string()) return type_error(item, key, "string");
                    items.push_back(item.get<std::string>());
                }
                *target = std::move(items);
            } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
                if (!v.is_array()) return type_error(v, key, "array");
                std::vector<int64_t> items;
                for (const auto& item : v) {
                    if (!item.is_number_integer()) return type_error(item, key, "int");
                    items.push_back(item.get<int64_t>());
                }
                *target = std::move(items);
            } else {
                static_assert(std::is_same_v<T, std::vector<PeerConfig>>);
                return read_peer_list_json(v, *target);
            }
            return Status::ok();
        },
        setting.bind(config));
}

Result<std::vector<PeerConfig>> parse_peer_list(const std::string& text) {
    std::vector<PeerConfig> peers;
    for (const std::string& item : split_trimmed(text, ',')) {
        auto at = item.find('@');
        bool one_at = at != std::string::npos && item.find('@', at + 1) == std::string::npos;
        std::string id = one_at ? trim(item.substr(0, at)) : "";
        std::string addr = one_at ? trim(item.substr(at + 1)) : "";
        if (id.empty() || addr.empty()) {
            return Status(Errc::invalid_argument,
                          "invalid peer \"" + item + "\": want id@host:port");
        }
        peers.push_back(PeerConfig{id, addr});
    }
    return peers;
}

// One value from the environment, parsed as Go parses it (lists are comma-separated).
Status read_env_value(const Setting& setting, const std::string& text, Config& config) {
    const char* int_parser =
        setting.syntax == IntSyntax::atoi ? "strconv.Atoi" : "strconv.ParseInt";
    return std::visit(
        [&](auto* target) -> Status {
            using T = std::remove_pointer_t<decltype(target)>;
            if constexpr (std::is_same_v<T, std::string>) {
                *target = text;
            } else if constexpr (std::is_same_v<T, int64_t>) {
                NARAD_ASSIGN_OR_RETURN(*target, parse_int(text, int_parser));
            } else if constexpr (std::is_same_v<T, nanoseconds>) {
                NARAD_ASSIGN_OR_RETURN(*target, parse_duration(text));
            } else if constexpr (std::is_same_v<T, bool>) {
                NARAD_ASSIGN_OR_RETURN(*target, parse_bool(text));
            } else if constexpr (std::is_same_v<T, uint16_t>) {
                auto port = parse_int(text, "strconv.Atoi");
                if (!port.is_ok()) return port.status();
                if (*port < 1 || *port > 65535) return port_error("value");
                *target = static_cast<uint16_t>(*port);
            } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                *target = split_trimmed(text, ',');
            } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
                std::vector<int64_t> items;
                for (const std::string& item : split_trimmed(text, ',')) {
                    NARAD_ASSIGN_OR_RETURN(int64_t value, parse_int(item, "strconv.Atoi"));
                    items.push_back(value);
                }
                *target = std::move(items);
            } else {
                static_assert(std::is_same_v<T, std::vector<PeerConfig>>);
                NARAD_ASSIGN_OR_RETURN(*target, parse_peer_list(text));
            }
            return Status::ok();
        },
        setting.bind(config));
}

std::string default_text(const Setting& setting) {
    Config defaults;
    return std::visit(
        [](auto* value) -> std::string {
            using T = std::remove_pointer_t<decltype(value)>;
            auto code = [](const std::string& text) { return "`" + text + "`"; };
            if constexpr (std::is_same_v<T, std::string>) {
                return value->empty() ? "empty" : code(*value);
            } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint16_t>) {
                return code(std::to_string(*value));
            } else if constexpr (std::is_same_v<T, nanoseconds>) {
                return code(format_duration(*value));
            } else if constexpr (std::is_same_v<T, bool>) {
                return code(*value ? "true" : "false");
            } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
                std::string list;
                for (int64_t item : *value)
                    list += (list.empty() ? "" : ", ") + std::to_string(item);
                return code("[" + list + "]");
            } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                return value->empty() ? "empty" : code(json(*value).dump());
            } else {
                return value->empty() ? "none" : std::to_string(value->size()) + " peers";
            }
        },
        setting.bind(defaults));
}

}  // namespace

EnvLookup process_environment() {
    return [](const std::string& name) -> std::optional<std::string> {
        const char* value = std::getenv(name.c_str());
        if (value == nullptr) return std::nullopt;
        return std::string(value);
    };
}

Status apply_config_json(std::string_view text, Config& config) {
    json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (document.is_discarded()) return Status(Errc::invalid_argument, "invalid JSON");
    if (!document.is_object()) return type_error(document, "config", "object");
    for (const auto& [section, body] : document.items()) {
        if (!is_section(section)) {
            return Status(Errc::invalid_argument, "json: unknown field \"" + section + "\"");
        }
        if (body.is_null()) continue;
        if (!body.is_object()) return type_error(body, section, "object");
        for (const auto& [name, value] : body.items()) {
            const Setting* setting = find_setting(section + "." + name);
            if (setting == nullptr && section == "storage") {
                return Status(Errc::invalid_argument, "storage." + name +
                                                          " is an internal setting and cannot "
                                                          "be configured");
            }
            if (setting == nullptr) {
                return Status(Errc::invalid_argument, "json: unknown field \"" + name + "\"");
            }
            if (value.is_null()) continue;
            NARAD_RETURN_IF_ERROR(read_json_value(*setting, value, config));
            note_given(*setting, config);
        }
    }
    return Status::ok();
}

Status apply_environment(const EnvLookup& env, Config& config) {
    for (const Setting& setting : settings()) {
        if (setting.env.empty()) continue;
        std::string name(setting.env);
        auto value = env(name);
        if (!value) continue;
        Status read = read_env_value(setting, *value, config);
        if (!read.is_ok()) return Status(read.code(), name + ": " + read.message());
        note_given(setting, config);
    }
    return Status::ok();
}

void apply_flags(const ServeFlags& flags, Config& config) {
    if (flags.port != 0) config.http.addr = ":" + std::to_string(flags.port);
    if (!flags.addr.empty()) config.http.addr = flags.addr;
    if (flags.cluster_port != 0) config.cluster.addr = ":" + std::to_string(flags.cluster_port);
    if (!flags.node_id.empty()) config.cluster.node_id = flags.node_id;
    if (!flags.join.empty()) config.cluster.join = flags.join;
    if (!flags.meta_endpoints.empty()) config.cluster.meta_endpoints = flags.meta_endpoints;
    if (!flags.cluster_name.empty()) config.cluster.name = flags.cluster_name;
    if (flags.etcd_client_port != 0) config.cluster.etcd_client_port = flags.etcd_client_port;
    if (flags.etcd_peer_port != 0) config.cluster.etcd_peer_port = flags.etcd_peer_port;
    if (!flags.data_dir.empty()) config.storage.data_dir = flags.data_dir;
    if (!flags.log_level.empty()) config.log.level = flags.log_level;
    if (!flags.log_format.empty()) config.log.format = flags.log_format;
    if (!flags.pprof_addr.empty()) config.http.pprof_addr = flags.pprof_addr;
}

Status validate_config(const Config& config) {
    Problems problems;
    for (const Setting& setting : settings()) {
        if (setting.check != nullptr) setting.check(config, problems);
    }
    if (problems.empty()) return Status::ok();
    std::string joined;
    for (const auto& problem : problems) {
        if (!joined.empty()) joined += "; ";
        joined += problem;
    }
    return Status(Errc::invalid_argument, joined);
}

std::string settings_reference() {
    std::string out =
        "| Setting | Variable | Flag | Default | Accepts | Notes |\n"
        "| --- | --- | --- | --- | --- | --- |\n";
    auto code = [](std::string_view text) {
        return text.empty() ? std::string("") : "`" + std::string(text) + "`";
    };
    for (const Setting& setting : settings()) {
        std::string notes(setting.doc);
        if (!setting.inert.empty()) {
            notes +=
                " Accepted and checked, without effect here: " + std::string(setting.inert) + ".";
        }
        out += "| " + (setting.key.empty() ? "(environment only)" : code(setting.key)) + " | " +
               (setting.env.empty() ? "(file only)" : code(setting.env)) + " | " +
               code(setting.flag) + " | " + default_text(setting) + " | " +
               std::string(setting.rule) + " | " + notes + " |\n";
    }
    return out;
}

Result<Config> load_config(const ServeFlags& flags, const EnvLookup& env) {
    Config config;
    if (!flags.config_path.empty()) {
        auto contents = io::read_file(io::posix_file_system(), flags.config_path);
        if (!contents.is_ok()) {
            return Status(Errc::invalid_argument,
                          "config: config: load file: " + contents.status().message());
        }
        Status applied = apply_config_json(*contents, config);
        if (!applied.is_ok()) {
            return Status(Errc::invalid_argument,
                          "config: config: load file: " + applied.message());
        }
    }
    Status env_status = apply_environment(env, config);
    if (!env_status.is_ok()) {
        return Status(Errc::invalid_argument, "config: config: apply env: " + env_status.message());
    }
    apply_flags(flags, config);
    Status valid = validate_config(config);
    if (!valid.is_ok()) return Status(Errc::invalid_argument, "config: " + valid.message());
    return config;
}

}  // namespace narad::node
