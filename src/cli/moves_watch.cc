#include "cli/moves_watch.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "base/mutex.h"
#include "cli/moves_view.h"

namespace narad::cli {
namespace {

// One poll, fed to the view. The times are taken when the answer is in, so the rate is measured
// between answers, not between requests.
Status poll(Api& api, MovesView& view, const Clock& clock) {
    NARAD_ASSIGN_OR_RETURN(net::HttpResponse response, send(api, "GET", kMovesDetailTarget));
    NARAD_ASSIGN_OR_RETURN(std::vector<MoveRow> rows, parse_moves(response.body));
    view.update(std::move(rows), clock.now(), clock.wall_now());
    return Status::ok();
}

FrameOptions frame_options(const Clock& clock, const MovesWatchOptions& options) {
    FrameOptions frame;
    const int64_t now_s = clock.wall_ms() / 1000;
    if (options.utc_offset_s) frame.utc_offset_s = options.utc_offset_s(now_s);
    if (options.terminal && options.terminal_size) {
        const TerminalSize size = options.terminal_size();
        // The cursor rests on the line after the frame, so the frame may use all lines but one;
        // likewise a line filling the last column would wrap on some terminals.
        if (size.lines > 1) frame.max_lines = size.lines - 1;
        if (size.columns > 1) frame.max_columns = size.columns - 1;
    }
    return frame;
}

}  // namespace

TerminalSize stdout_terminal_size() {
    winsize size{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0) return {};
    return TerminalSize{size.ws_col, size.ws_row};
}

Status watch_moves(Api& api, Output& output, Sleeper& sleeper, const Clock& clock,
                   const MovesWatchOptions& options) {
    MovesView view;
    bool polled_once = false;
    int failures_in_row = 0;
    size_t previous_lines = 0;  // of the frame on screen, for redrawing over it
    while (!sleeper.stopped()) {
        const Status status = poll(api, view, clock);
        if (status.is_ok()) {
            polled_once = true;
            failures_in_row = 0;
        } else {
            if (!polled_once || ++failures_in_row >= kMaxConsecutivePollFailures) return status;
            view.poll_failed(status.message(), clock.wall_now());
        }
        const std::string frame = view.frame(frame_options(clock, options));
        {
            MutexLock lock(output.mutex);
            if (options.terminal) {
                output.out << erase_previous_lines(previous_lines) << frame;
            } else {
                output.out << frame << '\n';
            }
            output.out << std::flush;
        }
        previous_lines = size_t(std::count(frame.begin(), frame.end(), '\n'));
        if (status.is_ok() && options.until_done && view.move_count() == 0) return Status::ok();
        if (!sleeper.sleep_for(options.interval)) return Status::ok();
    }
    return Status::ok();
}

}  // namespace narad::cli
