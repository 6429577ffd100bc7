#include "cli/command.h"

#include <algorithm>

#include "base/duration.h"
#include "cli/text.h"

namespace narad::cli {

Result<CliContext> CommandEnv::connection() {
    if (resolved_connection) return *resolved_connection;
    NARAD_ASSIGN_OR_RETURN(CliContext resolved, resolve_connection(flags, env));
    if (flags.password_stdin) {
        if (!flags.password.empty()) {
            return Status(Errc::invalid_argument,
                          "--password and --password-stdin are mutually exclusive");
        }
        // Standard input is already claimed for it (CommandTree::run_selected).
        NARAD_ASSIGN_OR_RETURN(resolved.password, read_password_line(in, "--password-stdin"));
    }
    if (const std::string warning = plaintext_credentials_warning(resolved); !warning.empty()) {
        output.err << warning << std::flush;
    }
    resolved_connection = resolved;
    return resolved;
}

Result<std::unique_ptr<Api>> CommandEnv::api() {
    NARAD_ASSIGN_OR_RETURN(CliContext resolved, connection());
    return api_factory(resolved);
}

Status CommandEnv::claim_stdin(std::string_view what) {
    if (stdin_reader.empty() || stdin_reader == what) {
        stdin_reader = std::string(what);
        return Status::ok();
    }
    return Status(Errc::invalid_argument, std::string(what) + " and " + stdin_reader +
                                              " both read standard input; give one of them "
                                              "another way");
}

Result<std::string> read_password_line(std::istream& in, std::string_view flag) {
    std::string line;
    std::getline(in, line);
    if (in.bad()) return Status(Errc::io_error, "read password from stdin");
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
        return Status(Errc::invalid_argument, std::string(flag) + ": no password on stdin");
    }
    return line;
}

Status check_args(const ArgRule& rule, const std::vector<std::string>& args,
                  const std::string& path) {
    const auto count_error = [&](std::string text) {
        return Status(Errc::invalid_argument, std::move(text));
    };
    switch (rule.kind) {
        case ArgCount::any:
            return Status::ok();
        case ArgCount::none:
            if (!args.empty()) {
                return count_error("unknown command " + go_quote(args.front()) + " for " +
                                   go_quote(path));
            }
            return Status::ok();
        case ArgCount::exact:
            if (args.size() != rule.min) {
                return count_error("accepts " + std::to_string(rule.min) + " arg(s), received " +
                                   std::to_string(args.size()));
            }
            return Status::ok();
        case ArgCount::range:
            if (args.size() < rule.min || args.size() > rule.max) {
                return count_error("accepts between " + std::to_string(rule.min) + " and " +
                                   std::to_string(rule.max) + " arg(s), received " +
                                   std::to_string(args.size()));
            }
            return Status::ok();
    }
    return Status::ok();
}

// CLI11's help with a cobra-like usage line ("Usage: narad topic add <name> [flags]").
class CommandTree::Formatter final : public CLI::Formatter {
  public:
    std::string make_usage(const CLI::App* app, std::string name) const override {
        auto it = usages_.find(CommandTree::path_of(app));
        if (it == usages_.end()) return CLI::Formatter::make_usage(app, std::move(name));
        return "Usage: " + it->first + " " + it->second + "\n";
    }
    std::map<std::string, std::string> usages_;
};

CommandTree::CommandTree(CommandEnv& env)
    : env_(env),
      formatter_(std::make_shared<Formatter>()),
      root_(
          "Narad is a queue-first message broker in a single binary.\n"
          "Plain HTTP in, at-least-once out, and nothing to babysit in between.",
          "narad") {
    root_.fallthrough();
    root_.formatter(formatter_);
    // pflag lets a repeated flag overwrite the earlier value; CLI11 would refuse it.
    root_.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    root_.add_option(
        "-s,--server", env_.flags.server,
        "broker URL (default: active context, NARAD_ADDR, or " + std::string(kDefaultServer) + ")");
    root_.add_option("-u,--user", env_.flags.user,
                     "basic auth user (default: active context or NARAD_USER)");
    root_.add_option("-p,--password", env_.flags.password,
                     "basic auth password (default: active context or NARAD_PASS)");
    root_.add_flag("--password-stdin", env_.flags.password_stdin,
                   "read the basic auth password from the first line of standard input");
    root_.add_option("--ctx", env_.flags.context,
                     "use this context for this command only (refused while NARAD_ADDR, "
                     "NARAD_USER or NARAD_PASS is set)");
    root_.add_option("command", stray_[&root_])->expected(0, -1)->group("");
}

