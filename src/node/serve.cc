#include "node/serve.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "base/failpoint.h"
#include "base/log.h"
#include "node/config_loader.h"
#include "node/node.h"

namespace narad::node {
namespace {

constexpr const char* kUsage =
    "Usage: narad serve [flags]\n"
    "\n"
    "Run the Narad HTTP API server. Default port: 7942.\n"
    "\n"
    "Flags:\n"
    "  -addr string\n"
    "    \tlisten address for the HTTP API (host:port); wins over -port\n"
    "  -cluster-name string\n"
    "    \tthe cluster's name: its etcd keys live under /narad/<name>/ (default \"narad\")\n"
    "  -cluster-port int\n"
    "    \tport for node-to-node traffic (default 7943)\n"
    "  -config string\n"
    "    \tpath to a JSON config file\n"
    "  -data-dir string\n"
    "    \tdata directory (default \"data\")\n"
    "  -etcd-client-port int\n"
    "    \tclient port of the local etcd member (default 7944)\n"
    "  -etcd-peer-port int\n"
    "    \tpeer port of the local etcd member (default 7945)\n"
    "  -join host:port\n"
    "    \tjoin the cluster of the node whose cluster port this is (first start only)\n"
    "  -log-format string\n"
    "    \tjson or text (default \"json\")\n"
    "  -log-level string\n"
    "    \tdebug, info, warn or error (default \"info\")\n"
    "  -meta-endpoints url,...\n"
    "    \tuse this external etcd cluster as the metastore and start no local member\n"
    "  -node-id string\n"
    "    \tthis node's id (default: the host name)\n"
    "  -port int\n"
    "    \tport for the HTTP API (default 7942)\n"
    "  -pprof-addr string\n"
    "    \taccepted for compatibility; profiling is done with perf here\n";

// Parses Go-style flags: -name value, -name=value, --name value, --name=value.
Result<ServeFlags> parse_flags(int argc, char** argv, bool& help) {
    ServeFlags flags;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--") break;
        if (arg.size() < 2 || arg[0] != '-') {
            return Status(Errc::invalid_argument, "unexpected argument \"" + arg + "\"");
        }
        std::string name = arg.substr(arg[1] == '-' ? 2 : 1);
        if (name == "h" || name == "help") {
            help = true;
            return flags;
        }
        std::string value;
        auto eq = name.find('=');
        if (eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
        } else {
            if (i + 1 >= argc) {
                return Status(Errc::invalid_argument, "flag needs an argument: -" + name);
            }
            value = argv[++i];
        }
        auto integer = [&](int& target) -> Status {
            char* end = nullptr;
            long parsed = std::strtol(value.c_str(), &end, 10);
            if (value.empty() || *end != '\0' || parsed < 0 || parsed > 65535) {
                return Status(Errc::invalid_argument, "invalid value \"" + value + "\" for flag -" +
                                                          name + ": parse error");
            }
            target = static_cast<int>(parsed);
            return Status::ok();
        };
        if (name == "config") {
            flags.config_path = value;
        } else if (name == "port") {
            NARAD_RETURN_IF_ERROR(integer(flags.port));
        } else if (name == "addr") {
            flags.addr = value;
        } else if (name == "cluster-port") {
            NARAD_RETURN_IF_ERROR(integer(flags.cluster_port));
        } else if (name == "node-id") {
            flags.node_id = value;
        } else if (name == "data-dir") {
            flags.data_dir = value;
        } else if (name == "log-level") {
            flags.log_level = value;
        } else if (name == "log-format") {
            flags.log_format = value;
        } else if (name == "pprof-addr") {
            flags.pprof_addr = value;
        } else if (name == "join") {
            flags.join = value;
        } else if (name == "meta-endpoints") {
            flags.meta_endpoints.clear();
            for (size_t start = 0; start <= value.size();) {
                size_t comma = value.find(',', start);
                if (comma == std::string::npos) comma = value.size();
                if (comma > start)
                    flags.meta_endpoints.push_back(value.substr(start, comma - start));
                start = comma + 1;
            }
        } else if (name == "cluster-name") {
            flags.cluster_name = value;
        } else if (name == "etcd-client-port") {
            NARAD_RETURN_IF_ERROR(integer(flags.etcd_client_port));
        } else if (name == "etcd-peer-port") {
            NARAD_RETURN_IF_ERROR(integer(flags.etcd_peer_port));
        } else {
            return Status(Errc::invalid_argument, "flag provided but not defined: -" + name);
        }
    }
    return flags;
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

int serve_main(int argc, char** argv) {
    bool help = false;
    auto flags = parse_flags(argc, argv, help);
    if (help) {
        std::fputs(kUsage, stderr);
        return 0;
    }
    if (!flags.is_ok()) {
        std::fprintf(stderr, "%s\n%s", flags.status().message().c_str(), kUsage);
        return 2;
    }
    auto config = load_config(*flags, process_environment());
    if (!config.is_ok()) {
        // Bad start-up input, like a bad flag: exit status 2, as Go's flag package uses.
        std::fprintf(stderr, "narad: %s\n", config.status().message().c_str());
        return 2;
    }
    std::string level = lower(config->log.level);
    if (level == "warning") level = "warn";
    log::init(level, config->log.format == "text" ? log::Format::text : log::Format::json);
    for (const std::string& inert : config->inert) {
        NARAD_LOG_WARN("config: {} (the setting is accepted and has no effect)", inert);
    }
    if (const char* spec = std::getenv("NARAD_FAILPOINTS"); spec != nullptr && *spec != '\0') {
        Status armed = failpoint::configure(spec);
        if (!armed.is_ok()) {
            std::fprintf(stderr, "narad: NARAD_FAILPOINTS: %s\n", armed.message().c_str());
            return 1;
        }
        NARAD_LOG_WARN("failpoints armed: {}", spec);
    }

    // Block the stop signals in every thread; this one waits for them.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGUSR1);  // this node was decommissioned (Node::on_decommissioned)
    sigaddset(&signals, SIGHUP);   // reload the TLS certificates
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    ::signal(SIGPIPE, SIG_IGN);

    Node node(std::move(*config));
    node.on_decommissioned([] { ::kill(::getpid(), SIGUSR1); });
    Status started = node.start();
    if (!started.is_ok()) {
        NARAD_LOG_ERROR("cannot start: {}", started.to_string());
        node.stop();
        return 1;
    }
    int received = 0;
    for (;;) {
        sigwait(&signals, &received);
        if (received != SIGHUP) break;
        NARAD_LOG_INFO("received SIGHUP: reloading the TLS certificates");
        (void)node.reload_tls();
    }
    if (received == SIGUSR1) {
        NARAD_LOG_INFO("decommissioned: stopping and exiting");
    } else {
        NARAD_LOG_INFO("received {}, shutting down", received == SIGINT ? "SIGINT" : "SIGTERM");
    }
    node.stop();
    return 0;
}

}  // namespace narad::node
