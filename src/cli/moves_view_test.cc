#include "cli/moves_view.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "cli/text.h"

namespace narad::cli {
namespace {

using std::chrono::seconds;

constexpr int64_t kMiB = 1024 * 1024;
// 2026-01-01 12:00:00 UTC.
const WallTime kNoon{seconds(1'767'268'800)};
const MonoTime kStart{seconds(1'000)};

MoveRow move(std::string topic, int64_t partition, int64_t copied, int64_t total) {
    MoveRow row;
    row.topic = std::move(topic);
    row.partition = partition;
    row.source = "narad-0";
    row.target = "narad-3";
    row.phase = "catch_up";
    row.bytes_copied = copied;
    row.bytes_total = total;
    row.passes = 1;
    row.source_status = "alive";
    row.target_status = "alive";
    return row;
}

// The table row (not the header lines) of a frame that starts with `prefix`.
std::string line_starting(const std::string& frame, const std::string& prefix) {
    size_t at = 0;
    while (at < frame.size()) {
        const size_t end = frame.find('\n', at);
        std::string line = frame.substr(at, end - at);
        if (line.starts_with(prefix)) return line;
        at = end + 1;
    }
    return "";
}

size_t line_count(const std::string& text) {
    return size_t(std::count(text.begin(), text.end(), '\n'));
}

// Rule: the bar has one '#' per whole 5% and the percent rounds down, so only a complete copy
// reads 100%; a total of 0 or a missing number draws an empty bar and `-`.
TEST(ProgressBar, ZeroPartialFullAndZeroTotal) {
    EXPECT_EQ(progress_bar(0, 4 * kMiB), "[--------------------] 0%");
    EXPECT_EQ(progress_bar(4 * kMiB * 45 / 100 + 1, 4 * kMiB), "[#########-----------] 45%");
    EXPECT_EQ(progress_bar(4 * kMiB - 1, 4 * kMiB), "[###################-] 99%");
    EXPECT_EQ(progress_bar(4 * kMiB, 4 * kMiB), "[####################] 100%");
    EXPECT_EQ(progress_bar(5 * kMiB, 4 * kMiB), "[####################] 100%");
    EXPECT_EQ(progress_bar(0, 0), "[--------------------] -");
    EXPECT_EQ(progress_bar(7, 0), "[--------------------] -");
    EXPECT_EQ(progress_bar(std::nullopt, 10), "[--------------------] -");
    EXPECT_EQ(progress_bar(3, std::nullopt), "[--------------------] -");
    // Near int64's limit the percent must not overflow.
    EXPECT_EQ(progress_bar(int64_t(1) << 61, int64_t(1) << 62), "[##########----------] 50%");
}

// Rule: sizes use base 1024 with a space before the unit, rates add "/s", times left use Go's
// form rounded to the second and give up past 100 hours.
TEST(ProgressText, BytesRatesAndTimesLeft) {
    EXPECT_EQ(human_bytes(0, UnitGap::space), "0 B");
    EXPECT_EQ(human_bytes(1023, UnitGap::space), "1023 B");
    EXPECT_EQ(human_bytes(12'897'484, UnitGap::space), "12.3 MiB");
    EXPECT_EQ(human_bytes(27 * kMiB, UnitGap::space), "27.0 MiB");
    EXPECT_EQ(format_rate(std::nullopt), "-");
    EXPECT_EQ(format_rate(0.0), "0 B/s");
    EXPECT_EQ(format_rate(1.5 * kMiB), "1.5 MiB/s");
    EXPECT_EQ(format_time_left(std::nullopt), "-");
    EXPECT_EQ(format_time_left(0), "0s");
    EXPECT_EQ(format_time_left(65), "1m5s");
    EXPECT_EQ(format_time_left(100 * 3600), "100h0m0s");
    EXPECT_EQ(format_time_left(100 * 3600 + 1), ">100h");
}

// Rule: the rate is the change of bytes_copied over the time between two polls, and the time
// left is the remaining bytes at that rate, rounded up; no rate when the count went back or no
// time passed, no time left when nothing moved.
TEST(ProgressBetween, RateAndTimeLeftFromTwoPolls) {
    const MoveRow first = move("orders", 3, 1 * kMiB, 4 * kMiB);
    const MoveRow second = move("orders", 3, 2 * kMiB, 4 * kMiB);
    const MoveProgress progress = progress_between(first, kStart, second, kStart + seconds(2));
    ASSERT_TRUE(progress.bytes_per_second.has_value());
    EXPECT_DOUBLE_EQ(*progress.bytes_per_second, 512.0 * 1024);
    EXPECT_EQ(progress.seconds_left, 4);

    const MoveRow odd = move("orders", 3, 2 * kMiB + 1, 4 * kMiB);
    EXPECT_EQ(progress_between(first, kStart, odd, kStart + seconds(2)).seconds_left, 4);
    const MoveRow slower = move("orders", 3, 1 * kMiB + 3, 4 * kMiB);  // 1 B/s
    EXPECT_EQ(progress_between(first, kStart, slower, kStart + seconds(3)).seconds_left,
              100 * 3600 + 1);  // capped: the text reads ">100h"

    const MoveProgress stalled = progress_between(first, kStart, first, kStart + seconds(1));
    EXPECT_EQ(stalled.bytes_per_second, 0.0);
    EXPECT_EQ(stalled.seconds_left, std::nullopt);
    const MoveProgress went_back = progress_between(second, kStart, first, kStart + seconds(1));
    EXPECT_EQ(went_back.bytes_per_second, std::nullopt);
    EXPECT_EQ(progress_between(first, kStart, second, kStart).bytes_per_second, std::nullopt);
    MoveRow no_total = second;
    no_total.bytes_total.reset();
    const MoveProgress unknown_total =
        progress_between(first, kStart, no_total, kStart + seconds(2));
    EXPECT_TRUE(unknown_total.bytes_per_second.has_value());
    EXPECT_EQ(unknown_total.seconds_left, std::nullopt);
}

// Rule: the view shows `-` for rate and time left on a move's first poll and the measured
// values from its second poll on.
TEST(MovesView, RateAppearsOnSecondPoll) {
    MovesView view;
    view.update({move("orders", 3, 1 * kMiB, 4 * kMiB)}, kStart, kNoon);
    EXPECT_EQ(line_starting(view.frame({}), "orders/3"),
              "orders/3  narad-0 \xe2\x86\x92 narad-3  catch_up  [#####---------------] 25%  "
              "1.0 MiB / 4.0 MiB  -     -     1       -");
    view.update({move("orders", 3, 2 * kMiB, 4 * kMiB)}, kStart + seconds(2), kNoon + seconds(2));
    EXPECT_EQ(line_starting(view.frame({}), "orders/3"),
              "orders/3  narad-0 \xe2\x86\x92 narad-3  catch_up  [##########----------] 50%  "
              "2.0 MiB / 4.0 MiB  512.0 KiB/s  4s    1       -");
}

// Rule: a move missing from a poll leaves the table, a new move starts without a rate, and a
// move that comes back is measured afresh rather than against its old sample.
TEST(MovesView, MoveDisappearsAndNewMoveAppears) {
    MovesView view;
    view.update({move("orders", 1, 0, 8 * kMiB), move("orders", 2, 0, 8 * kMiB)}, kStart, kNoon);
    view.update({move("orders", 2, 1 * kMiB, 8 * kMiB), move("orders", 3, 1 * kMiB, 8 * kMiB)},
                kStart + seconds(1), kNoon + seconds(1));
    std::string frame = view.frame({});
    EXPECT_TRUE(frame.starts_with("12:00:01  2 moves in flight\n")) << frame;
    EXPECT_EQ(line_starting(frame, "orders/1"), "");
    EXPECT_NE(line_starting(frame, "orders/2").find("1.0 MiB/s"), std::string::npos) << frame;
    EXPECT_NE(line_starting(frame, "orders/3").find("1.0 MiB / 8.0 MiB  -"), std::string::npos)
        << frame;

    view.update({move("orders", 1, 4 * kMiB, 8 * kMiB), move("orders", 3, 3 * kMiB, 8 * kMiB)},
                kStart + seconds(2), kNoon + seconds(2));
    frame = view.frame({});
    EXPECT_NE(line_starting(frame, "orders/1").find("4.0 MiB / 8.0 MiB  -"), std::string::npos)
        << frame;
    EXPECT_EQ(line_starting(frame, "orders/2"), "");
    EXPECT_NE(line_starting(frame, "orders/3").find("2.0 MiB/s"), std::string::npos) << frame;

    // The same partition moving to another node is another move.
    MoveRow elsewhere = move("orders", 3, 5 * kMiB, 8 * kMiB);
    elsewhere.target = "narad-4";
    view.update({elsewhere}, kStart + seconds(3), kNoon + seconds(3));
    EXPECT_NE(line_starting(view.frame({}), "orders/3").find("5.0 MiB / 8.0 MiB  -"),
              std::string::npos);
}

// Rule: an answer without the detail fields still renders, with `-` in every missing place.
TEST(MovesView, MissingDetailFieldsRenderAsDash) {
    auto rows =
        parse_moves(R"({"moves":[{"topic":"orders","partition":3,"from":"narad-0","to":"narad-3"},)"
                    R"({"partition":"x","freeze_ms":null,"bytes_total":null}]})");
    ASSERT_TRUE(rows.is_ok()) << rows.status().message();
    ASSERT_EQ(rows->size(), 2u);
    MovesView view;
    view.update(std::move(*rows), kStart, kNoon);
    EXPECT_EQ(view.frame({}),
              "12:00:00  2 moves in flight\n"
              "MOVE      FROM \xe2\x86\x92 TO          PHASE  PROGRESS                  BYTES  "
              "RATE  LEFT  PASSES  FREEZE\n"
              "-/-       - \xe2\x86\x92 -              -      [--------------------] -  -      "
              "-     -     -       -\n"
              "orders/3  narad-0 \xe2\x86\x92 narad-3  -      [--------------------] -  -      "
              "-     -     -       -\n");
}

// Rule: a full frame is the header, the aligned table sorted by topic and partition, a side
// that is not alive marked after its name, and the blocked reason and error under their row.
TEST(MovesView, FullFrameLayout) {
    MoveRow blocked = move("orders", 10, 27 * kMiB, 27 * kMiB);
    blocked.phase = "blocked";
    blocked.passes = 3;
    blocked.freeze_ms = 850;
    blocked.target_status = "dead";
    blocked.blocked = "target not alive";
    blocked.error = "disk full";
    MovesView view;
    view.update({blocked, move("audit", 0, 12'897'484, 27 * kMiB)}, kStart, kNoon);
    EXPECT_EQ(
        view.frame({}),
        "12:00:00  2 moves in flight\n"
        "MOVE       FROM \xe2\x86\x92 TO                 PHASE     PROGRESS                     "
        "BYTES                RATE  LEFT  PASSES  FREEZE\n"
        "audit/0    narad-0 \xe2\x86\x92 narad-3         catch_up  [#########-----------] 45%   "
        "12.3 MiB / 27.0 MiB  -     -     1       -\n"
        "orders/10  narad-0 \xe2\x86\x92 narad-3 (dead)  blocked   [####################] 100%  "
        "27.0 MiB / 27.0 MiB  -     -     3       850ms\n"
        "    blocked: target not alive\n"
        "    error: disk full\n");
}

// Rule: with no moves the frame is the header alone, saying so.
TEST(MovesView, EmptyFrameSaysNoMovesInFlight) {
    MovesView view;
    view.update({}, kStart, kNoon);
    EXPECT_EQ(view.frame({}), "12:00:00  no moves in flight\n");
    FrameOptions local;
    local.utc_offset_s = -13 * 3600;  // the clock wraps to the previous day
    EXPECT_EQ(view.frame(local), "23:00:00  no moves in flight\n");
    view.update({move("a", 0, 0, 1)}, kStart, kNoon);
    EXPECT_TRUE(view.frame({}).starts_with("12:00:00  1 move in flight\n"));
}

// Rule: a failed poll keeps the last table and says what failed; the next answer clears it.
TEST(MovesView, FailedPollKeepsLastAnswer) {
    MovesView view;
    view.update({move("orders", 3, 1 * kMiB, 4 * kMiB)}, kStart, kNoon);
    view.poll_failed("transport: connection refused", kNoon + seconds(1));
    std::string frame = view.frame({});
    EXPECT_TRUE(
        frame.starts_with("12:00:00  1 move in flight\n"
                          "poll failed at 12:00:01: transport: connection refused "
                          "(retrying)\n"))
        << frame;
    EXPECT_NE(line_starting(frame, "orders/3"), "");
    view.update({}, kStart + seconds(2), kNoon + seconds(2));
    EXPECT_EQ(view.frame({}), "12:00:02  no moves in flight\n");
}

// Rule: a frame never exceeds max_lines (moves that do not fit are counted in a last line) nor
// max_columns characters per line.
TEST(MovesView, FrameFitsLinesAndColumns) {
    std::vector<MoveRow> rows;
    for (int64_t p = 0; p < 6; ++p) rows.push_back(move("t", p, p, 10));
    rows[0].error = "boom";  // two lines for the first move
    MovesView view;
    view.update(rows, kStart, kNoon);
    FrameOptions small;
    small.max_lines = 6;
    std::string frame = view.frame(small);
    EXPECT_EQ(line_count(frame), 6u) << frame;
    EXPECT_NE(line_starting(frame, "t/0"), "");
    EXPECT_NE(line_starting(frame, "    error: boom"), "");
    EXPECT_NE(line_starting(frame, "t/1"), "");
    EXPECT_EQ(line_starting(frame, "t/2"), "");
    EXPECT_TRUE(frame.ends_with("... and 4 more\n")) << frame;

    small.max_lines = 2;  // only room for the header and the count
    EXPECT_EQ(view.frame(small), "12:00:00  6 moves in flight\n... and 6 more\n");

    FrameOptions narrow;
    narrow.max_columns = 12;
    frame = view.frame(narrow);
    EXPECT_EQ(line_count(frame), 9u);
    // The arrow counts as one character although it takes three bytes.
    EXPECT_NE(frame.find("\nMOVE  FROM \xe2\x86\x92\n"), std::string::npos) << frame;
    EXPECT_NE(frame.find("\nt/0   narad-\n"), std::string::npos) << frame;
    EXPECT_NE(frame.find("\n    error: b\n"), std::string::npos) << frame;
}

// Rule: server text cannot smuggle escape sequences into the frame: control characters,
// including the UTF-8 encoded C1 range, become '?'.
TEST(MovesView, ControlCharactersInServerTextAreNeutralised) {
    MoveRow row = move("orders", 1, 0, 1);
    row.error =
        "bad\x1b[2J\xc2\x9b"
        "1A\nend";
    row.phase = "x\x07";
    MovesView view;
    view.update({row}, kStart, kNoon);
    const std::string frame = view.frame({});
    EXPECT_EQ(frame.find('\x1b'), std::string::npos);
    EXPECT_EQ(frame.find('\x07'), std::string::npos);
    EXPECT_NE(frame.find("    error: bad?[2J?1A?end\n"), std::string::npos) << frame;
}

// Rule: redrawing moves the cursor up over exactly the previous frame's lines and clears below.
TEST(MovesView, ErasePreviousLines) {
    EXPECT_EQ(erase_previous_lines(0), "");
    EXPECT_EQ(erase_previous_lines(3), "\x1b[3A\r\x1b[J");
}

// Rule: parse_moves takes {"moves":[...]} or a bare array, treats a missing or null list as no
// moves, skips entries and fields of the wrong type, and rejects anything else.
TEST(ParseMoves, ToleratesShapesAndRejectsGarbage) {
    auto rows = parse_moves(R"({"moves":[1,{"topic":7,"partition":2.0,"bytes_copied":-5,)"
                            R"("bytes_total":18446744073709551615,"passes":2,"freeze_ms":12.6}]})");
    ASSERT_TRUE(rows.is_ok());
    ASSERT_EQ(rows->size(), 1u);
    const MoveRow& row = rows->front();
    EXPECT_EQ(row.topic, "");
    EXPECT_EQ(row.partition, 2);
    EXPECT_EQ(row.bytes_copied, std::nullopt);
    EXPECT_EQ(row.bytes_total, std::nullopt);
    EXPECT_EQ(row.passes, 2);
    EXPECT_EQ(row.freeze_ms, 13);

    EXPECT_EQ(parse_moves(R"([{"topic":"a"}])")->size(), 1u);
    EXPECT_TRUE(parse_moves(R"({})")->empty());
    EXPECT_TRUE(parse_moves(R"({"moves":null})")->empty());
    EXPECT_EQ(parse_moves("nope").status().message(), "parse moves: not JSON");
    EXPECT_EQ(parse_moves(R"({"moves":{}})").status().message(),
              "parse moves: want {\"moves\":[...]}");
    EXPECT_FALSE(parse_moves("3").is_ok());
}

}  // namespace
}  // namespace narad::cli
