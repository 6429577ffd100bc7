#include "cli/moves_watch.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "cli/moves_view.h"
#include "cli/test_support.h"

namespace narad::cli {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::CapturedOutput;
using testing::FakeApi;
using testing::FakeSleeper;

constexpr int64_t kMiB = 1024 * 1024;

std::string one_move(int64_t copied, int64_t partition = 3) {
    return R"({"moves":[{"topic":"orders","partition":)" + std::to_string(partition) +
           R"(,"from":"narad-0","to":"narad-3","phase":"catch_up","bytes_copied":)" +
           std::to_string(copied) + R"(,"bytes_total":)" + std::to_string(4 * kMiB) + "}]}";
}

// A watch against a fake node, with a clock that moves only when the loop sleeps.
struct Watch {
    Watch() {
        clock.set_wall(WallTime(seconds(1'767'225'600)));  // 2026-01-01 00:00:00 UTC
        sleeper.on_sleep = [this] { clock.advance(sleeper.sleeps.back()); };
        options.utc_offset_s = [](int64_t) { return int64_t(0); };
    }
    Status run() { return watch_moves(api, captured.output, sleeper, clock, options); }
    std::string out() const { return captured.out.str(); }

    FakeApi api;
    FakeSleeper sleeper;
    FakeClock clock;
    CapturedOutput captured;
    MovesWatchOptions options;
};

// Rule: with --until-done the watch polls (with detail) and sleeps the interval until the first
// answer without moves, prints that frame and returns ok without polling again.
TEST(WatchMoves, UntilDoneStopsOnFirstEmptyFrame) {
    Watch watch;
    watch.options.until_done = true;
    watch.options.interval = seconds(2);
    watch.api.answer(200, one_move(1 * kMiB));
    watch.api.answer(200, one_move(3 * kMiB));
    watch.api.answer(200, R"({"moves":[]})");
    watch.api.answer(200, one_move(4 * kMiB));  // never asked for
    ASSERT_TRUE(watch.run().is_ok());
    ASSERT_EQ(watch.api.calls.size(), 3u);
    for (const auto& call : watch.api.calls) {
        EXPECT_EQ(call.method, "GET");
        EXPECT_EQ(call.target, "/v1/cluster/moves?detail=true");
    }
    EXPECT_EQ(watch.sleeper.sleeps,
              (std::vector<std::chrono::nanoseconds>{seconds(2), seconds(2)}));
    const std::string out = watch.out();
    EXPECT_NE(out.find("1.0 MiB/s  1s"), std::string::npos) << out;  // 2 MiB over 2 s, 1 MiB left
    EXPECT_TRUE(out.ends_with(":04  no moves in flight\n\n")) << out;
}

// Rule: --until-done on a cluster with nothing moving prints one frame and stops at once.
TEST(WatchMoves, UntilDoneWithNothingMovingStopsAfterOneFrame) {
    Watch watch;
    watch.options.until_done = true;
    watch.api.answer(200, "{}");
    ASSERT_TRUE(watch.run().is_ok());
    EXPECT_EQ(watch.api.calls.size(), 1u);
    EXPECT_TRUE(watch.sleeper.sleeps.empty());
    EXPECT_TRUE(watch.out().ends_with("  no moves in flight\n\n")) << watch.out();
}

// Rule: without --until-done an empty frame does not end the watch; only an interrupted wait
// does, and that is a success.
TEST(WatchMoves, WithoutUntilDoneRunsUntilInterrupted) {
    Watch watch;
    watch.api.handler = [](const testing::Call&) -> Result<net::HttpResponse> {
        return testing::response(200, R"({"moves":[]})");
    };
    watch.sleeper.on_sleep = [&] {
        watch.clock.advance(watch.sleeper.sleeps.back());
        if (watch.sleeper.sleeps.size() == 3) watch.sleeper.stop();
    };
    ASSERT_TRUE(watch.run().is_ok());
    EXPECT_EQ(watch.api.calls.size(), 3u);
    EXPECT_EQ(watch.sleeper.sleeps.size(), 3u);
    EXPECT_EQ(watch.sleeper.sleeps.front(), seconds(1));  // the default interval
}

// Rule: off a terminal every frame is printed whole, followed by a blank line, with no ANSI
// escape anywhere, so the output can be logged.
TEST(WatchMoves, NonTerminalOutputHasNoEscapes) {
    Watch watch;
    watch.options.until_done = true;
    watch.options.terminal_size = [] { return TerminalSize{10, 3}; };  // ignored off a terminal
    watch.api.answer(200, one_move(1 * kMiB));
    watch.api.answer(200, one_move(2 * kMiB));
    watch.api.answer(200, "{}");
    ASSERT_TRUE(watch.run().is_ok());
    const std::string out = watch.out();
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
    // Three frames of 3, 3 and 1 lines, each closed by an empty line.
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 3 + 1 + 3 + 1 + 1 + 1);
    EXPECT_NE(out.find("in flight\nMOVE"), std::string::npos);
    EXPECT_NE(out.find(" -\n\n00:"), std::string::npos) << out;
}

// Rule: on a terminal each frame after the first starts by erasing exactly the previous frame's
// lines, frames get no blank line after them, and they fit the window.
TEST(WatchMoves, TerminalRedrawsInPlace) {
    Watch watch;
    watch.options.until_done = true;
    watch.options.terminal = true;
    watch.options.terminal_size = [] { return TerminalSize{200, 50}; };
    watch.api.answer(200, one_move(1 * kMiB));
    watch.api.answer(200, one_move(2 * kMiB));
    watch.api.answer(200, "{}");
    ASSERT_TRUE(watch.run().is_ok());
    const std::string out = watch.out();
    const std::string erase = erase_previous_lines(3);
    const size_t first_erase = out.find(erase);
    ASSERT_NE(first_erase, std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.begin() + long(first_erase), '\n'), 3);
    const size_t second_erase = out.find(erase, first_erase + erase.size());
    ASSERT_NE(second_erase, std::string::npos) << out;
    EXPECT_EQ(out.find("\x1b", second_erase + erase.size()), std::string::npos);
    EXPECT_TRUE(out.ends_with("  no moves in flight\n")) << out;
    EXPECT_EQ(out.find("\n\n"), std::string::npos) << out;
}

// Rule: a terminal frame is cut to the window (one line and one column spare), so the line
// count used to redraw stays true.
TEST(WatchMoves, TerminalFrameFitsTheWindow) {
    std::string many = R"({"moves":[)";
    for (int p = 0; p < 10; ++p) {
        if (p > 0) many += ',';
        many += R"({"topic":"orders","partition":)" + std::to_string(p) + "}";
    }
    many += "]}";
    Watch watch;
    watch.options.until_done = true;
    watch.options.terminal = true;
    watch.options.terminal_size = [] { return TerminalSize{30, 6}; };
    watch.api.answer(200, many);
    watch.api.answer(200, "{}");
    ASSERT_TRUE(watch.run().is_ok());
    const std::string out = watch.out();
    const std::string erase = erase_previous_lines(5);
    const size_t at = out.find(erase);
    ASSERT_NE(at, std::string::npos) << out;
    const std::string first = out.substr(0, at);
    EXPECT_TRUE(first.ends_with("... and 8 more\n")) << first;
    size_t start = 0;
    while (start < first.size()) {
        const size_t end = first.find('\n', start);
        EXPECT_LE(end - start, 29u + 2u) << first;  // 29 characters; the arrow has 3 bytes
        start = end + 1;
    }
}

// Rule: if the first poll fails there is nothing to watch: its error is returned, nothing
// printed and no wait made.
TEST(WatchMoves, FirstPollFailureIsReturned) {
    Watch watch;
    watch.api.answer(404, R"({"error":"no such route"})");
    const Status status = watch.run();
    EXPECT_EQ(status.message(), "http 404: no such route");
    EXPECT_EQ(watch.out(), "");
    EXPECT_TRUE(watch.sleeper.sleeps.empty());

    Watch garbled;
    garbled.api.answer(200, "<html>");
    EXPECT_EQ(garbled.run().message(), "parse moves: not JSON");
}

// Rule: once running, a failed poll is shown over the last answer and retried, the rate after it
// spans the time since the last good poll, and kMaxConsecutivePollFailures failures in a row end
// the watch with the last error.
TEST(WatchMoves, LaterFailuresAreShownRetriedAndBounded) {
    Watch watch;
    watch.api.answer(200, one_move(1 * kMiB));
    watch.api.fail("transport: connection refused");
    watch.api.answer(200, one_move(3 * kMiB));
    for (int i = 0; i < kMaxConsecutivePollFailures; ++i) watch.api.answer(503, "busy");
    const Status status = watch.run();
    EXPECT_EQ(status.message(), "http 503: busy");
    EXPECT_EQ(watch.api.calls.size(), 3u + size_t(kMaxConsecutivePollFailures));
    const std::string out = watch.out();
    EXPECT_NE(out.find("poll failed at 00:00:01: transport: connection refused (retrying)\n"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("1.0 MiB/s"), std::string::npos) << out;  // 2 MiB over 2 s
    EXPECT_NE(out.find("poll failed at 00:00:11: http 503: busy (retrying)\n"), std::string::npos)
        << out;
}

}  // namespace
}  // namespace narad::cli
