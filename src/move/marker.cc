#include "move/marker.h"

#include <fmt/format.h>

#include <charconv>

#include "base/checksum.h"
#include "base/names.h"

namespace narad::move {
namespace {

constexpr std::string_view kMagic = "narad-move-marker 2";
constexpr std::string_view kMagicV1 = "narad-move-marker 1";  // read: no install line
constexpr size_t kMaxChildren = 1024;

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    while (true) {
        size_t at = text.find(separator);
        parts.push_back(text.substr(0, at));
        if (at == std::string_view::npos) return parts;
        text.remove_prefix(at + 1);
    }
}

template <typename T>
bool parse_number(std::string_view text, T& out) {
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

Status malformed(std::string_view why) {
    return Status(Errc::corrupt, "move marker: " + std::string(why));
}

}  // namespace

std::string encode_marker(const MoveMarker& marker) {
    std::string body = std::string(kMagic) + "\n";
    body += "source " + marker.source.value() + "\n";
    body += fmt::format("promoted_high_watermark {}\n", marker.promoted_high_watermark.value());
    body += fmt::format("force_promote {}\n", marker.force_promote ? 1 : 0);
    body += fmt::format("durable_at_ms {}\n", marker.durable_at_ms);
    if (!marker.install.empty()) body += "install " + marker.install + "\n";
    for (const ChildLink& link : marker.children) {
        body += "child " + link.child + " " + link.attach_epoch + "\n";
    }
    body += fmt::format("checksum {:016x}\n", checksum64(body));
    return body;
}

Result<MoveMarker> decode_marker(std::string_view text) {
    size_t checksum_at = text.rfind("checksum ");
    if (checksum_at == std::string_view::npos ||
        (checksum_at > 0 && text[checksum_at - 1] != '\n')) {
        return malformed("no checksum line");
    }
    std::string_view body = text.substr(0, checksum_at);
    std::string_view stated = text.substr(checksum_at + 9);
    if (!stated.empty() && stated.back() == '\n') stated.remove_suffix(1);
    if (stated != fmt::format("{:016x}", checksum64(body))) return malformed("checksum mismatch");
    std::vector<std::string_view> lines = split(body, '\n');
    if (lines.empty() || (lines.front() != kMagic && lines.front() != kMagicV1)) {
        return malformed("unknown version");
    }
    const bool version1 = lines.front() == kMagicV1;
    MoveMarker marker;
    bool has_source = false, has_hwm = false;
    for (size_t i = 1; i < lines.size(); ++i) {
        std::string_view line = lines[i];
        if (line.empty()) continue;
        size_t space = line.find(' ');
        if (space == std::string_view::npos) return malformed("a line without a value");
        std::string_view field = line.substr(0, space);
        std::string_view value = line.substr(space + 1);
        uint64_t number = 0;
        if (field == "source") {
            marker.source = NodeId(std::string(value));
            has_source = validate_node_id(value).is_ok();
        } else if (field == "promoted_high_watermark" && parse_number(value, number)) {
            marker.promoted_high_watermark = Offset(number);
            has_hwm = true;
        } else if (field == "force_promote" && (value == "0" || value == "1")) {
            marker.force_promote = value == "1";
        } else if (field == "durable_at_ms" && parse_number(value, marker.durable_at_ms)) {
        } else if (field == "install" && !version1 && !value.empty() &&
                   value.find_first_not_of("0123456789abcdef") == std::string_view::npos) {
            marker.install = std::string(value);
        } else if (field == "child") {
            auto parts = split(value, ' ');
            if (parts.size() != 2 || marker.children.size() >= kMaxChildren) {
                return malformed("a bad child line");
            }
            marker.children.push_back(ChildLink{std::string(parts[0]), std::string(parts[1])});
        } else {
            return malformed("unknown or bad field '" + std::string(field) + "'");
        }
    }
    if (!has_source || !has_hwm) return malformed("source or high watermark missing");
    return marker;
}

Status write_marker(io::FileSystem& fs, const std::string& directory, const MoveMarker& marker) {
    return io::write_file_atomically(fs, io::join_path(directory, kMoveMarkerFile),
                                     encode_marker(marker));
}

Result<MoveMarker> read_marker(io::FileSystem& fs, const std::string& directory) {
    NARAD_ASSIGN_OR_RETURN(std::string text,
                           io::read_file(fs, io::join_path(directory, kMoveMarkerFile)));
    return decode_marker(text);
}

}  // namespace narad::move
