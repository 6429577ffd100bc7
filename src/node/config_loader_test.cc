#include "node/config_loader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace narad::node {
namespace {

EnvLookup env_of(std::map<std::string, std::string> values) {
    return [values](const std::string& name) -> std::optional<std::string> {
        auto it = values.find(name);
        if (it == values.end()) return std::nullopt;
        return it->second;
    };
}

// Rule: with nothing set, Narad's defaults apply and validate.
TEST(ConfigLoaderTest, DefaultsAreNarads) {
    auto config = load_config({}, env_of({})).value();
    EXPECT_EQ(config.http.addr, ":7942");
    EXPECT_EQ(config.http.max_consume_wait, std::chrono::seconds(10));
    EXPECT_EQ(config.storage.data_dir, "data");
    EXPECT_EQ(config.topic.default_retention_age_ms, 604'800'000);
    EXPECT_TRUE(config.security.enabled);
}

// Rule: layers apply in order: file, then environment, then flags.
TEST(ConfigLoaderTest, LayersApplyInOrder) {
    Config config;
    ASSERT_TRUE(apply_config_json(R"({"http":{"addr":":1000","read_timeout":"2s"},)"
                                  R"("storage":{"codec":"zstd","data_dir":""}})",
                                  config)
                    .is_ok());
    EXPECT_EQ(config.http.read_timeout, std::chrono::seconds(2));
    EXPECT_EQ(config.storage.codec, "zstd");
    EXPECT_EQ(config.storage.data_dir, "data");
    ASSERT_TRUE(
        apply_environment(
            env_of({{"NARAD_HTTP_ADDR", ":2000"}, {"NARAD_SECURITY_ENABLED", "false"}}), config)
            .is_ok());
    EXPECT_EQ(config.http.addr, ":2000");
    EXPECT_FALSE(config.security.enabled);
    apply_flags(ServeFlags{.port = 3000}, config);
    EXPECT_EQ(config.http.addr, ":3000");
    apply_flags(ServeFlags{.port = 3000, .addr = "127.0.0.1:4000"}, config);
    EXPECT_EQ(config.http.addr, "127.0.0.1:4000");
}

// Rule: the file is strict, and internal storage settings cannot be configured.
TEST(ConfigLoaderTest, FileIsStrict) {
    Config config;
    EXPECT_EQ(apply_config_json(R"({"http":{"bogus":1}})", config).message(),
              "json: unknown field \"bogus\"");
    EXPECT_EQ(apply_config_json(R"({"storage":{"segment_bytes":1}})", config).message(),
              "storage.segment_bytes is an internal setting and cannot be configured");
    EXPECT_EQ(apply_config_json(R"({"http":{"read_timeout":true}})", config).message(),
              "config: http.read_timeout: a duration is a string with a unit, such as \"10s\"");
    // A bare number is refused, as Narad's loader refuses it.
    EXPECT_FALSE(apply_config_json(R"({"http":{"read_timeout":10}})", config).is_ok());
    EXPECT_EQ(config.http.read_timeout, std::chrono::seconds(10));
    EXPECT_EQ(apply_config_json(R"({"bogus":{}})", config).message(),
              "json: unknown field \"bogus\"");
    EXPECT_EQ(apply_config_json(R"({"topic":{"default_partitions":"3"}})", config).message(),
              "json: cannot unmarshal string into field topic.default_partitions of type int");
}

// Rule: environment values are parsed as Go parses them, with Narad's error texts.
TEST(ConfigLoaderTest, EnvironmentErrors) {
    auto failed = load_config({}, env_of({{"NARAD_HTTP_READ_TIMEOUT", "abc"}}));
    EXPECT_EQ(failed.status().message(),
              "config: config: apply env: NARAD_HTTP_READ_TIMEOUT: time: invalid duration \"abc\"");
    failed = load_config({}, env_of({{"NARAD_TOPIC_DEFAULT_PARTITIONS", "x"}}));
    EXPECT_EQ(failed.status().message(),
              "config: config: apply env: NARAD_TOPIC_DEFAULT_PARTITIONS: strconv.Atoi: parsing "
              "\"x\": invalid syntax");
    failed = load_config({}, env_of({{"NARAD_SECURITY_ENABLED", "yes"}}));
    EXPECT_NE(failed.status().message().find("strconv.ParseBool"), std::string::npos);
}

// Rule: validation reports every violation together, in Narad's words.
TEST(ConfigLoaderTest, ValidationJoinsAllProblems) {
    auto failed = load_config({}, env_of({{"NARAD_HTTP_MAX_CONSUME_WAIT", "40s"},
                                          {"NARAD_TOPIC_DEFAULT_PARTITIONS", "2"},
                                          {"NARAD_LOG_FORMAT", "xml"}}));
    EXPECT_EQ(
        failed.status().message(),
        "config: http.max_consume_wait (40s) must be < http.write_timeout (30s); "
        "http.max_consume_wait (40s) must be <= http.shutdown_grace (10s); "
        "topic.default_partitions must be >= 3; log.format \"xml\" is not one of [json, text]");
}

// Rule: every move constant is a setting: the file's `move` block and NARAD_MOVE_* (the variable
// winning), each with the spec's default and checked.
TEST(ConfigLoaderTest, MoveSettingsFromTheFileAndTheEnvironment) {
    Config defaults;
    EXPECT_EQ(defaults.move.force_promote_after, std::chrono::minutes(2));
    EXPECT_EQ(defaults.move.dead_target_abort_after, std::chrono::minutes(2));
    EXPECT_EQ(defaults.move.sweep_every, 30);
    EXPECT_EQ(defaults.move.max_passes, 20);
    EXPECT_EQ(defaults.move.passes_without_progress, 3);
    Config config;
    ASSERT_TRUE(apply_config_json(R"({"move":{"force_promote_after":"90s","sweep_every":5,)"
                                  R"("max_passes":7,"passes_without_progress":2}})",
                                  config)
                    .is_ok());
    EXPECT_EQ(config.move.force_promote_after, std::chrono::seconds(90));
    EXPECT_EQ(config.move.sweep_every, 5);
    ASSERT_TRUE(apply_environment(env_of({{"NARAD_MOVE_FORCE_PROMOTE_AFTER", "8s"},
                                          {"NARAD_MOVE_DEAD_TARGET_ABORT_AFTER", "9s"}}),
                                  config)
                    .is_ok());
    EXPECT_EQ(config.move.force_promote_after, std::chrono::seconds(8));
    EXPECT_EQ(config.move.dead_target_abort_after, std::chrono::seconds(9));
    EXPECT_EQ(config.move.max_passes, 7);
    EXPECT_FALSE(apply_config_json(R"({"move":{"bogus":1}})", config).is_ok());
    EXPECT_EQ(
        load_config({}, env_of({{"NARAD_MOVE_PASSES_WITHOUT_PROGRESS", "50"}})).status().message(),
        "config: move.passes_without_progress must be between 1 and move.max_passes");
}

// Rule: cluster.min_voters defaults to 3, comes from the file or NARAD_CLUSTER_MIN_VOTERS (the
// variable winning), and must be between 1 and 5.
TEST(ConfigLoaderTest, MinVotersFromTheFileAndTheEnvironment) {
    EXPECT_EQ(Config().cluster.min_voters, 3);
    Config config;
    ASSERT_TRUE(apply_config_json(R"({"cluster":{"min_voters":5}})", config).is_ok());
    EXPECT_EQ(config.cluster.min_voters, 5);
    ASSERT_TRUE(apply_environment(env_of({{"NARAD_CLUSTER_MIN_VOTERS", "1"}}), config).is_ok());
    EXPECT_EQ(config.cluster.min_voters, 1);
    EXPECT_EQ(load_config({}, env_of({{"NARAD_CLUSTER_MIN_VOTERS", "0"}})).status().message(),
              "config: cluster.min_voters must be between 1 and 5");
    EXPECT_EQ(load_config({}, env_of({{"NARAD_CLUSTER_MIN_VOTERS", "6"}})).status().message(),
              "config: cluster.min_voters must be between 1 and 5");
    EXPECT_FALSE(load_config({}, env_of({{"NARAD_CLUSTER_MIN_VOTERS", "three"}})).is_ok());
}

// Rule: a secured node that joins others needs the cluster secret, and a rotation's previous
// secret needs a current one beside it.
TEST(ConfigLoaderTest, ClusterSecretRules) {
    auto joined = load_config(ServeFlags{.join = "10.0.0.1:7943"}, env_of({}));
    ASSERT_FALSE(joined.is_ok());
    EXPECT_NE(joined.status().message().find("NARAD_CLUSTER_SECRET) is required"),
              std::string::npos);
    EXPECT_TRUE(
        load_config(ServeFlags{.join = "10.0.0.1:7943"}, env_of({{"NARAD_CLUSTER_SECRET", "s"}}))
            .is_ok());
    EXPECT_TRUE(load_config(ServeFlags{.join = "10.0.0.1:7943"},
                            env_of({{"NARAD_SECURITY_ENABLED", "false"}}))
                    .is_ok());
    auto previous_only = load_config({}, env_of({{"NARAD_CLUSTER_SECRET_PREVIOUS", "old"}}));
    ASSERT_FALSE(previous_only.is_ok());
    EXPECT_NE(previous_only.status().message().find("PREVIOUS is set without"), std::string::npos);
    auto rotating = load_config(
        {}, env_of({{"NARAD_CLUSTER_SECRET", "new"}, {"NARAD_CLUSTER_SECRET_PREVIOUS", "old"}}));
    ASSERT_TRUE(rotating.is_ok()) << rotating.status().to_string();
    EXPECT_EQ(rotating->security.cluster_secret_previous, "old");
}

// Rule: every address is checked at load time, so nothing later can abort on one: a listen address
// needs a port, a join target a host and a port, a metastore endpoint http://host:port.
TEST(ConfigLoaderTest, AddressesNeedAPort) {
    EXPECT_EQ(load_config(ServeFlags{.addr = "127.0.0.1"}, env_of({})).status().message(),
              "config: http.addr \"127.0.0.1\" must be host:port with a port from 0 to 65535");
    EXPECT_EQ(load_config(ServeFlags{.addr = "127.0.0.1:99999"}, env_of({})).code(),
              Errc::invalid_argument);
    EXPECT_TRUE(load_config(ServeFlags{.addr = "[::1]:7000"}, env_of({})).is_ok());
    EXPECT_EQ(load_config(ServeFlags{.join = ":7943"}, env_of({{"NARAD_CLUSTER_SECRET", "s"}}))
                  .status()
                  .message(),
              "config: cluster.join \":7943\" must name a host and a port other than 0");
    EXPECT_EQ(load_config({}, env_of({{"NARAD_CLUSTER_ADDR", "nohost"}})).status().message(),
              "config: cluster.addr \"nohost\" must be host:port with a port from 0 to 65535");
    EXPECT_EQ(load_config(ServeFlags{.meta_endpoints = {"127.0.0.1:2379"}}, env_of({}))
                  .status()
                  .message(),
              "config: cluster.meta_endpoints: \"127.0.0.1:2379\" must be http://host:port or "
              "https://host:port");
    EXPECT_TRUE(
        load_config(ServeFlags{.meta_endpoints = {"http://127.0.0.1:2379"}}, env_of({})).is_ok());
    // https needs the cluster TLS files, the node's identity towards etcd.
    auto https = ServeFlags{.meta_endpoints = {"https://127.0.0.1:2379"}};
    EXPECT_NE(load_config(https, env_of({})).status().message().find("needs security.cluster_tls_"),
              std::string::npos);
    EXPECT_TRUE(load_config(https, env_of({{"NARAD_CLUSTER_TLS_CERT_FILE", "/c.pem"},
                                           {"NARAD_CLUSTER_TLS_KEY_FILE", "/c.key"},
                                           {"NARAD_CLUSTER_TLS_CA_FILE", "/ca.pem"}}))
                    .is_ok());
}

// Rule: a Narad 3.2 file loads: every key it may hold is known here, the Narad settings with no
// effect here are accepted, checked and reported, and an unknown key is still an error.
TEST(ConfigLoaderTest, ANarad32FileLoads) {
    Config config;
    Status loaded = apply_config_json(R"({
        "http": {"addr": ":7942", "max_header_bytes": 8192, "max_connections": 100,
                 "max_consume_in_flight_per_identity": 10,
                 "max_produce_in_flight_per_identity": 5,
                 "max_batch_body_bytes_in_flight": 1048576, "metrics_addr": ":9100",
                 "metrics_unauthenticated": true, "pprof_addr": ""},
        "cluster": {"advertise_addr": "10.0.0.1:7943", "raft_snapshot_threshold": 10,
                    "raft_snapshot_interval": "1m", "raft_trailing_logs": 5},
        "storage": {"cold_retention_walk_ms": 60000,
                    "consumer_offset_commit_interval_ms": 1000, "ingress_wal_prealloc": true},
        "security": {"enabled": false, "allow_plaintext_raft": true,
                     "allow_insecure_cluster": true, "allow_legacy_cluster_auth": false}
    })",
                                      config);
    ASSERT_TRUE(loaded.is_ok()) << loaded.message();
    EXPECT_EQ(config.http.max_header_bytes, 8192);
    EXPECT_EQ(config.http.max_connections, 100);
    EXPECT_EQ(config.http.max_consume_in_flight_per_identity, 10);
    EXPECT_EQ(config.http.max_produce_in_flight_per_identity, 5);
    EXPECT_EQ(config.http.metrics_addr, ":9100");
    EXPECT_EQ(config.cluster.advertise_addr, "10.0.0.1:7943");
    EXPECT_EQ(config.storage.cold_retention_walk_ms, 60'000);
    EXPECT_EQ(config.storage.consumer_offset_commit_interval_ms, 1000);
    ASSERT_TRUE(validate_config(config).is_ok()) << validate_config(config).message();
    // Each inert setting given is reported once, with its reason.
    std::set<std::string> inert;
    for (const std::string& line : config.inert) inert.insert(line.substr(0, line.find(':')));
    EXPECT_EQ(inert, (std::set<std::string>{
                         "http.pprof_addr", "cluster.raft_snapshot_threshold",
                         "cluster.raft_snapshot_interval", "cluster.raft_trailing_logs",
                         "storage.ingress_wal_prealloc", "security.allow_plaintext_raft",
                         "security.allow_insecure_cluster", "security.allow_legacy_cluster_auth"}));
    EXPECT_FALSE(apply_config_json(R"({"http":{"max_headers":1}})", config).is_ok());
    ASSERT_TRUE(apply_environment(env_of({{"NARAD_REMOTES_ALLOWED_PORTS", "443, 8443"},
                                          {"NARAD_HTTP_MAX_CONNECTIONS", "0"}}),
                                  config)
                    .is_ok());
    EXPECT_EQ(config.remotes.allowed_ports, (std::vector<int64_t>{443, 8443}));
    EXPECT_EQ(config.http.max_connections, 0);
}

