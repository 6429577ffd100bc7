#include "cli/server.h"

namespace narad::cli {

Result<ServeLaunch> plan_server_start(ServerMode mode, int64_t port, const std::string& data_dir,
                                      const GetEnv& env) {
    ServeLaunch launch;
    if (mode == ServerMode::configured) {
        if (!data_dir.empty()) launch.args = {"--data-dir", data_dir};
        if (port != kDefaultApiPort) {
            launch.args.push_back("--port");
            launch.args.push_back(std::to_string(port));
        }
        return launch;
    }
    std::string directory = data_dir;
    if (directory.empty()) {
        const std::string home = env("HOME");
        if (home.empty()) return Status(Errc::invalid_argument, "$HOME is not defined");
        directory = home + "/.narad/data";
    }
    // A playground: plaintext HTTP on loopback only, security off. Without --dev every secure
    // default stays.
    launch.set_env.emplace_back("NARAD_SECURITY_ENABLED", "false");
    // Pin the cluster transport to loopback next to the API (port + 1) unless already chosen.
    if (env("NARAD_CLUSTER_ADDR").empty()) {
        launch.set_env.emplace_back("NARAD_CLUSTER_ADDR", "127.0.0.1:" + std::to_string(port + 1));
    }
    // The local etcd member next to them (port + 2 and + 3), so a dev node never collides with a
    // production node's 7944/7945 on the same machine.
    launch.args = {"--addr",
                   "127.0.0.1:" + std::to_string(port),
                   "--data-dir",
                   directory,
                   "--log-format",
                   "text",
                   "--etcd-client-port",
                   std::to_string(port + 2),
                   "--etcd-peer-port",
                   std::to_string(port + 3)};
    launch.banner = true;
    return launch;
}

std::string dev_banner(int64_t port, const Style& style) {
    return "\n  " + style.bold("narad") +
           "  dev mode: auth OFF, bound to loopback only\n"
           "\n"
           "  Try it from another terminal:\n"
           "\n"
           "    narad topic add demo\n"
           "    narad sub demo --peek        # terminal B: watch messages flow\n"
           "    narad pub demo '{\"hello\":\"narad\"}' --count 100 --rate 20\n"
           "\n"
           "  Or plain curl:\n"
           "\n"
           "    curl -X POST 'http://127.0.0.1:" +
           std::to_string(port) +
           "/v1/topics' -H 'Content-Type: application/json' -d '{\"name\":\"demo\"}'\n"
           "\n";
}

}  // namespace narad::cli