CLI::App* CommandTree::add(CLI::App* parent, const std::string& name,
                           const std::string& description) {
    CLI::App* command = (parent == nullptr ? &root_ : parent)->add_subcommand(name, description);
    return command;
}

void CommandTree::set_action(CLI::App* command, std::shared_ptr<std::vector<std::string>> args,
                             ArgRule rule, Action action) {
    Leaf& leaf = leaves_[command];
    leaf.args = args;
    leaf.rule = rule;
    leaf.action = std::move(action);
    if (args != nullptr) command->add_option("args", *args)->expected(0, -1)->group("");
}

void CommandTree::add_int(CLI::App* command, const std::string& name, int64_t* value,
                          const std::string& description) {
    auto raw = std::make_shared<std::string>();
    command
        ->add_option("--" + name, *raw, description + " (default " + std::to_string(*value) + ")")
        ->type_name("int");
    deferred_[command].push_back(DeferredFlag{
        "--" + name, raw, [value, name](const std::string& text) -> Status {
            auto parsed = parse_go_int(text);
            if (!parsed.is_ok()) {
                return Status(Errc::invalid_argument,
                              flag_error(text, "--" + name, parsed.status().message()));
            }
            *value = *parsed;
            return Status::ok();
        }});
}

void CommandTree::add_duration(CLI::App* command, const std::string& name, int64_t* value_ns,
                               const std::string& description) {
    auto raw = std::make_shared<std::string>();
    command->add_option("--" + name, *raw, description)->type_name("duration");
    deferred_[command].push_back(DeferredFlag{
        "--" + name, raw, [value_ns, name](const std::string& text) -> Status {
            auto parsed = parse_duration_ns(text, DayUnit::accepted);
            if (!parsed.is_ok()) {
                return Status(Errc::invalid_argument,
                              flag_error(text, "--" + name, parsed.status().message()));
            }
            *value_ns = *parsed;
            return Status::ok();
        }});
}

void CommandTree::set_usage(const std::string& path, const std::string& text) {
    formatter_->usages_[path] = text;
}

std::string CommandTree::path_of(const CLI::App* command) {
    std::vector<std::string> names;
    for (const CLI::App* c = command; c != nullptr; c = c->get_parent()) {
        names.push_back(c->get_name());
    }
    std::string path;
    for (auto it = names.rbegin(); it != names.rend(); ++it) {
        if (!path.empty()) path += ' ';
        path += *it;
    }
    return path;
}

std::string CommandTree::translate_parse_error(const CLI::ParseError& error) const {
    std::string message = error.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
        // "The following argument(s) were not expected: --foo ..."
        const size_t colon = message.find(": ");
        std::string first = colon == std::string::npos ? message : message.substr(colon + 2);
        first = first.substr(0, first.find(' '));
        if (first.starts_with("--")) return "unknown flag: " + first.substr(0, first.find('='));
        if (first.starts_with("-") && first.size() > 1) {
            return "unknown shorthand flag: '" + first.substr(1, 1) + "' in " + first;
        }
        return "unknown command " + go_quote(first) + " for \"narad\"";
    }
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
        // "--partition: 1 required TEXT missing"
        const std::string flag = message.substr(0, message.find(':'));
        if (message.find("missing") != std::string::npos) return "flag needs an argument: " + flag;
    }
    return message;
}

Status CommandTree::run_selected(CLI::App* selected) {
    if (auto stray = stray_.find(selected); stray != stray_.end() && !stray->second.empty()) {
        if (selected == &root_) {
            return Status(Errc::invalid_argument,
                          "unknown command " + go_quote(stray->second.front()) + " for \"narad\"");
        }
    }
    auto leaf = leaves_.find(selected);
    if (leaf == leaves_.end()) {
        env_.output.out << root_.help();
        return Status::ok();
    }
    if (auto flags = deferred_.find(selected); flags != deferred_.end()) {
        for (const DeferredFlag& flag : flags->second) {
            if (selected->count(flag.flag) == 0) continue;
            NARAD_RETURN_IF_ERROR(flag.apply(*flag.raw));
        }
    }
    // Claimed before the command runs, so no other reader can consume the password first.
    if (env_.flags.password_stdin) NARAD_RETURN_IF_ERROR(env_.claim_stdin("--password-stdin"));
    static const std::vector<std::string> kNoArgs;
    const std::vector<std::string>& args = leaf->second.args ? *leaf->second.args : kNoArgs;
    NARAD_RETURN_IF_ERROR(check_args(leaf->second.rule, args, path_of(selected)));
    return leaf->second.action();
}

