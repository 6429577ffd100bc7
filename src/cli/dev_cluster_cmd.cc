// `narad dev-cluster --nodes N [--base-port P] [--data-dir D]`: a local N-node cluster on
// 127.0.0.1 for trying the cluster out (`make cluster`), in the foreground until Ctrl-C.
#include <filesystem>
#include <memory>
#include <random>

#include "cli/command.h"
#include "cli/dev_cluster.h"
#include "cli/dev_cluster_runner.h"

extern char** environ;

namespace narad::cli {
namespace {

struct DevClusterFlags {
    std::vector<std::string> args;
    int64_t nodes = 3;
    int64_t base_port = kDevClusterBasePort;
    std::string data_dir = kDevClusterDataDir;
};

bool has_node_data(const std::string& directory) {
    std::error_code error;
    return std::filesystem::is_directory(directory, error) &&
           !std::filesystem::is_empty(directory, error);
}

Status run_dev_cluster(const DevClusterFlags& f, CommandEnv& env) {
    std::error_code error;
    // Absolute, so the nodes and the printed paths do not depend on a working directory.
    const std::filesystem::path root = std::filesystem::absolute(f.data_dir, error);
    if (error) return Status(Errc::invalid_argument, "--data-dir: " + error.message());
    DevClusterOptions options{f.nodes, f.base_port, root.lexically_normal().string()};
    NARAD_ASSIGN_OR_RETURN(std::vector<DevNodePlan> nodes,
                           plan_dev_cluster(options, has_node_data));

    // The same binary serves every node.
    const std::filesystem::path binary = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error) return Status(Errc::internal, "cannot find this executable: " + error.message());

    std::random_device random;
    std::vector<std::string> inherited;
    for (char** entry = environ; *entry != nullptr; ++entry) inherited.emplace_back(*entry);
    DevClusterRunnerOptions runner_options;
    runner_options.binary = binary.string();
    runner_options.environment =
        dev_node_environment(inherited, make_cluster_secret([&random] { return random(); }));

    env.output.out << "dev cluster: " << nodes.size() << " node" << (nodes.size() == 1 ? "" : "s")
                   << ", auth OFF, loopback only, data in " << options.data_dir << std::endl;
    DevClusterRunner runner(std::move(nodes), std::move(runner_options), env.output.out);
    return runner.run();
}

}  // namespace

void register_dev_cluster_command(CommandTree& tree) {
    CommandEnv& env = tree.env();
    auto f = std::make_shared<DevClusterFlags>();
    CLI::App* cmd = tree.add(nullptr, "dev-cluster",
                             "run a local N-node cluster on 127.0.0.1 until Ctrl-C (auth off)");
    tree.add_int(cmd, "nodes", &f->nodes, "number of nodes (1-9; the first 3 host etcd)");
    tree.add_int(cmd, "base-port", &f->base_port,
                 "n1's API port; node i uses P+10(i-1) for its API, +1 cluster, +2/+3 etcd "
                 "client/peer");
    cmd->add_option("--data-dir", f->data_dir,
                    "nodes' data in D/n1..nN, their logs in D/nI.log (default ./dev-cluster)");
    tree.set_usage("narad dev-cluster", "[--nodes N] [--base-port P] [--data-dir D]");
    tree.set_action(cmd, f, ArgRule::none(), [f, &env] { return run_dev_cluster(*f, env); });
}

}  // namespace narad::cli
