// `narad version`, `narad completion <shell>`, `narad help [command]` and the `serve` entry as
// it appears in the command list (main() hands `narad serve ...` to the node before CLI11 runs).
#include <memory>

#include "cli/command.h"
#include "cli/text.h"

#ifndef NARAD_VERSION
#define NARAD_VERSION "dev"
#endif

namespace narad::cli {
namespace {

struct MiscFlags {
    std::vector<std::string> args;
};

void collect(const CLI::App* command, const std::string& path,
             std::vector<std::pair<std::string, std::string>>& table) {
    std::string words;
    for (const CLI::App* sub : command->get_subcommands({})) {
        words += sub->get_name() + " ";
        for (const std::string& alias : sub->get_aliases()) words += alias + " ";
    }
    for (const CLI::Option* option : command->get_options()) {
        for (const std::string& name : option->get_lnames()) words += "--" + name + " ";
        for (const std::string& name : option->get_snames()) words += "-" + name + " ";
    }
    if (!words.empty()) words.pop_back();
    table.emplace_back(path, words);
    for (const CLI::App* sub : command->get_subcommands({})) {
        collect(sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), table);
    }
}

// A self-contained bash completion: the command path typed so far selects the words offered.
std::string bash_completion(const CLI::App& root) {
    std::vector<std::pair<std::string, std::string>> table;
    collect(&root, "", table);
    std::string known;
    std::string cases;
    for (const auto& [path, words] : table) {
        if (!path.empty()) known += (known.empty() ? "" : "|") + std::string("\"") + path + "\"";
        cases += "        \"" + path + "\") words=\"" + words + "\" ;;\n";
    }
    return "# bash completion for narad; load with: source <(narad completion bash)\n"
           "_narad() {\n"
           "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" path=\"\" next word i\n"
           "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
           "        word=\"${COMP_WORDS[i]}\"\n"
           "        case \"$word\" in -*) continue ;; esac\n"
           "        next=\"${path:+$path }$word\"\n"
           "        case \"$next\" in\n"
           "            " +
           (known.empty() ? std::string("\"\"") : known) +
           ") path=\"$next\" ;;\n"
           "        esac\n"
           "    done\n"
           "    local words=\"\"\n"
           "    case \"$path\" in\n" +
           cases +
           "    esac\n"
           "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
           "}\n"
           "complete -o default -F _narad narad\n";
}

// The fish version of the same table: the command path typed so far (flags skipped) selects the
// words offered, one per line.
std::string fish_completion(const CLI::App& root) {
    std::vector<std::pair<std::string, std::string>> table;
    collect(&root, "", table);
    std::string known;
    std::string cases;
    for (const auto& [path, words] : table) {
        if (!path.empty()) known += " '" + path + "'";
        std::string lines;
        size_t start = 0;
        while (start < words.size()) {
            size_t end = words.find(' ', start);
            if (end == std::string::npos) end = words.size();
            lines += " '" + words.substr(start, end - start) + "'";
            start = end + 1;
        }
        cases += "        case '" + path + "'\n            printf '%s\\n'" + lines + "\n";
    }
    return "# fish completion for narad; load with: narad completion fish | source\n"
           "function __narad_complete\n"
           "    set -l path ''\n"
           "    for word in (commandline -opc)[2..-1]\n"
           "        string match -q -- '-*' $word; and continue\n"
           "        set -l next (string trim -- \"$path $word\")\n"
           "        if contains -- $next" +
           known +
           "\n"
           "            set path $next\n"
           "        end\n"
           "    end\n"
           "    switch $path\n" +
           cases +
           "    end\n"
           "end\n"
           "complete -c narad -f -a '(__narad_complete)'\n";
}

}  // namespace

void register_misc_commands(CommandTree& tree) {
    CommandEnv& env = tree.env();
    {
        auto f = std::make_shared<MiscFlags>();
        CLI::App* cmd = tree.add(nullptr, "version", "print build version and exit");
        tree.set_action(cmd, f, ArgRule::any(), [&env]() -> Status {
            env.output.out << "narad " NARAD_VERSION "\n";
            return Status::ok();
        });
    }
    {
        auto f = std::make_shared<MiscFlags>();
        CLI::App* cmd = tree.add(nullptr, "completion",
                                 "generate the autocompletion script for the specified shell");
        CLI::App& root = tree.root();
        tree.set_action(cmd, f, ArgRule::range(0, 1), [f, cmd, &root, &env]() -> Status {
            if (f->args.empty()) {
                env.output.out << cmd->help();
                return Status::ok();
            }
            const std::string& shell = f->args[0];
            if (shell == "bash") {
                env.output.out << bash_completion(root);
            } else if (shell == "zsh") {
                env.output.out << "autoload -U +X bashcompinit && bashcompinit\n"
                               << bash_completion(root);
            } else if (shell == "fish") {
                env.output.out << fish_completion(root);
            } else {
                return Status(Errc::invalid_argument,
                              "completion for " + go_quote(shell) +
                                  " is not available (supported: bash, zsh, fish)");
            }
            return Status::ok();
        });
    }
    {
        // Listed for `narad --help`; CommandTree::run answers `help <command...>` itself.
        tree.add(nullptr, "help", "help about any command");
    }
    {
        // Listed for `narad --help`; CommandTree::run hands `serve` over before CLI11 parses.
        tree.add(nullptr, "serve", "run the HTTP API server (default port 7942)");
    }
}

void register_usages(CommandTree& tree) {
    static const std::pair<const char*, const char*> kUsages[] = {
        {"narad", "[command]"},
        {"narad topic", "[command]"},
        {"narad topic add", "<name> [flags]"},
        {"narad topic ls", "[flags]"},
        {"narad topic info", "<name>"},
        {"narad topic edit", "<name> [flags]"},
        {"narad topic schema", "<name> [--current]"},
        {"narad topic rm", "<name> [flags]"},
        {"narad topic attach", "<parent> <child> [flags]"},
        {"narad topic detach", "<parent> <child>"},
        {"narad topic children", "<parent>"},
        {"narad pub", "<topic> [message] [flags]"},
        {"narad sub", "<topic> [flags]"},
        {"narad replay", "<topic> --partition N [flags]"},
        {"narad user", "[command]"},
        {"narad user add", "<username> --user-password P [--grant action:pattern[,pattern]]..."},
        {"narad user grant", "<username> [--grant action:pattern[,pattern]]..."},
        {"narad user ls", ""},
        {"narad user rm", "<username>"},
        {"narad cluster", "[command]"},
        {"narad cluster decommission", "<node-id> [--cancel | --dry-run | --wait [--interval D]]"},
        {"narad cluster moves", "[--detail] [--watch [--interval D] [--until-done]]"},
        {"narad cluster moves abort", "<topic> <partition> [--target node-id]"},
        {"narad cluster status", ""},
        {"narad cluster members", "[--detail]"},
        {"narad cluster members forget", "<node-id>"},
        {"narad bench", "<topic> [flags]"},
        {"narad ctx", "[command]"},
        {"narad ctx add", "<name> --server URL [--user U] [--password P]"},
        {"narad ctx select", "<name>"},
        {"narad ctx ls", ""},
        {"narad ctx rm", "<name>"},
        {"narad server", "[command]"},
        {"narad server start", "[--dev] [--port N] [--data-dir D]"},
        {"narad server report", ""},
        {"narad version", ""},
        {"narad completion", "[bash|zsh|fish]"},
        {"narad help", "[command]"},
        {"narad serve", "[flags]  (see narad serve -help)"},
    };
    for (const auto& [path, text] : kUsages) tree.set_usage(path, text);
}

}  // namespace narad::cli
