// The command tree of `narad`, on CLI11, shaped to behave like the Go CLI's cobra tree: persistent
// -s/-u/-p flags accepted anywhere, positional-argument checks with cobra's error texts, int and
// duration flags parsed after CLI11 with pflag's error texts (`invalid argument "x" for "--count"
// flag: ...`), and one action per leaf command returning a Status (printed as `narad: <msg>`).
// Built and run on the main thread.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cli/api.h"
#include "cli/context_store.h"
#include "cli/output.h"
#include "cli/sleeper.h"

namespace narad::cli {

// What every command may use: where to print, the environment, stdin, a way to wait, and the
// connection (resolved on first use from the persistent flags).
struct CommandEnv {
    Output& output;
    GetEnv env;
    std::istream& in;
    Sleeper& sleeper;
    ConnectionFlags flags;
    // Builds the Api for the resolved connection. Tests replace it with a fake.
    std::function<Result<std::unique_ptr<Api>>(const CliContext&)> api_factory;
    // Runs `narad serve` with the arguments that follow "serve"; returns its exit code. Empty in
    // builds without the node library.
    std::function<int(const std::vector<std::string>&)> serve;
    // The exit code of a command that succeeded but wants a specific one (serve's).
    int exit_code = 0;
    // Whether sub/peek take over SIGINT/SIGTERM to print their final count (the real binary).
    bool handle_signals = false;

    // The connection, resolved once: flags, --ctx, the environment and contexts, the password
    // from stdin with --password-stdin, and a warning on stderr before credentials go over plain
    // http:// to another machine.
    Result<CliContext> connection();
    Result<std::unique_ptr<Api>> api();
    // Standard input has one reader per command: `what` names the reader (`--password-stdin`, `a
    // message from standard input`, ...). A second, different reader is refused, since the first
    // one may have consumed what it meant to read.
    Status claim_stdin(std::string_view what);

    // What connection() and claim_stdin() remember (left at their defaults by the callers).
    std::optional<CliContext> resolved_connection;
    std::string stdin_reader;
};

// The first line of `in` as a password (a trailing "\n" or "\r\n" dropped, nothing else
// trimmed); an empty one is an error naming `flag`.
Result<std::string> read_password_line(std::istream& in, std::string_view flag);

enum class ArgCount { none, exact, range, any };

struct ArgRule {
    ArgCount kind = ArgCount::any;
    size_t min = 0;
    size_t max = 0;

    static ArgRule any() { return {}; }
    static ArgRule none() { return {ArgCount::none, 0, 0}; }
    static ArgRule exact(size_t n) { return {ArgCount::exact, n, n}; }
    static ArgRule range(size_t lo, size_t hi) { return {ArgCount::range, lo, hi}; }
};

// Cobra's positional-argument check; `path` is the command path ("narad ctx ls").
Status check_args(const ArgRule& rule, const std::vector<std::string>& args,
                  const std::string& path);

class CommandTree {
  public:
    using Action = std::function<Status()>;

    explicit CommandTree(CommandEnv& env);

    CommandEnv& env() { return env_; }
    CLI::App& root() { return root_; }

    // A command under `parent` (nullptr = the root). Commands without an action print their help.
    CLI::App* add(CLI::App* parent, const std::string& name, const std::string& description);
    // The leaf's positional arguments (the `args` member of its flags) and the action that runs it.
    // The tree keeps `flags` alive as long as it may parse into them.
    template <typename Flags>
    void set_action(CLI::App* command, const std::shared_ptr<Flags>& flags, ArgRule rule,
                    Action action) {
        set_action(command, std::shared_ptr<std::vector<std::string>>(flags, &flags->args), rule,
                   std::move(action));
    }
    void set_action(CLI::App* command, std::shared_ptr<std::vector<std::string>> args, ArgRule rule,
                    Action action);

    // Flags parsed with Go's rules after CLI11 has run; `*value` holds the default until then.
    void add_int(CLI::App* command, const std::string& name, int64_t* value,
                 const std::string& description);
    void add_duration(CLI::App* command, const std::string& name, int64_t* value_ns,
                      const std::string& description);

    // Parses argv (without the program name) and runs the selected command. Returns the exit
    // code; errors are printed as `narad: <msg>`.
    int run(std::vector<std::string> args);

    // The usage line of `path` ("narad topic add") reads "Usage: <path> <text>".
    void set_usage(const std::string& path, const std::string& text);

    // The command path of a command ("narad topic ls").
    static std::string path_of(const CLI::App* command);

  private:
    struct Leaf {
        std::shared_ptr<std::vector<std::string>> args;
        ArgRule rule;
        Action action;
    };
    struct DeferredFlag {
        std::string flag;  // "--count"
        std::shared_ptr<std::string> raw;
        std::function<Status(const std::string&)> apply;
    };

    Status run_selected(CLI::App* selected);
    std::string translate_parse_error(const CLI::ParseError& error) const;

    class Formatter;

    CommandEnv& env_;
    std::shared_ptr<Formatter> formatter_;
    CLI::App root_;
    std::map<const CLI::App*, Leaf> leaves_;
    std::map<const CLI::App*, std::vector<std::string>> stray_;  // extra words given to groups
    std::map<const CLI::App*, std::vector<DeferredFlag>> deferred_;
};

// Registration of each command group (one file each).
void register_ctx_commands(CommandTree& tree);
void register_topic_commands(CommandTree& tree);
void register_pub_command(CommandTree& tree);
void register_sub_commands(CommandTree& tree);  // sub, replay
void register_server_commands(CommandTree& tree);
void register_admin_commands(CommandTree& tree);  // user, cluster
void register_bench_command(CommandTree& tree);
void register_dev_cluster_command(CommandTree& tree);  // dev_cluster_cmd.cc
void register_misc_commands(CommandTree& tree);        // version, completion, help, serve (listing)
void register_usages(CommandTree& tree);               // the usage line of every command

// Builds the whole tree and runs it. The entry point of every `narad` command but `serve`.
int run_cli(std::vector<std::string> args, CommandEnv& env);

}  // namespace narad::cli
