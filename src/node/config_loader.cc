#include "node/config_loader.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/log.h"
#include "base/names.h"
#include "base/url.h"
#include "io/file_system.h"

namespace narad::node {
namespace {

using nlohmann::json;

std::string json_type_name(const json& value) {
    if (value.is_string()) return "string";
    if (value.is_boolean()) return "bool";
    if (value.is_number()) return "number";
    if (value.is_array()) return "array";
    if (value.is_object()) return "object";
    return "null";
}

Status type_error(const json& value, const std::string& field, const char* want) {
    return Status(Errc::invalid_argument, "json: cannot unmarshal " + json_type_name(value) +
                                              " into field " + field + " of type " + want);
}

// Strictly reads the known keys of one object; `fields` maps a key to its reader.
using FieldReader = std::function<Status(const json&)>;
Status read_object(const json& object, const std::string& section,
                   const std::vector<std::pair<std::string, FieldReader>>& fields) {
    if (!object.is_object()) return type_error(object, section, "object");
    for (const auto& [key, value] : object.items()) {
        bool known = false;
        for (const auto& [name, reader] : fields) {
            if (name != key) continue;
            known = true;
            if (!value.is_null()) NARAD_RETURN_IF_ERROR(reader(value));
        }
        if (!known) return Status(Errc::invalid_argument, "json: unknown field \"" + key + "\"");
    }
    return Status::ok();
}

FieldReader string_field(std::string& target, std::string name) {
    return [&target, name](const json& v) {
        if (!v.is_string()) return type_error(v, name, "string");
        target = v.get<std::string>();
        return Status::ok();
    };
}

FieldReader int_field(int64_t& target, std::string name) {
    return [&target, name](const json& v) {
        if (!v.is_number_integer()) return type_error(v, name, "int");
        target = v.get<int64_t>();
        return Status::ok();
    };
}

FieldReader port_field(uint16_t& target, std::string name) {
    return [&target, name](const json& v) {
        if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 65535) {
            return Status(Errc::invalid_argument,
                          "json: " + name + ": a port must be an integer from 1 to 65535");
        }
        target = static_cast<uint16_t>(v.get<int64_t>());
        return Status::ok();
    };
}

FieldReader bool_field(bool& target, std::string name) {
    return [&target, name](const json& v) {
        if (!v.is_boolean()) return type_error(v, name, "bool");
        target = v.get<bool>();
        return Status::ok();
    };
}

// HTTP durations: a Go duration string, or a number of nanoseconds.
FieldReader duration_field(nanoseconds& target) {
    return [&target](const json& v) -> Status {
        if (v.is_string()) {
            auto parsed = parse_duration(v.get<std::string>());
            if (!parsed.is_ok()) {
                return Status(Errc::invalid_argument, "config: parse duration \"" +
                                                          v.get<std::string>() +
                                                          "\": " + parsed.status().message());
            }
            target = *parsed;
            return Status::ok();
        }
        if (v.is_number_integer()) {
            target = nanoseconds(v.get<int64_t>());
            return Status::ok();
        }
        return Status(
            Errc::invalid_argument,
            "config: duration must be a string (e.g. \"10s\") or a number of nanoseconds");
    };
}

Status read_storage(const json& object, StorageConfig& storage) {
    if (!object.is_object()) return type_error(object, "storage", "object");
    for (const auto& [key, value] : object.items()) {
        std::string* target = nullptr;
        if (key == "data_dir") target = &storage.data_dir;
        if (key == "codec") target = &storage.codec;
        if (key == "compression_level") target = &storage.compression_level;
        if (target != nullptr) {
            if (value.is_null()) continue;
            if (!value.is_string()) return type_error(value, "storage." + key, "string");
            // Empty means "keep the default".
            if (!value.get<std::string>().empty()) *target = value.get<std::string>();
        } else if (key == "idle_log_eviction_ms") {
            if (!value.is_number_integer()) return type_error(value, "storage." + key, "int");
            storage.idle_log_eviction_ms = value.get<int64_t>();
        } else {
            return Status(Errc::invalid_argument,
                          "storage." + key + " is an internal setting and cannot be configured");
        }
    }
    return Status::ok();
}

Status read_peers(const json& value, std::vector<PeerConfig>& peers) {
    if (!value.is_array()) return type_error(value, "cluster.peers", "array");
    peers.clear();
    for (const auto& item : value) {
        PeerConfig peer;
        NARAD_RETURN_IF_ERROR(read_object(
            item, "cluster.peers",
            {{"id", string_field(peer.id, "id")}, {"addr", string_field(peer.addr, "addr")}}));
        peers.push_back(std::move(peer));
    }
    return Status::ok();
}

Status read_string_list(const json& value, std::vector<std::string>& out, const std::string& name) {
    if (!value.is_array()) return type_error(value, name, "array");
    out.clear();
    for (const auto& item : value) {
        if (!item.is_string()) return type_error(item, name, "string");
        out.push_back(item.get<std::string>());
    }
    return Status::ok();
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
    HttpConfig& http = config.http;
    ClusterConfig& cluster = config.cluster;
    TopicDefaultsConfig& topic = config.topic;
    FanoutConfig& fanout = config.fanout;
    SecurityConfig& security = config.security;
    return read_object(
        document, "config",
        {
            {"http",
             [&](const json& v) {
                 return read_object(
                     v, "http",
                     {{"addr", string_field(http.addr, "http.addr")},
                      {"pprof_addr", string_field(http.pprof_addr, "http.pprof_addr")},
                      {"read_timeout", duration_field(http.read_timeout)},
                      {"write_timeout", duration_field(http.write_timeout)},
                      {"idle_timeout", duration_field(http.idle_timeout)},
                      {"shutdown_grace", duration_field(http.shutdown_grace)},
                      {"max_consume_wait", duration_field(http.max_consume_wait)}});
             }},
            {"cluster",
             [&](const json& v) {
                 return read_object(
                     v, "cluster",
                     {{"addr", string_field(cluster.addr, "cluster.addr")},
                      {"node_id", string_field(cluster.node_id, "cluster.node_id")},
                      {"name", string_field(cluster.name, "cluster.name")},
                      {"join", string_field(cluster.join, "cluster.join")},
                      {"meta_endpoints",
                       [&](const json& m) {
                           return read_string_list(m, cluster.meta_endpoints,
                                                   "cluster.meta_endpoints");
                       }},
                      {"etcd_client_port", port_field(cluster.etcd_client_port, "cluster")},
                      {"etcd_peer_port", port_field(cluster.etcd_peer_port, "cluster")},
                      {"voters", int_field(cluster.voters, "cluster")},
                      {"min_voters", int_field(cluster.min_voters, "cluster")},
                      {"dead_after", duration_field(cluster.dead_after)},
                      {"lease_ttl", duration_field(cluster.lease_ttl)},
                      {"controller_tick", duration_field(cluster.controller_tick)},
                      {"peers", [&](const json& p) { return read_peers(p, cluster.peers); }},
                      {"initial_members", [&](const json& m) {
                           return read_string_list(m, cluster.initial_members,
                                                   "cluster.initial_members");
                       }}});
             }},
            {"move",
             [&](const json& v) {
                 MoveConfig& move = config.move;
                 return read_object(
                     v, "move",
                     {{"freeze_ttl", duration_field(move.freeze_ttl)},
                      {"lag_bytes", int_field(move.lag_bytes, "move")},
                      {"copy_rate", int_field(move.copy_rate, "move")},
                      {"max_in_flight", int_field(move.max_in_flight, "move")},
                      {"max_passes", int_field(move.max_passes, "move")},
                      {"passes_without_progress", int_field(move.passes_without_progress, "move")},
                      {"force_promote_after", duration_field(move.force_promote_after)},
                      {"dead_target_abort_after", duration_field(move.dead_target_abort_after)},
                      {"sweep_every", int_field(move.sweep_every, "move")},
                      {"self_fence_margin", duration_field(move.self_fence_margin)}});
             }},
            {"storage", [&](const json& v) { return read_storage(v, config.storage); }},
            {"topic",
             [&](const json& v) {
                 return read_object(
                     v, "topic",
                     {{"default_partitions", int_field(topic.default_partitions, "topic")},
                      {"max_partitions", int_field(topic.max_partitions, "topic")},
                      {"default_retention_age_ms",
                       int_field(topic.default_retention_age_ms, "topic")},
                      {"default_visibility_timeout_ms",
                       int_field(topic.default_visibility_timeout_ms, "topic")},
                      {"default_max_in_flight_per_partition",
                       int_field(topic.default_max_in_flight_per_partition, "topic")},
                      {"default_max_acked_ahead_per_partition",
                       int_field(topic.default_max_acked_ahead_per_partition, "topic")}});
             }},
            {"fanout",
             [&](const json& v) {
                 return read_object(
                     v, "fanout",
                     {{"max_batch_records", int_field(fanout.max_batch_records, "fanout")},
                      {"max_batch_bytes", int_field(fanout.max_batch_bytes, "fanout")},
                      {"linger_ms", int_field(fanout.linger_ms, "fanout")}});
             }},
            {"log",
             [&](const json& v) {
                 return read_object(v, "log",
                                    {{"level", string_field(config.log.level, "log.level")},
                                     {"format", string_field(config.log.format, "log.format")}});
             }},
            {"security",
             [&](const json& v) {
                 return read_object(
                     v, "security",
                     {{"enabled", bool_field(security.enabled, "security.enabled")},
                      {"cluster_tls_cert_file", string_field(security.cluster_tls_cert_file, "")},
                      {"cluster_tls_key_file", string_field(security.cluster_tls_key_file, "")},
                      {"cluster_tls_ca_file", string_field(security.cluster_tls_ca_file, "")}});
             }},
        });
}

Status apply_environment(const EnvLookup& env, Config& config) {
    auto with_name = [](const std::string& name, const Status& status) {
        return Status(status.code(), name + ": " + status.message());
    };
    auto set_string = [&](const char* name, std::string& target) {
        if (auto v = env(name)) target = *v;
    };
    auto set_duration = [&](const char* name, nanoseconds& target) -> Status {
        if (auto v = env(name)) {
            auto parsed = parse_duration(*v);
            if (!parsed.is_ok()) return with_name(name, parsed.status());
            target = *parsed;
        }
        return Status::ok();
    };
    auto set_int = [&](const char* name, int64_t& target, const char* function) -> Status {
        if (auto v = env(name)) {
            auto parsed = parse_int(*v, function);
            if (!parsed.is_ok()) return with_name(name, parsed.status());
            target = *parsed;
        }
        return Status::ok();
    };
    set_string("NARAD_HTTP_ADDR", config.http.addr);
    set_string("NARAD_HTTP_PPROF_ADDR", config.http.pprof_addr);
    set_string("NARAD_CLUSTER_ADDR", config.cluster.addr);
    set_string("NARAD_NODE_ID", config.cluster.node_id);
    set_string("NARAD_DATA_DIR", config.storage.data_dir);
    set_string("NARAD_LOG_LEVEL", config.log.level);
    set_string("NARAD_LOG_FORMAT", config.log.format);
    set_string("NARAD_ADMIN_PASSWORD", config.security.admin_password);
    set_string("NARAD_CLUSTER_SECRET", config.security.cluster_secret);
    set_string("NARAD_CLUSTER_TLS_CERT_FILE", config.security.cluster_tls_cert_file);
    set_string("NARAD_CLUSTER_TLS_KEY_FILE", config.security.cluster_tls_key_file);
    set_string("NARAD_CLUSTER_TLS_CA_FILE", config.security.cluster_tls_ca_file);
    NARAD_RETURN_IF_ERROR(set_duration("NARAD_HTTP_READ_TIMEOUT", config.http.read_timeout));
    NARAD_RETURN_IF_ERROR(set_duration("NARAD_HTTP_WRITE_TIMEOUT", config.http.write_timeout));
    NARAD_RETURN_IF_ERROR(set_duration("NARAD_HTTP_IDLE_TIMEOUT", config.http.idle_timeout));
    NARAD_RETURN_IF_ERROR(set_duration("NARAD_HTTP_SHUTDOWN_GRACE", config.http.shutdown_grace));
    NARAD_RETURN_IF_ERROR(
        set_duration("NARAD_HTTP_MAX_CONSUME_WAIT", config.http.max_consume_wait));
    const char* atoi = "strconv.Atoi";
    const char* parse_int64 = "strconv.ParseInt";
    TopicDefaultsConfig& topic = config.topic;
    NARAD_RETURN_IF_ERROR(
        set_int("NARAD_TOPIC_DEFAULT_PARTITIONS", topic.default_partitions, atoi));
    NARAD_RETURN_IF_ERROR(set_int("NARAD_TOPIC_MAX_PARTITIONS", topic.max_partitions, atoi));
    NARAD_RETURN_IF_ERROR(set_int("NARAD_TOPIC_DEFAULT_RETENTION_AGE_MS",
                                  topic.default_retention_age_ms, parse_int64));
    NARAD_RETURN_IF_ERROR(set_int("NARAD_TOPIC_DEFAULT_VISIBILITY_TIMEOUT_MS",
                                  topic.default_visibility_timeout_ms, parse_int64));
    NARAD_RETURN_IF_ERROR(set_int("NARAD_TOPIC_DEFAULT_MAX_IN_FLIGHT_PER_PARTITION",
                                  topic.default_max_in_flight_per_partition, parse_int64));
    NARAD_RETURN_IF_ERROR(set_int("NARAD_TOPIC_DEFAULT_MAX_ACKED_AHEAD_PER_PARTITION",
                                  topic.default_max_acked_ahead_per_partition, parse_int64));
    NARAD_RETURN_IF_ERROR(
        set_int("NARAD_FANOUT_MAX_BATCH_RECORDS", config.fanout.max_batch_records, atoi));
    NARAD_RETURN_IF_ERROR(
        set_int("NARAD_FANOUT_MAX_BATCH_BYTES", config.fanout.max_batch_bytes, parse_int64));
    NARAD_RETURN_IF_ERROR(set_int("NARAD_FANOUT_LINGER_MS", config.fanout.linger_ms, parse_int64));
    set_string("NARAD_CLUSTER_NAME", config.cluster.name);
    set_string("NARAD_CLUSTER_JOIN", config.cluster.join);
    if (auto v = env("NARAD_META_ENDPOINTS")) {
        config.cluster.meta_endpoints = split_trimmed(*v, ',');
    }
    NARAD_RETURN_IF_ERROR(set_duration("NARAD_CLUSTER_DEAD_AFTER", config.cluster.dead_after));
    NARAD_RETURN_IF_ERROR(set_duration("NARAD_CLUSTER_LEASE_TTL", config.cluster.lease_ttl));
    NARAD_RETURN_IF_ERROR(
        set_duration("NARAD_CLUSTER_CONTROLLER_TICK", config.cluster.controller_tick));
    NARAD_RETURN_IF_ERROR(
        set_int("NARAD_CLUSTER_MIN_VOTERS", config.cluster.min_voters, parse_int64));
    MoveConfig& move = config.move;
    NARAD_RETURN_IF_ERROR(set_duration("NARAD_MOVE_FREEZE_TTL", move.freeze_ttl));
    NARAD_RETURN_IF_ERROR(set_int("NARAD_MOVE_LAG_BYTES", move.lag_bytes, parse_int64));
    NARAD_RETURN_IF_ERROR(set_int("NARAD_MOVE_COPY_RATE", move.copy_rate, parse_int64));
    NARAD_RETURN_IF_ERROR(set_int("NARAD_MOVE_MAX_IN_FLIGHT", move.max_in_flight, parse_int64));
    NARAD_RETURN_IF_ERROR(set_int("NARAD_MOVE_MAX_PASSES", move.max_passes, parse_int64));
    NARAD_RETURN_IF_ERROR(
        set_int("NARAD_MOVE_PASSES_WITHOUT_PROGRESS", move.passes_without_progress, parse_int64));
    NARAD_RETURN_IF_ERROR(set_duration("NARAD_MOVE_FORCE_PROMOTE_AFTER", move.force_promote_after));
    NARAD_RETURN_IF_ERROR(
        set_duration("NARAD_MOVE_DEAD_TARGET_ABORT_AFTER", move.dead_target_abort_after));
    NARAD_RETURN_IF_ERROR(set_int("NARAD_MOVE_SWEEP_EVERY", move.sweep_every, parse_int64));
    NARAD_RETURN_IF_ERROR(set_duration("NARAD_MOVE_SELF_FENCE_MARGIN", move.self_fence_margin));
    if (auto v = env("NARAD_SECURITY_ENABLED")) {
        auto parsed = parse_bool(*v);
        if (!parsed.is_ok()) return with_name("NARAD_SECURITY_ENABLED", parsed.status());
        config.security.enabled = *parsed;
    }
    if (auto v = env("NARAD_CLUSTER_PEERS")) {
        config.cluster.peers.clear();
        for (const std::string& item : split_trimmed(*v, ',')) {
            auto at = item.find('@');
            bool one_at = at != std::string::npos && item.find('@', at + 1) == std::string::npos;
            std::string id = one_at ? trim(item.substr(0, at)) : "";
            std::string addr = one_at ? trim(item.substr(at + 1)) : "";
            if (id.empty() || addr.empty()) {
                return Status(Errc::invalid_argument, "NARAD_CLUSTER_PEERS: invalid peer \"" +
                                                          item + "\": want id@host:port");
            }
            config.cluster.peers.push_back(PeerConfig{id, addr});
        }
    }
    if (auto v = env("NARAD_CLUSTER_INITIAL_MEMBERS")) {
        config.cluster.initial_members = split_trimmed(*v, ',');
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
    std::vector<std::string> problems;
    auto require = [&](bool ok, std::string message) {
        if (!ok) problems.push_back(std::move(message));
    };
    // A listen or peer address must name a port; checked here so that nothing later has to
    // assume it (a missing port is an error at start-up, never an abort).
    auto require_address = [&](std::string_view field, const std::string& address,
                               bool needs_host) {
        if (trim(address).empty()) return;  // reported as empty where the field is required
        auto split = split_host_port(address);
        if (!split.is_ok()) {
            problems.push_back(std::string(field) + " \"" + address +
                               "\" must be host:port with a port from 0 to 65535");
        } else if (needs_host && (split->first.empty() || split->second == 0)) {
            problems.push_back(std::string(field) + " \"" + address +
                               "\" must name a host and a port other than 0");
        }
    };
    const HttpConfig& http = config.http;
    require(!trim(http.addr).empty(), "http.addr must not be empty");
    require_address("http.addr", http.addr, false);
    require(http.read_timeout.count() > 0, "http.read_timeout must be > 0");
    require(http.write_timeout.count() > 0, "http.write_timeout must be > 0");
    require(http.idle_timeout.count() > 0, "http.idle_timeout must be > 0");
    require(http.shutdown_grace.count() > 0, "http.shutdown_grace must be > 0");
    require(http.max_consume_wait.count() >= 0, "http.max_consume_wait must be >= 0");
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

    const ClusterConfig& cluster = config.cluster;
    require(!trim(cluster.addr).empty(), "cluster.addr must not be empty");
    require_address("cluster.addr", cluster.addr, false);
    require_address("cluster.join", cluster.join, true);
    for (const std::string& endpoint : cluster.meta_endpoints) {
        constexpr std::string_view kScheme = "http://";
        std::string_view rest = endpoint;
        if (!rest.starts_with(kScheme)) {
            problems.push_back("cluster.meta_endpoints: \"" + endpoint +
                               "\" must be http://host:port");
            continue;
        }
        rest.remove_prefix(kScheme.size());
        require_address("cluster.meta_endpoints", std::string(rest.substr(0, rest.find('/'))),
                        true);
    }
    require(http.addr != cluster.addr, "http.addr and cluster.addr must differ");
    require(cluster.dead_after >= std::chrono::seconds(1), "cluster.dead_after must be >= 1s");
    require(cluster.lease_ttl >= std::chrono::seconds(1), "cluster.lease_ttl must be >= 1s");
    require(cluster.controller_tick >= std::chrono::milliseconds(100),
            "cluster.controller_tick must be >= 100ms");
    const MoveConfig& move = config.move;
    require(move.freeze_ttl >= std::chrono::seconds(1), "move.freeze_ttl must be >= 1s");
    require(move.max_in_flight >= 1 && move.max_in_flight <= 1024,
            "move.max_in_flight must be between 1 and 1024");
    require(move.lag_bytes >= 0 && move.copy_rate >= 0,
            "move.lag_bytes and move.copy_rate must not be negative");
    require(move.max_passes >= 1 && move.max_passes <= 1000,
            "move.max_passes must be between 1 and 1000");
    require(move.passes_without_progress >= 1 && move.passes_without_progress <= move.max_passes,
            "move.passes_without_progress must be between 1 and move.max_passes");
    require(move.force_promote_after >= std::chrono::seconds(1),
            "move.force_promote_after must be >= 1s");
    require(move.dead_target_abort_after >= std::chrono::seconds(1),
            "move.dead_target_abort_after must be >= 1s");
    require(move.sweep_every >= 0, "move.sweep_every must be >= 0 (0: never)");
    require(move.self_fence_margin >= nanoseconds(0), "move.self_fence_margin must be >= 0");
    require(cluster.voters >= 1 && cluster.voters <= 5 && cluster.voters % 2 == 1,
            "cluster.voters must be 1, 3 or 5");
    require(cluster.min_voters >= 1 && cluster.min_voters <= 5,
            "cluster.min_voters must be between 1 and 5");
    require(validate_node_id(cluster.name).is_ok(),
            "cluster.name must match ^[A-Za-z0-9._-]{1,255}$");
    if (!cluster.node_id.empty()) {
        Status node_id = validate_node_id(cluster.node_id);
        require(node_id.is_ok(), node_id.message());
    }
    require(cluster.etcd_client_port != cluster.etcd_peer_port,
            "cluster.etcd_client_port and cluster.etcd_peer_port must differ");
    if (!cluster.peers.empty()) {
        require(!cluster.node_id.empty(),
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
            require(!peer.id.empty(), where + ".id must not be empty");
            require(!peer.addr.empty(), where + ".addr must not be empty");
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
        require(has_id, "cluster.peers must include local node id \"" + cluster.node_id + "\"");
        require(has_addr,
                "cluster.peers must include local cluster address \"" + cluster.addr + "\"");
        require(has_voter, "cluster.peers must include local voter \"" + cluster.node_id + "\"@" +
                               cluster.addr);
    }

    const StorageConfig& storage = config.storage;
    require(!storage.data_dir.empty(), "storage.data_dir must not be empty");
    std::string codec = lower(storage.codec);
    require(codec == "zstd" || codec == "none",
            "storage.codec \"" + storage.codec + "\" is not one of [zstd, none]");
    std::string level = lower(storage.compression_level);
    require(level == "fastest" || level == "default" || level == "better" || level == "best",
            "storage.compression_level \"" + storage.compression_level +
                "\" is not one of [fastest, default, better, best]");
    require(storage.idle_log_eviction_ms == 0 || storage.idle_log_eviction_ms >= 60'000,
            "storage.idle_log_eviction_ms (" + std::to_string(storage.idle_log_eviction_ms) +
                ") must be 0 (disabled) or >= 60000");

    const TopicDefaultsConfig& topic = config.topic;
    require(topic.default_partitions >= 3, "topic.default_partitions must be >= 3");
    require(topic.max_partitions > 0, "topic.max_partitions must be > 0");
    if (topic.default_partitions > topic.max_partitions) {
        problems.push_back("topic.default_partitions (" + std::to_string(topic.default_partitions) +
                           ") must not exceed topic.max_partitions (" +
                           std::to_string(topic.max_partitions) + ")");
    }
    if (topic.default_retention_age_ms < 0) {
        problems.push_back("topic.default_retention_age_ms must be >= 0");
    } else if (topic.default_retention_age_ms != 0 && topic.default_retention_age_ms < 3'600'000) {
        problems.push_back("topic.default_retention_age_ms (" +
                           std::to_string(topic.default_retention_age_ms) +
                           ") must be >= 3600000 (1 hour) or 0 (keep forever)");
    }
    require(topic.default_visibility_timeout_ms >= 0,
            "topic.default_visibility_timeout_ms must be >= 0");
    require(topic.default_max_in_flight_per_partition > 0,
            "topic.default_max_in_flight_per_partition must be > 0");
    require(topic.default_max_acked_ahead_per_partition > 0,
            "topic.default_max_acked_ahead_per_partition must be > 0");

    require(config.fanout.max_batch_records > 0, "fanout.max_batch_records must be > 0");
    require(config.fanout.max_batch_bytes > 0, "fanout.max_batch_bytes must be > 0");
    require(config.fanout.linger_ms >= 0, "fanout.linger_ms must be >= 0");

    std::string log_level = lower(config.log.level);
    require(log::valid_level(log_level) || log_level == "warning",
            "log.level \"" + config.log.level + "\" is not one of [debug, info, warn, error]");
    require(config.log.format == "json" || config.log.format == "text",
            "log.format \"" + config.log.format + "\" is not one of [json, text]");

    if (config.security.enabled && !cluster.peers.empty()) {
        require(!config.security.cluster_secret.empty(),
                "security.cluster_secret (NARAD_CLUSTER_SECRET) is required when security is "
                "enabled with cluster peers");
    }

    if (problems.empty()) return Status::ok();
    std::string joined;
    for (const auto& problem : problems) {
        if (!joined.empty()) joined += "; ";
        joined += problem;
    }
    return Status(Errc::invalid_argument, joined);
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