// Index of the first word that is not a persistent connection flag (or its value).
static size_t skip_connection_flags(const std::vector<std::string>& args) {
    size_t i = 0;
    while (i < args.size()) {
        const std::string& arg = args[i];
        if (arg == "-s" || arg == "--server" || arg == "-u" || arg == "--user" || arg == "-p" ||
            arg == "--password" || arg == "--ctx") {
            i += 2;
        } else if (arg.starts_with("--server=") || arg.starts_with("--user=") ||
                   arg.starts_with("--password=") || arg.starts_with("--ctx=") ||
                   arg == "--password-stdin" ||
                   (arg.size() > 2 && arg[0] == '-' &&
                    (arg[1] == 's' || arg[1] == 'u' || arg[1] == 'p'))) {
            i += 1;
        } else {
            break;
        }
    }
    return i;
}

int CommandTree::run(std::vector<std::string> args) {
    if (args.empty()) {
        env_.output.out << root_.help();
        return 0;
    }
    // `serve` takes Go-style flags (-help, -port=1) that CLI11 must never see, even after the
    // persistent flags (`narad -s URL serve ...`).
    if (const size_t first = skip_connection_flags(args);
        first < args.size() && args[first] == "serve") {
        if (!env_.serve) {
            env_.output.err << "narad: this build of narad has no server (node library missing)\n";
            return 1;
        }
        return env_.serve(std::vector<std::string>(args.begin() + long(first) + 1, args.end()));
    }
    // `help <command...>`: the words name a command, which CLI11 would parse as subcommands.
    if (const size_t first = skip_connection_flags(args);
        first < args.size() && args[first] == "help") {
        const CLI::App* command = &root_;
        for (size_t i = first + 1; i < args.size(); ++i) {
            const CLI::App* next = nullptr;
            for (const CLI::App* sub : command->get_subcommands({})) {
                if (sub->check_name(args[i])) next = sub;
            }
            if (next == nullptr) {
                env_.output.out << "Unknown help topic " << go_quote(args[i]) << "\n";
                break;
            }
            command = next;
        }
        env_.output.out << command->help();
        return 0;
    }
    std::reverse(args.begin(), args.end());
    try {
        root_.parse(args);
    } catch (const CLI::CallForHelp&) {
        env_.output.out << root_.help();
        return 0;
    } catch (const CLI::CallForAllHelp&) {
        env_.output.out << root_.help("", CLI::AppFormatMode::All);
        return 0;
    } catch (const CLI::ParseError& error) {
        env_.output.err << "narad: " << translate_parse_error(error) << '\n';
        return 1;
    }
    CLI::App* selected = &root_;
    while (!selected->get_subcommands().empty()) selected = selected->get_subcommands().front();
    const Status status = run_selected(selected);
    env_.output.out.flush();
    if (!status.is_ok()) {
        env_.output.err << "narad: " << status.message() << '\n';
        return 1;
    }
    return env_.exit_code;
}

int run_cli(std::vector<std::string> args, CommandEnv& env) {
    // Per-command state: nothing from an earlier run (tests run many on one CommandEnv) carries.
    env.flags = ConnectionFlags{};
    env.resolved_connection.reset();
    env.stdin_reader.clear();
    CommandTree tree(env);
    register_topic_commands(tree);
    register_pub_command(tree);
    register_sub_commands(tree);
    register_admin_commands(tree);
    register_bench_command(tree);
    register_ctx_commands(tree);
    register_server_commands(tree);
    register_dev_cluster_command(tree);
    register_misc_commands(tree);
    register_usages(tree);
    return tree.run(std::move(args));
}

}  // namespace narad::cli
