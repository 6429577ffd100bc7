// `narad user add|grant|revoke|passwd|ls|rm` and `narad cluster members|moves|decommission`: thin
// HTTP calls, the live view of `cluster moves --watch` (its loop is moves_watch.h) and the progress
// of `cluster decommission --wait` (decommission_wait.h).
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/mutex.h"
#include "cli/admin.h"
#include "cli/calls.h"
#include "cli/command.h"
#include "cli/decommission_wait.h"
#include "cli/interrupt.h"
#include "cli/moves_watch.h"
#include "cli/text.h"

namespace narad::cli {
namespace {

struct AdminFlags {
    std::vector<std::string> args;
    std::string password;
    bool password_stdin = false;
    std::string current_password;
    bool current_password_stdin = false;
    std::vector<std::string> grants;
    bool cancel = false;
    bool dry_run = false;
    bool detail = false;
    bool watch = false;
    bool until_done = false;
    int64_t interval_ns = kNanosPerSecond;
    std::string target;
};

// The poll interval of --watch and --wait, within its bounds.
Result<std::chrono::nanoseconds> poll_interval(const AdminFlags& f) {
    const std::chrono::nanoseconds interval(f.interval_ns);
    if (interval < kMinWatchInterval || interval > kMaxWatchInterval) {
        return Status(Errc::invalid_argument, "--interval must be between " +
                                                  format_duration(kMinWatchInterval) + " and " +
                                                  format_duration(kMaxWatchInterval));
    }
    return interval;
}

Status run_moves_watch(const AdminFlags& f, CommandEnv& env) {
    NARAD_ASSIGN_OR_RETURN(std::chrono::nanoseconds interval, poll_interval(f));
    // Before any client thread exists (see interrupt.h). Ctrl-C waits for the frame being
    // printed, so the screen is left whole.
    std::unique_ptr<InterruptWatcher> watcher;
    if (env.handle_signals) {
        watcher = std::make_unique<InterruptWatcher>([&env] {
            MutexLock lock(env.output.mutex);
            env.output.out << std::flush;
        });
    }
    NARAD_ASSIGN_OR_RETURN(auto api, env.api());
    MovesWatchOptions options;
    options.interval = interval;
    options.until_done = f.until_done;
    options.terminal = env.output.terminal;
    options.terminal_size = stdout_terminal_size;
    return watch_moves(*api, env.output, env.sleeper, SystemClock::instance(), options);
}

void register_user(CommandTree& tree) {
    CommandEnv& env = tree.env();
    CLI::App* user = tree.add(nullptr, "user", "manage users and grants (admin)");
    {
        auto f = std::make_shared<AdminFlags>();
        CLI::App* cmd = tree.add(user, "add", "create a user");
        cmd->add_option("--user-password", f->password,
                        "the new user's password (visible in ps; prefer --user-password-stdin)");
        cmd->add_flag("--user-password-stdin", f->password_stdin,
                      "read the new user's password from the first line of stdin");
        cmd->add_option("--grant", f->grants,
                        "grant as action:pattern[,pattern] \xe2\x80\x94 e.g. --grant "
                        "\"produce:orders-*\" (actions: produce, consume, create, admin)")
            ->allow_extra_args(false);
        tree.set_action(cmd, f, ArgRule::exact(1), [f, cmd, &env]() -> Status {
            bool given = cmd->count("--user-password") > 0;
            if (given == f->password_stdin) {
                return Status(Errc::invalid_argument,
                              given ? "--user-password and --user-password-stdin are mutually "
                                      "exclusive"
                                    : "one of --user-password or --user-password-stdin is "
                                      "required");
            }
            if (f->password_stdin) {
                NARAD_RETURN_IF_ERROR(env.claim_stdin("--user-password-stdin"));
                NARAD_ASSIGN_OR_RETURN(f->password,
                                       read_password_line(env.in, "--user-password-stdin"));
            }
            NARAD_ASSIGN_OR_RETURN(nlohmann::json grants, parse_grants(f->grants));
            nlohmann::json body = {{"username", f->args[0]}, {"password", f->password}};
            if (!grants.empty()) body["grants"] = grants;
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            return send_and_print(*api, env.output.out, "POST", "/v1/users", body);
        });
    }
    {
        auto f = std::make_shared<AdminFlags>();
        CLI::App* cmd = tree.add(user, "grant", "replace a user's grants");
        cmd->add_option("--grant", f->grants, "grant as action:pattern[,pattern]; repeatable")
            ->allow_extra_args(false);
        tree.set_action(cmd, f, ArgRule::exact(1), [f, &env]() -> Status {
            NARAD_ASSIGN_OR_RETURN(nlohmann::json grants, parse_grants(f->grants));
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            return send_and_print(*api, env.output.out, "PUT",
                                  "/v1/users/" + path_escape(f->args[0]) + "/grants",
                                  nlohmann::json{{"grants", grants}});
        });
    }
    {
        auto f = std::make_shared<AdminFlags>();
        CLI::App* cmd = tree.add(user, "revoke", "take grants from a user, keeping the others");
        cmd->add_option("--grant", f->grants,
                        "what to take, as action[:pattern[,pattern]]: a bare action takes all of "
                        "it; repeatable")
            ->allow_extra_args(false);
        tree.set_action(cmd, f, ArgRule::exact(1), [f, &env]() -> Status {
            if (f->grants.empty()) {
                return Status(Errc::invalid_argument, "name what to revoke with --grant");
            }
            NARAD_ASSIGN_OR_RETURN(nlohmann::json revoked, parse_grants(f->grants));
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            const std::string path = "/v1/users/" + path_escape(f->args[0]);
            NARAD_ASSIGN_OR_RETURN(net::HttpResponse read, send_json(*api, "GET", path));
            nlohmann::json record = nlohmann::json::parse(read.body, nullptr, false);
            if (!record.is_object()) {
                return Status(Errc::internal, "the node answered a user that is not JSON");
            }
            NARAD_ASSIGN_OR_RETURN(
                nlohmann::json kept,
                revoke_grants(record.value("grants", nlohmann::json::array()), revoked));
            return send_and_print(*api, env.output.out, "PUT", path + "/grants",
                                  nlohmann::json{{"grants", kept}});
        });
    }
    {
        auto f = std::make_shared<AdminFlags>();
        CLI::App* cmd = tree.add(user, "passwd",
                                 "change a user's password (an admin resets any; a user changes "
                                 "its own with --current-password)");
        cmd->add_option("--new-password", f->password,
                        "the new password (visible in ps; prefer --new-password-stdin)");
        cmd->add_flag("--new-password-stdin", f->password_stdin,
                      "read the new password from stdin (its second line when "
                      "--current-password-stdin reads the first)");
        cmd->add_option("--current-password", f->current_password,
                        "the password being replaced, when changing your own without admin");
        cmd->add_flag("--current-password-stdin", f->current_password_stdin,
                      "read the password being replaced from the first line of stdin");
        tree.set_action(cmd, f, ArgRule::exact(1), [f, cmd, &env]() -> Status {
            bool given = cmd->count("--new-password") > 0;
            if (given == f->password_stdin) {
                return Status(Errc::invalid_argument,
                              given ? "--new-password and --new-password-stdin are mutually "
                                      "exclusive"
                                    : "one of --new-password or --new-password-stdin is required");
            }
            if (cmd->count("--current-password") > 0 && f->current_password_stdin) {
                return Status(Errc::invalid_argument,
                              "--current-password and --current-password-stdin are mutually "
                              "exclusive");
            }
            if (f->password_stdin || f->current_password_stdin) {
                NARAD_RETURN_IF_ERROR(env.claim_stdin("the passwords of user passwd"));
            }
            if (f->current_password_stdin) {
                NARAD_ASSIGN_OR_RETURN(f->current_password,
                                       read_password_line(env.in, "--current-password-stdin"));
            }
            if (f->password_stdin) {
                NARAD_ASSIGN_OR_RETURN(f->password,
                                       read_password_line(env.in, "--new-password-stdin"));
            }
            nlohmann::json body = {{"new_password", f->password}};
            if (!f->current_password.empty()) body["current_password"] = f->current_password;
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            NARAD_RETURN_IF_ERROR(send_silent(
                *api, "PUT", "/v1/users/" + path_escape(f->args[0]) + "/password", body));
            env.output.out << "password of " << go_quote(f->args[0]) << " changed\n";
            return Status::ok();
        });
    }
    {
        auto f = std::make_shared<AdminFlags>();
        CLI::App* cmd = tree.add(user, "ls", "list users");
        tree.set_action(cmd, f, ArgRule::none(), [&env]() -> Status {
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            return send_and_print(*api, env.output.out, "GET", "/v1/users");
        });
    }
    {
        auto f = std::make_shared<AdminFlags>();
        CLI::App* cmd = tree.add(user, "rm", "delete a user");
        tree.set_action(cmd, f, ArgRule::exact(1), [f, &env]() -> Status {
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            return send_silent(*api, "DELETE", "/v1/users/" + path_escape(f->args[0]));
        });
    }
}

void register_cluster(CommandTree& tree) {
    CommandEnv& env = tree.env();
    CLI::App* cluster = tree.add(nullptr, "cluster",
                                 "inspect and drive partition placement (rebalance, decommission)");
    {
        auto f = std::make_shared<AdminFlags>();
        CLI::App* cmd = tree.add(cluster, "decommission",
                                 "drain a node's partitions off and remove it from the cluster");
        cmd->footer(
            "Marks a node draining: it refuses client produce, the controller moves every\n"
            "partition it owns to the other nodes and, once its ingress WAL is empty,\n"
            "removes it from etcd and the member list; the node then exits.\n"
            "A decommission that could never complete is refused with every reason.\n"
            "--dry-run reports that verdict without changing anything; --cancel stops a\n"
            "drain (the node keeps what it still owns); --wait shows progress until the\n"
            "node is out.");
        cmd->add_flag("--cancel", f->cancel, "cancel an in-progress decommission");
        cmd->add_flag("--dry-run", f->dry_run,
                      "only report whether the node could be decommissioned, and why not");
        cmd->add_flag("--wait", f->watch,
                      "show progress (partitions left, moves, WAL backlog, what blocks it) until "
                      "the node has left");
        tree.add_duration(cmd, "interval", &f->interval_ns,
                          "with --wait: time between polls (default 1s)");
        tree.set_action(cmd, f, ArgRule::exact(1), [f, cmd, &env]() -> Status {
            if (f->dry_run && f->cancel) {
                return Status(Errc::invalid_argument, "--dry-run and --cancel cannot be combined");
            }
            if (f->watch && (f->dry_run || f->cancel)) {
                return Status(Errc::invalid_argument, "--wait goes with a decommission only");
            }
            if (!f->watch && cmd->count("--interval") > 0) {
                return Status(Errc::invalid_argument, "--interval needs --wait");
            }
            NARAD_ASSIGN_OR_RETURN(std::chrono::nanoseconds interval, poll_interval(*f));
            const std::string target =
                "/v1/cluster/members/" + path_escape(f->args[0]) + "/decommission";
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            if (f->dry_run) {
                return send_and_print(*api, env.output.out, "POST", target + "?dry_run=true");
            }
            NARAD_RETURN_IF_ERROR(send_silent(*api, f->cancel ? "DELETE" : "POST", target));
            if (!f->watch) return Status::ok();
            std::unique_ptr<InterruptWatcher> watcher;
            if (env.handle_signals) watcher = std::make_unique<InterruptWatcher>([] {});
            return wait_for_decommission(*api, env.output, env.sleeper, f->args[0], interval);
        });
    }
    {
        auto f = std::make_shared<AdminFlags>();
        CLI::App* cmd =
            tree.add(cluster, "moves", "list partitions currently being moved between nodes");
        cmd->add_flag("--detail", f->detail,
                      "each side's status, phase, bytes copied, passes and freeze time");
        cmd->add_flag("--watch", f->watch,
                      "a live table of the moves with progress, rate and time left, redrawn "
                      "every --interval until Ctrl-C");
        tree.add_duration(cmd, "interval", &f->interval_ns,
                          "with --watch: time between polls (default 1s)");
        cmd->add_flag("--until-done", f->until_done,
                      "with --watch: stop, with status 0, at the first poll that finds no moves");
        tree.set_action(cmd, f, ArgRule::none(), [f, cmd, &env]() -> Status {
            if (f->watch) return run_moves_watch(*f, env);
            if (f->until_done || cmd->count("--interval") > 0) {
                return Status(Errc::invalid_argument, "--interval and --until-done need --watch");
            }
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            return send_and_print(
                *api, env.output.out, "GET",
                f->detail ? "/v1/cluster/moves?detail=true" : "/v1/cluster/moves");
        });
        auto abort_flags = std::make_shared<AdminFlags>();
        CLI::App* abort = tree.add(cmd, "abort", "abort the move of one partition");
        abort->add_option("--target", abort_flags->target, "only if the move goes to this node id");
        tree.set_action(abort, abort_flags, ArgRule::exact(2), [abort_flags, &env]() -> Status {
            const std::string& partition = abort_flags->args[1];
            if (partition.empty() ||
                partition.find_first_not_of("0123456789") != std::string::npos) {
                return Status(Errc::invalid_argument,
                              "partition must be a number, got \"" + partition + "\"");
            }
            std::string target = "/v1/cluster/moves/" + path_escape(abort_flags->args[0]) + "/" +
                                 path_escape(abort_flags->args[1]) + "/abort";
            if (!abort_flags->target.empty()) {
                target += "?target=" + query_escape(abort_flags->target);
            }
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            return send_and_print(*api, env.output.out, "POST", target);
        });
    }
    {
        auto f = std::make_shared<AdminFlags>();
        CLI::App* cmd = tree.add(cluster, "status", "the controller's view of the cluster");
        tree.set_action(cmd, f, ArgRule::none(), [&env]() -> Status {
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            return send_and_print(*api, env.output.out, "GET", "/v1/cluster/status");
        });
    }
    {
        auto f = std::make_shared<AdminFlags>();
        CLI::App* cmd = tree.add(cluster, "members",
                                 "list cluster members with partition counts and drain status");
        cmd->add_flag("--detail", f->detail,
                      "also each node's own status: WAL backlog, unanswered produces, "
                      "quarantined copies, move workers");
        tree.set_action(cmd, f, ArgRule::none(), [f, &env]() -> Status {
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            return send_and_print(
                *api, env.output.out, "GET",
                f->detail ? "/v1/cluster/members?detail=true" : "/v1/cluster/members");
        });
        auto forget_flags = std::make_shared<AdminFlags>();
        CLI::App* forget = tree.add(
            cmd, "forget", "remove an etcd member that has no member record (it moves no data)");
        tree.set_action(forget, forget_flags, ArgRule::exact(1), [forget_flags, &env]() -> Status {
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            return send_and_print(
                *api, env.output.out, "POST",
                "/v1/cluster/members/" + path_escape(forget_flags->args[0]) + "/forget");
        });
    }
}

}  // namespace

void register_admin_commands(CommandTree& tree) {
    register_user(tree);
    register_cluster(tree);
}

}  // namespace narad::cli
