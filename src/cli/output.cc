#include "cli/output.h"

#include <unistd.h>

#include <cstdlib>

#include "cli/json_text.h"

namespace narad::cli {

Style Style::detect() {
    const char* no_color = std::getenv("NO_COLOR");
    if (no_color != nullptr && no_color[0] != '\0') return Style(Color::off);
    return Style(isatty(STDOUT_FILENO) == 1 ? Color::on : Color::off);
}

std::string Style::dim(std::string_view text) const {
    if (!color_) return std::string(text);
    return "\x1b[2m" + std::string(text) + "\x1b[0m";
}

std::string Style::bold(std::string_view text) const {
    if (!color_) return std::string(text);
    return "\x1b[1m" + std::string(text) + "\x1b[0m";
}

bool stdout_is_terminal() {
    const char* term = std::getenv("TERM");
    if (term != nullptr && std::string_view(term) == "dumb") return false;
    return isatty(STDOUT_FILENO) == 1;
}

void print_response_body(std::ostream& out, std::string_view body) {
    if (body.empty()) return;
    if (auto pretty = indent_json(body)) {
        out << *pretty << '\n';
        return;
    }
    out << body;
    if (body.back() != '\n') out << '\n';
}

}  // namespace narad::cli
