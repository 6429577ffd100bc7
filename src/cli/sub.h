// The reading loops behind `narad sub` (queue mode: consume, print, ack with retry), `sub --peek`
// (a read-only tail by replay reads from each partition's high watermark, jumping forward on 410)
// and `narad replay` (a bounded positional read). They run on the calling thread until the
// Sleeper is stopped (Ctrl-C) or their work ends; every message is printed and counted under
// `output.mutex`, so a signal thread can print the final count consistently.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/status.h"
#include "cli/api.h"
#include "cli/message.h"
#include "cli/output.h"
#include "cli/sleeper.h"

namespace narad::cli {

struct SubOptions {
    std::string topic;
    int64_t partition = -1;
    int64_t from = -1;
    int64_t to = -1;  // replay only
    bool raw = false;
    bool no_ack = false;
};

// Shared by the loops: where to print and how to show clock times.
struct SubContext {
    Api& api;
    Output& output;
    Sleeper& sleeper;
    std::atomic<int64_t>& printed;  // messages printed so far
    std::function<int64_t(int64_t unix_seconds)> utc_offset_s = local_utc_offset_s;
};

// One consume or replay read: nullopt for 204 (nothing there).
Result<std::optional<ConsumedMessage>> fetch_one(Api& api, const std::string& target);

// Queue mode; returns when the sleeper is stopped.
void run_queue_sub(SubContext& context, const SubOptions& options);

// --peek; errors only before the loop starts (bad flags, no stats).
Status run_peek(SubContext& context, const SubOptions& options);

// replay; prints the closing "<n> message(s) replayed from p<P> [<a>, <b>)" itself.
Status run_replay(SubContext& context, const SubOptions& options);

inline constexpr int kPeekBurstPerPartition = 100;

}  // namespace narad::cli
