// Loads the layered configuration of `narad serve`: defaults, the JSON file given by --config
// (strict: unknown keys are errors; the storage block takes only its public keys; durations are
// strings with a unit), NARAD_* environment variables (a variable counts when set, even to ""),
// then flags; finally every rule is checked and all violations are reported together, in Narad's
// words. One table in config_loader.cc describes every setting once. Narad settings that have no
// effect here are accepted and checked, and recorded in Config::inert when given. Pure apart from
// reading the file and the environment passed in.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "node/config.h"

namespace narad::node {

// The `narad serve` flags. Zero or empty values leave the setting unchanged, as in Narad.
struct ServeFlags {
    std::string config_path;
    int port = 0;
    std::string addr;
    int cluster_port = 0;
    std::string node_id;
    std::string data_dir;
    std::string log_level;
    std::string log_format;
    std::string pprof_addr;
    // Ours.
    std::string join;
    std::vector<std::string> meta_endpoints;
    std::string cluster_name;
    int etcd_client_port = 0;
    int etcd_peer_port = 0;
};

// Reads one environment variable; nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_environment();

// Applies the JSON document to `config`. Errors name the problem ("json: unknown field \"x\"").
Status apply_config_json(std::string_view json, Config& config);
// Applies NARAD_* variables to `config`.
Status apply_environment(const EnvLookup& env, Config& config);
void apply_flags(const ServeFlags& flags, Config& config);
// Checks every rule; the message joins all violations with "; ".
Status validate_config(const Config& config);

// The reference table of every setting (Markdown), as docs/configuration.md carries it.
std::string settings_reference();

// All of the above, with Narad's error prefixes ("config: config: load file: ...").
Result<Config> load_config(const ServeFlags& flags, const EnvLookup& env);

}  // namespace narad::node