// Rule: the new settings are checked with the rest, in one message.
TEST(ConfigLoaderTest, NewSettingsAreChecked) {
    auto failed = load_config({}, env_of({{"NARAD_HTTP_MAX_HEADER_BYTES", "100"},
                                          {"NARAD_HTTP_METRICS_ADDR", ":7942"},
                                          {"NARAD_CLUSTER_ADVERTISE_ADDR", ":7943"},
                                          {"NARAD_REMOTES_ALLOWED_PORTS", "0"},
                                          {"NARAD_TOPIC_DEFAULT_VISIBILITY_TIMEOUT_MS", "0"}}));
    EXPECT_EQ(failed.status().message(),
              "config: http.max_header_bytes must be between 4096 and 1048576; "
              "http.metrics_addr must differ from http.addr and cluster.addr; "
              "cluster.advertise_addr \":7943\" must name a host and a port other than 0; "
              "topic.default_visibility_timeout_ms must be > 0; "
              "remotes.allowed_ports entries must be 1..65535");
    Config config;
    ASSERT_TRUE(apply_config_json(R"({"storage":{"consumer_offset_commit_interval_ms":5}})", config)
                    .is_ok());
    EXPECT_EQ(validate_config(config).message(),
              "storage.consumer_offset_commit_interval_ms (5) must be between 10 and 60000");
    EXPECT_EQ(apply_config_json(R"({"storage":{"fsync":"per_write"}})", config).message(),
              "storage.fsync is an internal setting and cannot be configured");
}

// Rule: docs/configuration.md carries the reference table generated from the settings table, so
// the doc cannot drift from the code. NARAD_UPDATE_DOCS=1 rewrites it.
TEST(ConfigLoaderTest, TheReferenceInTheDocsIsTheTable) {
    const std::string path = std::string(NARAD_SOURCE_DIR) + "/docs/configuration.md";
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::string doc = buffer.str();
    const std::string begin = "<!-- settings:begin (generated by config_loader_test) -->\n";
    const std::string end = "<!-- settings:end -->";
    size_t from = doc.find(begin);
    size_t to = doc.find(end);
    ASSERT_NE(from, std::string::npos) << "no generated section in " << path;
    ASSERT_NE(to, std::string::npos);
    from += begin.size();
    std::string table = settings_reference();
    if (const char* update = std::getenv("NARAD_UPDATE_DOCS"); update && *update == '1') {
        doc.replace(from, to - from, table);
        std::ofstream(path) << doc;
        return;
    }
    EXPECT_EQ(doc.substr(from, to - from), table)
        << "docs/configuration.md is stale: run the test with NARAD_UPDATE_DOCS=1";
}

}  // namespace
}  // namespace narad::node
