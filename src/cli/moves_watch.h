// The loop of `narad cluster moves --watch`: poll GET /v1/cluster/moves?detail=true, feed the
// answer to a MovesView (moves_view.h), print the frame, wait `interval`, and again, until the
// Sleeper is stopped (in the real binary Ctrl-C ends the process through an InterruptWatcher) or,
// with `until_done`, right after the first frame without moves. On a terminal each frame is
// drawn over the previous one; otherwise frames follow each other, each closed by a blank line,
// so a log keeps them all. Runs on the calling thread; each frame is written and flushed under
// `output.mutex`, so a signal thread that takes the mutex never finds half a frame on screen.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "cli/api.h"
#include "cli/message.h"
#include "cli/output.h"
#include "cli/sleeper.h"

namespace narad::cli {

inline constexpr std::string_view kMovesDetailTarget = "/v1/cluster/moves?detail=true";

// Bounds of --interval: faster polling only loads the controller, slower is no longer "live".
inline constexpr std::chrono::nanoseconds kMinWatchInterval = std::chrono::milliseconds(100);
inline constexpr std::chrono::nanoseconds kMaxWatchInterval = std::chrono::hours(1);

// Once the watch is running, a failed poll is shown and retried; this many failures in a row end
// it with the last error (a first poll that fails ends it at once: nothing is being watched yet).
inline constexpr int kMaxConsecutivePollFailures = 10;

// A terminal's size in character cells; 0 = unknown.
struct TerminalSize {
    size_t columns = 0;
    size_t lines = 0;
};

// Stdout's size (TIOCGWINSZ), or zeros if it is not a terminal.
TerminalSize stdout_terminal_size();

struct MovesWatchOptions {
    std::chrono::nanoseconds interval = std::chrono::seconds(1);
    // Stop after the first frame that shows no moves.
    bool until_done = false;
    // Stdout is a terminal that understands cursor movement: redraw in place.
    bool terminal = false;
    // Read before every terminal frame, so a resized window is followed; empty = no limits.
    std::function<TerminalSize()> terminal_size;
    // The local zone's offset at a time, for the frame's clock; tests pass a fixed one.
    std::function<int64_t(int64_t unix_seconds)> utc_offset_s = local_utc_offset_s;
};

// Runs the watch. Ok when stopped or done; the error of the first poll, or of the last of
// kMaxConsecutivePollFailures failed polls in a row, otherwise.
Status watch_moves(Api& api, Output& output, Sleeper& sleeper, const Clock& clock,
                   const MovesWatchOptions& options);

}  // namespace narad::cli
