// `narad ctx add|select|ls|rm`: named connection contexts stored in contexts.json.
#include <memory>

#include "cli/command.h"
#include "cli/context_store.h"
#include "cli/text.h"

namespace narad::cli {
namespace {

struct CtxFlags {
    std::vector<std::string> args;
    CliContext context;
};

struct LoadedStore {
    std::string path;
    ContextStore store;
};

Result<LoadedStore> load(const CommandEnv& env) {
    NARAD_ASSIGN_OR_RETURN(std::string path, context_file_path(env.env));
    NARAD_ASSIGN_OR_RETURN(ContextStore store, load_context_store(path));
    return LoadedStore{std::move(path), std::move(store)};
}

}  // namespace

void register_ctx_commands(CommandTree& tree) {
    CommandEnv& env = tree.env();
    CLI::App* ctx =
        tree.add(nullptr, "ctx", "manage named connection contexts (server + credentials)");
    {
        auto f = std::make_shared<CtxFlags>();
        CLI::App* cmd = tree.add(ctx, "add", "add or update a context");
        cmd->add_option("--server", f->context.server, "broker URL (required)");
        cmd->add_option("--user", f->context.user, "basic auth user");
        cmd->add_option("--password", f->context.password,
                        "basic auth password (stored 0600 in your config dir; shows in ps: "
                        "prefer --password-stdin)");
        tree.set_action(cmd, f, ArgRule::exact(1), [f, &env]() -> Status {
            NARAD_ASSIGN_OR_RETURN(LoadedStore loaded, load(env));
            if (f->context.server.empty()) {
                return Status(Errc::invalid_argument, "--server is required");
            }
            // The global --password-stdin gives the stored password here; nothing is sent.
            if (env.flags.password_stdin) {
                if (!f->context.password.empty()) {
                    return Status(Errc::invalid_argument,
                                  "--password and --password-stdin are mutually exclusive");
                }
                NARAD_ASSIGN_OR_RETURN(f->context.password,
                                       read_password_line(env.in, "--password-stdin"));
            }
            const std::string& name = f->args[0];
            loaded.store.contexts[name] = f->context;
            if (loaded.store.current.empty()) loaded.store.current = name;
            NARAD_RETURN_IF_ERROR(save_context_store(loaded.path, loaded.store));
            env.output.out << "context " << go_quote(name)
                           << " saved (current: " << loaded.store.current << ")\n";
            return Status::ok();
        });
    }
    {
        auto f = std::make_shared<CtxFlags>();
        CLI::App* cmd = tree.add(ctx, "select", "make a context the default for every command");
        tree.set_action(cmd, f, ArgRule::exact(1), [f, &env]() -> Status {
            NARAD_ASSIGN_OR_RETURN(LoadedStore loaded, load(env));
            const std::string& name = f->args[0];
            if (!loaded.store.contexts.contains(name)) {
                return Status(Errc::not_found, "no context " + go_quote(name) + " (narad ctx ls)");
            }
            loaded.store.current = name;
            NARAD_RETURN_IF_ERROR(save_context_store(loaded.path, loaded.store));
            env.output.out << "current context: " << name << "\n";
            return Status::ok();
        });
    }
    {
        auto f = std::make_shared<CtxFlags>();
        CLI::App* cmd = tree.add(ctx, "ls", "list contexts");
        tree.set_action(cmd, f, ArgRule::none(), [&env]() -> Status {
            NARAD_ASSIGN_OR_RETURN(LoadedStore loaded, load(env));
            env.output.out << format_context_list(loaded.store);
            return Status::ok();
        });
    }
    {
        auto f = std::make_shared<CtxFlags>();
        CLI::App* cmd = tree.add(ctx, "rm", "remove a context");
        tree.set_action(cmd, f, ArgRule::exact(1), [f, &env]() -> Status {
            NARAD_ASSIGN_OR_RETURN(LoadedStore loaded, load(env));
            const std::string& name = f->args[0];
            if (loaded.store.contexts.erase(name) == 0) {
                return Status(Errc::not_found, "no context " + go_quote(name));
            }
            if (loaded.store.current == name) loaded.store.current.clear();
            return save_context_store(loaded.path, loaded.store);
        });
    }
}

}  // namespace narad::cli
