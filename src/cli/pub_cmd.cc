// `narad pub <topic> [message]`: one message, or the same body --count times at --rate msg/s.
#include <chrono>
#include <memory>

#include "base/clock.h"
#include "base/duration.h"
#include "cli/calls.h"
#include "cli/command.h"
#include "cli/pub.h"
#include "cli/text.h"

namespace narad::cli {
namespace {

struct PubFlags {
    std::vector<std::string> args;
    std::string key;
    int64_t partition = -1;
    std::string file;
    int64_t count = 1;
    int64_t rate = 0;
};

Status run_pub(const PubFlags& f, CommandEnv& env) {
    if (pub_body_source(f.args, f.file) == BodySource::standard_input) {
        NARAD_RETURN_IF_ERROR(env.claim_stdin("a message from standard input"));
    }
    NARAD_ASSIGN_OR_RETURN(std::string body, read_pub_body(f.args, f.file, env.in));
    NARAD_ASSIGN_OR_RETURN(auto api, env.api());
    const std::string target = pub_target(f.args[0], f.key, f.partition);
    constexpr std::string_view kType = "application/octet-stream";
    if (f.count <= 1) {
        NARAD_ASSIGN_OR_RETURN(auto response, send(*api, "POST", target, body, kType));
        env.output.err << "accepted (" << body.size() << " bytes)\n";
        return Status::ok();
    }
    // Go's ticker: the first message waits one interval, then one per interval.
    const std::chrono::nanoseconds interval{f.rate > 0 ? kNanosPerSecond / f.rate : 0};
    const auto start = std::chrono::steady_clock::now();
    for (int64_t i = 1; i <= f.count; ++i) {
        if (f.rate > 0) {
            const auto due = start + interval * i;
            const auto now = std::chrono::steady_clock::now();
            if (due > now && !env.sleeper.sleep_for(due - now)) return Status::ok();
        }
        auto response = send(*api, "POST", target, body, kType);
        if (!response.is_ok()) {
            return Status(response.code(), "message " + std::to_string(i) + "/" +
                                               std::to_string(f.count) + ": " +
                                               response.status().message());
        }
    }
    const int64_t elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now() - start)
                                   .count();
    env.output.err << "accepted " << f.count << " messages in "
                   << format_duration(round_duration(elapsed_ns, kNanosPerMilli)) << " ("
                   << format_float0(double(f.count) / (double(elapsed_ns) / 1e9)) << " msg/s)\n";
    return Status::ok();
}

}  // namespace

void register_pub_command(CommandTree& tree) {
    auto f = std::make_shared<PubFlags>();
    CLI::App* cmd = tree.add(nullptr, "pub", "produce a message (from arg, --file, or stdin)");
    cmd->add_option("-k,--key", f->key, "partitioning key");
    tree.add_int(cmd, "partition", &f->partition, "pin to an exact partition");
    cmd->add_option("-f,--file", f->file, "read the message body from a file");
    tree.add_int(cmd, "count", &f->count, "send the message N times");
    tree.add_int(cmd, "rate", &f->rate,
                 "messages per second when --count > 1 (0 = as fast as possible)");
    CommandEnv& env = tree.env();
    tree.set_action(cmd, f, ArgRule::range(1, 2), [f, &env] { return run_pub(*f, env); });
}

}  // namespace narad::cli
