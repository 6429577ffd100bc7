// `narad sub <topic>` (queue mode or --peek) and `narad replay <topic>`.
#include <memory>

#include "base/mutex.h"
#include "cli/command.h"
#include "cli/interrupt.h"
#include "cli/sub.h"

namespace narad::cli {
namespace {

struct SubFlags {
    std::vector<std::string> args;
    bool peek = false;
    bool no_ack = false;
    SubOptions options;
};

// Prints "\n<n> message(s)" once, whoever gets there first: the command at its end or the
// signal thread on Ctrl-C.
void print_count(Output& output, int64_t count, std::atomic<bool>& reported) {
    MutexLock lock(output.mutex);
    if (reported.exchange(true)) return;
    output.out << std::flush;
    output.err << "\n" << count << " message(s)\n" << std::flush;
}

Status run_sub(SubFlags& f, CommandEnv& env) {
    SubOptions options = f.options;
    options.topic = f.args[0];
    options.no_ack = f.no_ack;
    if (!f.peek && options.from >= 0) {
        return Status(Errc::invalid_argument,
                      "--from is a --peek flag (queue mode has no position)");
    }
    std::atomic<int64_t> printed{0};
    std::atomic<bool> reported{false};
    // Before any client thread exists, so every thread inherits the blocked signal mask.
    std::unique_ptr<InterruptWatcher> watcher;
    if (env.handle_signals) {
        watcher = std::make_unique<InterruptWatcher>(
            [&] { print_count(env.output, printed.load(), reported); });
    }
    NARAD_ASSIGN_OR_RETURN(auto api, env.api());
    SubContext context{*api, env.output, env.sleeper, printed};
    if (f.peek) {
        // Go validates --from before printing anything and prints the count only once running.
        if (options.from >= 0 && options.partition < 0) {
            return Status(Errc::invalid_argument, "--from requires --partition");
        }
        const Status status = run_peek(context, options);
        if (!status.is_ok()) return status;
    } else {
        run_queue_sub(context, options);
    }
    print_count(env.output, printed.load(), reported);
    return Status::ok();
}

}  // namespace

void register_sub_commands(CommandTree& tree) {
    CommandEnv& env = tree.env();
    {
        auto f = std::make_shared<SubFlags>();
        CLI::App* cmd = tree.add(nullptr, "sub", "stream messages from a topic into your terminal");
        cmd->footer(
            "Default (queue mode): consume + ack like a real worker \xe2\x80\x94 messages you see "
            "are settled.\n--peek: tail the topic non-destructively via replay reads; production "
            "consumers are undisturbed.");
        cmd->add_flag("--peek", f->peek,
                      "non-destructive tail via replay (never reserves or acks)");
        tree.add_int(cmd, "partition", &f->options.partition, "restrict to one partition");
        tree.add_int(cmd, "from", &f->options.from,
                     "with --peek: start offset (requires --partition; default: current tail)");
        cmd->add_flag("--raw", f->options.raw, "print payloads only (pipe-friendly)");
        cmd->add_flag("--no-ack", f->no_ack,
                      "queue mode: do not ack (messages redeliver after the visibility timeout)");
        tree.set_action(cmd, f, ArgRule::exact(1), [f, &env] { return run_sub(*f, env); });
    }
    {
        auto f = std::make_shared<SubFlags>();
        CLI::App* cmd =
            tree.add(nullptr, "replay",
                     "read a bounded range of retained history (read-only, no reservations)");
        tree.add_int(cmd, "partition", &f->options.partition, "partition to replay (required)");
        tree.add_int(cmd, "from", &f->options.from, "start offset (default: oldest retained)");
        tree.add_int(cmd, "to", &f->options.to,
                     "end offset, exclusive (default: current high watermark)");
        cmd->add_flag("--raw", f->options.raw, "print payloads only");
        tree.set_action(cmd, f, ArgRule::exact(1), [f, &env]() -> Status {
            SubOptions options = f->options;
            options.topic = f->args[0];
            if (options.partition < 0) {
                return Status(Errc::invalid_argument,
                              "--partition is required (replay is a positional read)");
            }
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            std::atomic<int64_t> printed{0};
            SubContext context{*api, env.output, env.sleeper, printed};
            return run_replay(context, options);
        });
    }
}

}  // namespace narad::cli
