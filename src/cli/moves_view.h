// The live table of `narad cluster moves --watch`: parsing the answer of
// GET /v1/cluster/moves?detail=true into rows, each move's copy rate and time left between two
// polls, and the text of one frame. Pure: times come in as arguments and nothing is printed here,
// so the arithmetic and the layout are tested without a server, a clock or a terminal (the loop
// that polls and prints is moves_watch.h). A MovesView belongs to the one thread that feeds it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace narad::cli {

// One entry of the moves answer. Any field may be missing (an older node, or no `detail`):
// strings are then empty and numbers nullopt, and the frame shows `-`.
struct MoveRow {
    std::string topic;
    std::optional<int64_t> partition;
    std::string source;  // "from": the node giving the partition away
    std::string target;  // "to": the node receiving it
    std::string phase;   // waiting|catch_up|freezing|finalizing|installing|flipping|resolving|...
    std::optional<int64_t> bytes_copied;
    std::optional<int64_t> bytes_total;
    std::optional<int64_t> passes;
    std::optional<int64_t> freeze_ms;  // null until the source is frozen
    std::string source_status;         // alive|dead|draining|not_a_member
    std::string target_status;
    std::string blocked;  // why, when phase is "blocked"
    std::string error;    // the target's last error text
};

// At most this many moves are read from one answer (a cluster moves at most a handful at a time;
// the cap only bounds memory against a runaway answer).
inline constexpr size_t kMaxMovesParsed = 100'000;

// Parses `{"moves":[...]}` (a bare array is accepted too). Entries that are not objects and
// fields of the wrong type are skipped. Errors read `parse moves: <why>`.
Result<std::vector<MoveRow>> parse_moves(std::string_view body);

// What two polls of the same move say about its speed.
struct MoveProgress {
    std::optional<double> bytes_per_second;  // unknown on a first poll or if the count went back
    std::optional<int64_t> seconds_left;     // unknown without a rate above zero and a total
};

// The rate is the change of bytes_copied over the time between the polls; the time left is the
// bytes still to copy at that rate, rounded up to a second.
MoveProgress progress_between(const MoveRow& earlier, MonoTime earlier_time, const MoveRow& later,
                              MonoTime later_time);

// Cells of the progress bar.
inline constexpr int kProgressBarCells = 20;

// "[#########-----------] 45%": one '#' per whole 5% copied. 100% only once everything is
// copied; `[--------------------] -` when either number is missing or the total is 0.
std::string progress_bar(std::optional<int64_t> bytes_copied, std::optional<int64_t> bytes_total);

// "1.2 MiB/s"; "-" for an unknown rate.
std::string format_rate(std::optional<double> bytes_per_second);

// Go's duration form rounded to the second ("13s", "4m5s"), ">100h" above that, "-" if unknown.
std::string format_time_left(std::optional<int64_t> seconds_left);

// The escape sequence that moves the cursor up over the `lines` lines of the previous frame and
// clears from there to the end of the screen, so the next frame is drawn in its place. Empty for 0.
std::string erase_previous_lines(size_t lines);

// How a frame is laid out.
struct FrameOptions {
    // Added to the poll time before it is shown as HH:MM:SS (the local zone's offset; tests use 0).
    int64_t utc_offset_s = 0;
    // The frame has at most this many lines; moves that do not fit are counted in a last
    // "... and N more" line. A terminal passes its height so that redrawing in place works.
    size_t max_lines = 2'000;
    // Lines are cut to this many characters (0 = no limit): a wrapped line would break the
    // line count that redrawing in place relies on.
    size_t max_columns = 0;
};

// The moves as last polled, with each one's rate against the poll before. Feed it every answer
// with update(); frame() renders the current state.
class MovesView {
  public:
    // One successful poll. `polled` (monotonic) times the rates; `polled_wall` is shown.
    void update(std::vector<MoveRow> rows, MonoTime polled, WallTime polled_wall);
    // A poll that failed: the frame keeps the last answer and says what went wrong, until the
    // next successful update.
    void poll_failed(std::string message, WallTime failed_wall);

    size_t move_count() const { return entries_.size(); }

    // The text of the current frame; every line ends in '\n'.
    std::string frame(const FrameOptions& options) const;

  private:
    struct Entry {
        MoveRow row;
        MoveProgress progress;
    };

    std::vector<Entry> entries_;  // sorted by topic, partition, source, target
    MonoTime polled_{};
    WallTime polled_wall_{};
    std::optional<std::string> failure_;  // the last poll's error, if it failed
    WallTime failed_wall_{};
};

}  // namespace narad::cli
