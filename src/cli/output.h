// Where a command writes: stdout and stderr streams plus the styling rule of the Go CLI (ANSI dim
// and bold only when stdout is a terminal and NO_COLOR is unset). Commands take an Output so tests
// can capture what they print. An Output is used by one thread at a time; `mutex` serialises the
// few places where a signal-handling thread prints a final line (sub's "<n> message(s)").
#pragma once

#include <iostream>
#include <string>
#include <string_view>

#include "base/mutex.h"

namespace narad::cli {

// Whether output carries ANSI styling.
enum class Color { off, on };

class Style {
  public:
    explicit Style(Color color = Color::off) : color_(color == Color::on) {}
    // The process's rule: color iff NO_COLOR is empty or unset and stdout is a terminal.
    static Style detect();

    bool color() const { return color_; }
    std::string dim(std::string_view text) const;
    std::string bold(std::string_view text) const;

  private:
    bool color_;
};

struct Output {
    std::ostream& out;
    std::ostream& err;
    Style style;
    Mutex mutex;
    // Stdout is a terminal that can move its cursor (live views redraw in place). Unlike colour,
    // NO_COLOR does not turn it off. False unless the binary sets it (tests capture to streams).
    bool terminal = false;

    Output(std::ostream& out_stream, std::ostream& err_stream, Style output_style)
        : out(out_stream), err(err_stream), style(output_style) {}
};

// Whether stdout is a terminal with cursor movement: a tty whose TERM is not "dumb".
bool stdout_is_terminal();

// JSON bodies printed the way Go's printResponse does: re-indented with two spaces and followed
// by '\n' (so a body ending in '\n' gets an empty line after it, as in Go); a body that is not
// JSON is printed verbatim, with '\n' added if missing; an empty body prints nothing.
void print_response_body(std::ostream& out, std::string_view body);

}  // namespace narad::cli
