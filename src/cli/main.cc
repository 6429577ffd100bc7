// The `main()` of the single `narad` binary. `narad serve ...` goes straight to the node with its
// arguments untouched (Go flag syntax, which CLI11 must not parse); everything else is the CLI.
#include <iostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/context_store.h"
#include "cli/http_api.h"
#include "cli/output.h"
#include "cli/sleeper.h"
#include "node/serve.h"

namespace {

// Calls serve_main with argv[0] = "narad serve" and the given arguments.
int serve(const std::vector<std::string>& args) {
    std::vector<std::string> storage;
    storage.reserve(args.size() + 1);
    storage.emplace_back("narad serve");
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& arg : storage) argv.push_back(arg.data());
    argv.push_back(nullptr);
    return narad::node::serve_main(int(storage.size()), argv.data());
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args.front() == "serve") {
        return serve(std::vector<std::string>(args.begin() + 1, args.end()));
    }
    narad::cli::Output output(std::cout, std::cerr, narad::cli::Style::detect());
    output.terminal = narad::cli::stdout_is_terminal();
    narad::cli::RealSleeper sleeper;
    narad::cli::CommandEnv env{output, narad::cli::process_env(), std::cin, sleeper, {}, {}, {}};
    env.api_factory = narad::cli::make_http_api;
    env.serve = serve;
    env.handle_signals = true;
    return narad::cli::run_cli(std::move(args), env);
}
