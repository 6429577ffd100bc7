#include "compare/markers.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace narad::compare {
namespace {

size_t count_of(std::string_view text, std::string_view needle) {
    size_t count = 0;
    for (size_t at = text.find(needle); at != std::string_view::npos;
         at = text.find(needle, at + needle.size())) {
        ++count;
    }
    return count;
}

// Where a new section goes: before the first level-2 heading after "## Machine", or at the end.
size_t insertion_point(std::string_view document) {
    size_t machine = std::string_view::npos;
    for (size_t line = 0; line < document.size();) {
        const size_t end = document.find('\n', line);
        const std::string_view text =
            document.substr(line, end == std::string_view::npos ? end : end - line);
        if (machine == std::string_view::npos) {
            if (text == kMachineHeading) machine = line;
        } else if (text.starts_with("## ")) {
            return line;
        }
        if (end == std::string_view::npos) break;
        line = end + 1;
    }
    return document.size();
}

}  // namespace

Result<std::string> replace_generated(std::string_view document, std::string_view generated) {
    const size_t begins = count_of(document, kBeginMarker);
    const size_t ends = count_of(document, kEndMarker);
    std::string body(generated);
    while (!body.empty() && body.back() == '\n') body.pop_back();
    if (begins == 0 && ends == 0) {
        const size_t at = insertion_point(document);
        std::string before(document.substr(0, at));
        if (!before.empty() && !before.ends_with("\n\n"))
            before += before.ends_with('\n') ? "\n" : "\n\n";
        std::string section = std::string(kCompareHeading) + "\n\n" + std::string(kBeginMarker) +
                              "\n" + body + "\n" + std::string(kEndMarker) + "\n";
        if (at < document.size()) section += "\n";
        return before + section + std::string(document.substr(at));
    }
    if (begins != 1 || ends != 1) {
        return Status(Errc::invalid_argument, "expected one " + std::string(kBeginMarker) +
                                                  " and one " + std::string(kEndMarker) +
                                                  ", found " + std::to_string(begins) + " and " +
                                                  std::to_string(ends));
    }
    const size_t begin = document.find(kBeginMarker);
    const size_t end = document.find(kEndMarker);
    if (end < begin) {
        return Status(Errc::invalid_argument,
                      std::string(kEndMarker) + " comes before " + std::string(kBeginMarker));
    }
    return std::string(document.substr(0, begin + kBeginMarker.size())) + "\n" + body + "\n" +
           std::string(document.substr(end));
}

Status write_file_atomically(const std::string& path, std::string_view text) {
    const std::string temporary = path + ".tmp";
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out << text;
        out.flush();
        if (!out) return Status(Errc::io_error, "cannot write " + temporary);
    }
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec) return Status(Errc::io_error, "rename " + temporary + ": " + ec.message());
    return Status::ok();
}

Status update_markdown_file(const std::string& path, std::string_view generated) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status(Errc::not_found, "cannot read " + path);
    std::ostringstream text;
    text << in.rdbuf();
    auto updated = replace_generated(text.str(), generated);
    if (!updated.is_ok()) return updated.status().with_context(path);
    return write_file_atomically(path, *updated);
}

}  // namespace narad::compare
