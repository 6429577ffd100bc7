// `narad server start` planning, as a pure function: which environment variables to set and
// which `serve` arguments to pass (--dev: auth off, loopback, cluster port = port + 1, data in
// ~/.narad/data, text logs, a banner), and the banner text itself. Pure; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "cli/context_store.h"
#include "cli/output.h"

namespace narad::cli {

inline constexpr int64_t kDefaultApiPort = 7942;

struct ServeLaunch {
    std::vector<std::pair<std::string, std::string>> set_env;  // applied in order
    std::vector<std::string> args;                             // after "serve"
    bool banner = false;
};

// `narad server start` as Narad's CLI runs it: the node as configured, or (--dev) a playground on
// loopback with security off and data under ~/.narad/data.
enum class ServerMode { configured, dev };

Result<ServeLaunch> plan_server_start(ServerMode mode, int64_t port, const std::string& data_dir,
                                      const GetEnv& env);

// The --dev quickstart banner (printed to stderr), exactly as the Go CLI lays it out.
std::string dev_banner(int64_t port, const Style& style);

}  // namespace narad::cli
