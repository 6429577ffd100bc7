// `narad server start [--dev]` (runs the node in this process) and `narad server report`.
#include <cstdlib>
#include <memory>

#include "cli/calls.h"
#include "cli/command.h"
#include "cli/server.h"
#include "cli/topic_format.h"

namespace narad::cli {
namespace {

struct ServerFlags {
    std::vector<std::string> args;
    bool dev = false;
    int64_t port = kDefaultApiPort;
    std::string data_dir;
};

Status run_start(const ServerFlags& f, CommandEnv& env) {
    NARAD_ASSIGN_OR_RETURN(ServeLaunch launch,
                           plan_server_start(f.dev ? ServerMode::dev : ServerMode::configured,
                                             f.port, f.data_dir, env.env));
    if (!env.serve) {
        return Status(Errc::internal, "this build of narad has no server (node library missing)");
    }
    for (const auto& [name, value] : launch.set_env) {
        if (::setenv(name.c_str(), value.c_str(), 1) != 0) {
            return Status(Errc::internal, "setenv " + name + " failed");
        }
    }
    if (launch.banner) env.output.err << dev_banner(f.port, env.output.style) << std::flush;
    env.exit_code = env.serve(launch.args);
    return Status::ok();
}

Status run_report(CommandEnv& env) {
    NARAD_ASSIGN_OR_RETURN(auto api, env.api());
    NARAD_ASSIGN_OR_RETURN(net::HttpResponse list, send(*api, "GET", "/v1/topics?limit=1000"));
    NARAD_ASSIGN_OR_RETURN(TopicPage page, parse_topic_page(list.body));
    if (page.topics.empty()) {
        env.output.out << "no topics\n";
        return Status::ok();
    }
    std::vector<ReportRow> rows;
    for (const TopicItem& topic : page.topics) {
        auto info = send(*api, "GET", topic_path(topic.name));
        if (!info.is_ok()) {
            ReportRow row;
            row.topic = topic;
            row.error = info.status().message();
            rows.push_back(std::move(row));
            continue;
        }
        NARAD_ASSIGN_OR_RETURN(std::vector<PartitionStats> stats,
                               parse_partition_stats(info->body));
        rows.push_back(make_report_row(topic, stats));
    }
    env.output.out << format_server_report(rows, env.output.style);
    return Status::ok();
}

}  // namespace

void register_server_commands(CommandTree& tree) {
    CommandEnv& env = tree.env();
    CLI::App* server = tree.add(nullptr, "server", "run and inspect a Narad server");
    {
        auto f = std::make_shared<ServerFlags>();
        CLI::App* cmd = tree.add(server, "start",
                                 "start a broker node (--dev for a local, auth-off playground)");
        cmd->add_flag("--dev", f->dev,
                      "local playground: loopback bind, auth OFF, data in ~/.narad/data");
        tree.add_int(cmd, "port", &f->port, "API port");
        cmd->add_option("--data-dir", f->data_dir,
                        "storage directory (dev default: ~/.narad/data)");
        tree.set_action(cmd, f, ArgRule::none(), [f, &env] { return run_start(*f, env); });
    }
    {
        auto f = std::make_shared<ServerFlags>();
        CLI::App* cmd =
            tree.add(server, "report",
                     "one table: every topic's partitions, messages, size, and owner spread");
        tree.set_action(cmd, f, ArgRule::none(), [&env] { return run_report(env); });
    }
}

}  // namespace narad::cli
