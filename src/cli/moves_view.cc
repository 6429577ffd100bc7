#include "cli/moves_view.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "base/duration.h"
#include "cli/text.h"

namespace narad::cli {
namespace {

// A time left beyond this is shown as ">100h": at that point the estimate says "stalled", and
// Go's form of a huge duration would only widen the column.
constexpr int64_t kMaxSecondsLeftShown = 100 * 3600;
// Server texts (blocked reason, error) are cut to this many characters in a frame.
constexpr size_t kMaxNoteRunes = 200;

std::string string_field(const nlohmann::json& object, const char* name) {
    auto it = object.find(name);
    if (it == object.end() || !it->is_string()) return "";
    return it->get<std::string>();
}

// A count the server sends: an integer, or a float that fits; negative values mean nothing.
std::optional<int64_t> count_field(const nlohmann::json& object, const char* name) {
    auto it = object.find(name);
    if (it == object.end()) return std::nullopt;
    if (it->is_number_unsigned()) {
        const uint64_t value = it->get<uint64_t>();
        if (value > uint64_t(std::numeric_limits<int64_t>::max())) return std::nullopt;
        return int64_t(value);
    }
    if (it->is_number_integer()) {
        const int64_t value = it->get<int64_t>();
        return value < 0 ? std::nullopt : std::optional<int64_t>(value);
    }
    if (it->is_number_float()) {
        const double value = it->get<double>();
        // 2^63 is the first double past int64's range.
        if (!std::isfinite(value) || value < 0 || value >= 9.2233720368547758e18) {
            return std::nullopt;
        }
        return int64_t(std::llround(value));
    }
    return std::nullopt;
}

MoveRow parse_row(const nlohmann::json& entry) {
    MoveRow row;
    row.topic = string_field(entry, "topic");
    row.partition = count_field(entry, "partition");
    row.source = string_field(entry, "from");
    row.target = string_field(entry, "to");
    row.phase = string_field(entry, "phase");
    row.bytes_copied = count_field(entry, "bytes_copied");
    row.bytes_total = count_field(entry, "bytes_total");
    row.passes = count_field(entry, "passes");
    row.freeze_ms = count_field(entry, "freeze_ms");
    row.source_status = string_field(entry, "source_status");
    row.target_status = string_field(entry, "target_status");
    row.blocked = string_field(entry, "blocked");
    row.error = string_field(entry, "error");
    return row;
}

using MoveKey = std::tuple<std::string, std::optional<int64_t>, std::string, std::string>;

// Two rows are the same move if they take the same partition between the same nodes: an aborted
// move followed by one to another node starts its rate afresh.
MoveKey key_of(const MoveRow& row) { return {row.topic, row.partition, row.source, row.target}; }

// Server text made safe for a terminal: control characters (C0, DEL and the UTF-8 encoded C1
// range, which holds CSI) become '?', so a stray escape sequence cannot move the cursor.
std::string printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte < 0x20 || byte == 0x7f) {
            out += '?';
        } else if (byte == 0xc2 && i + 1 < text.size() &&
                   static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
            out += '?';
            ++i;
        } else {
            out += char(byte);
        }
    }
    return out;
}

// The first `limit` runes of `text` (UTF-8 continuation bytes do not count).
std::string clip_runes(std::string_view text, size_t limit) {
    size_t runes = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xc0) == 0x80) continue;
        if (runes == limit) return std::string(text.substr(0, i));
        ++runes;
    }
    return std::string(text);
}

std::string text_or_dash(std::string_view text) { return text.empty() ? "-" : printable(text); }

std::string count_or_dash(std::optional<int64_t> value, std::string_view unit = "") {
    return value ? std::to_string(*value) + std::string(unit) : "-";
}

// "narad-0", or "narad-0 (dead)" when the side is anything but alive.
std::string side(std::string_view node, std::string_view status) {
    std::string out = text_or_dash(node);
    if (!status.empty() && status != "alive") out += " (" + printable(status) + ")";
    return out;
}

std::string byte_pair(const MoveRow& row) {
    if (!row.bytes_copied && !row.bytes_total) return "-";
    return (row.bytes_copied ? human_bytes(*row.bytes_copied, UnitGap::space) : "-") + " / " +
           (row.bytes_total ? human_bytes(*row.bytes_total, UnitGap::space) : "-");
}

std::string clock_text(WallTime time, int64_t utc_offset_s) {
    const int64_t seconds =
        std::chrono::floor<std::chrono::seconds>(time.time_since_epoch()).count() + utc_offset_s;
    const int64_t of_day = ((seconds % 86'400) + 86'400) % 86'400;
    char text[16];
    std::snprintf(text, sizeof text, "%02d:%02d:%02d", int(of_day / 3600), int(of_day / 60 % 60),
                  int(of_day % 60));
    return text;
}

std::string moves_in_flight(size_t count) {
    if (count == 0) return "no moves in flight";
    return std::to_string(count) + (count == 1 ? " move" : " moves") + " in flight";
}

constexpr size_t kColumns = 9;
using Cells = std::array<std::string, kColumns>;

const Cells kTableHeader = {
    "MOVE",  "FROM \xe2\x86\x92 TO", "PHASE", "PROGRESS", "BYTES", "RATE", "LEFT", "PASSES",
    "FREEZE"};

Cells row_cells(const MoveRow& row, const MoveProgress& progress) {
    return {text_or_dash(row.topic) + "/" + count_or_dash(row.partition),
            side(row.source, row.source_status) + " \xe2\x86\x92 " +
                side(row.target, row.target_status),
            text_or_dash(row.phase),
            progress_bar(row.bytes_copied, row.bytes_total),
            byte_pair(row),
            format_rate(progress.bytes_per_second),
            format_time_left(progress.seconds_left),
            count_or_dash(row.passes),
            count_or_dash(row.freeze_ms, "ms")};
}

// The indented lines under a row: why it is blocked and the target's last error.
std::vector<std::string> row_notes(const MoveRow& row) {
    std::vector<std::string> notes;
    if (!row.blocked.empty()) {
        notes.push_back("    blocked: " + clip_runes(printable(row.blocked), kMaxNoteRunes));
    }
    if (!row.error.empty()) {
        notes.push_back("    error: " + clip_runes(printable(row.error), kMaxNoteRunes));
    }
    return notes;
}

std::string table_line(const Cells& cells, const std::array<size_t, kColumns>& widths) {
    std::string line;
    for (size_t i = 0; i < kColumns; ++i) {
        if (i > 0) line += "  ";
        line += i + 1 < kColumns ? pad_right(cells[i], widths[i]) : cells[i];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line;
}

}  // namespace

Result<std::vector<MoveRow>> parse_moves(std::string_view body) {
    const nlohmann::json doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return Status(Errc::invalid_argument, "parse moves: not JSON");
    const nlohmann::json* list = &doc;
    if (doc.is_object()) {
        auto it = doc.find("moves");
        if (it == doc.end() || it->is_null()) return std::vector<MoveRow>{};
        list = &*it;
    }
    if (!list->is_array()) {
        return Status(Errc::invalid_argument, "parse moves: want {\"moves\":[...]}");
    }
    std::vector<MoveRow> rows;
    for (const nlohmann::json& entry : *list) {
        if (rows.size() == kMaxMovesParsed) break;
        if (entry.is_object()) rows.push_back(parse_row(entry));
    }
    return rows;
}

MoveProgress progress_between(const MoveRow& earlier, MonoTime earlier_time, const MoveRow& later,
                              MonoTime later_time) {
    MoveProgress progress;
    if (!earlier.bytes_copied || !later.bytes_copied || later_time <= earlier_time) return progress;
    // A count that went back (a new pass restarting it) says nothing about speed.
    if (*later.bytes_copied < *earlier.bytes_copied) return progress;
    const double seconds = std::chrono::duration<double>(later_time - earlier_time).count();
    const double rate = double(*later.bytes_copied - *earlier.bytes_copied) / seconds;
    progress.bytes_per_second = rate;
    if (later.bytes_total && rate > 0) {
        const int64_t remaining = std::max<int64_t>(0, *later.bytes_total - *later.bytes_copied);
        const double left = std::ceil(double(remaining) / rate);
        progress.seconds_left =
            left > double(kMaxSecondsLeftShown) ? kMaxSecondsLeftShown + 1 : int64_t(left);
    }
    return progress;
}

std::string progress_bar(std::optional<int64_t> bytes_copied, std::optional<int64_t> bytes_total) {
    const auto bar = [](int64_t cells) {
        return "[" + std::string(size_t(cells), '#') +
               std::string(size_t(kProgressBarCells - cells), '-') + "]";
    };
    if (!bytes_copied || !bytes_total || *bytes_total <= 0) return bar(0) + " -";
    if (*bytes_copied >= *bytes_total) return bar(kProgressBarCells) + " 100%";
    // Rounded down, so 100% (and a full bar) means every byte is there.
    int64_t percent = 0;
    if (*bytes_copied <= std::numeric_limits<int64_t>::max() / 100) {
        percent = *bytes_copied * 100 / *bytes_total;
    } else {
        percent = int64_t(double(*bytes_copied) / double(*bytes_total) * 100.0);
    }
    percent = std::clamp<int64_t>(percent, 0, 99);
    return bar(percent * kProgressBarCells / 100) + " " + std::to_string(percent) + "%";
}

std::string format_rate(std::optional<double> bytes_per_second) {
    if (!bytes_per_second || !std::isfinite(*bytes_per_second) || *bytes_per_second < 0) {
        return "-";
    }
    const double capped = std::min(*bytes_per_second, 9.0e18);
    return human_bytes(std::llround(capped), UnitGap::space) + "/s";
}

std::string format_time_left(std::optional<int64_t> seconds_left) {
    if (!seconds_left || *seconds_left < 0) return "-";
    if (*seconds_left > kMaxSecondsLeftShown) return ">100h";
    return format_duration(*seconds_left * kNanosPerSecond);
}

std::string erase_previous_lines(size_t lines) {
    if (lines == 0) return "";
    // Up `lines` lines, back to column 0, erase to the end of the screen.
    return "\x1b[" + std::to_string(lines) + "A\r\x1b[J";
}

void MovesView::update(std::vector<MoveRow> rows, MonoTime polled, WallTime polled_wall) {
    std::map<MoveKey, const MoveRow*> earlier;
    for (const Entry& entry : entries_) earlier.emplace(key_of(entry.row), &entry.row);
    std::vector<Entry> next;
    next.reserve(rows.size());
    for (MoveRow& row : rows) {
        MoveProgress progress;
        if (auto it = earlier.find(key_of(row)); it != earlier.end()) {
            progress = progress_between(*it->second, polled_, row, polled);
        }
        next.push_back(Entry{std::move(row), progress});
    }
    std::stable_sort(next.begin(), next.end(),
                     [](const Entry& a, const Entry& b) { return key_of(a.row) < key_of(b.row); });
    entries_ = std::move(next);
    polled_ = polled;
    polled_wall_ = polled_wall;
    failure_.reset();
}

void MovesView::poll_failed(std::string message, WallTime failed_wall) {
    failure_ = std::move(message);
    failed_wall_ = failed_wall;
}

std::string MovesView::frame(const FrameOptions& options) const {
    std::vector<std::string> lines;
    lines.push_back(clock_text(polled_wall_, options.utc_offset_s) + "  " +
                    moves_in_flight(entries_.size()));
    if (failure_) {
        lines.push_back("poll failed at " + clock_text(failed_wall_, options.utc_offset_s) + ": " +
                        printable(*failure_) + " (retrying)");
    }
    if (!entries_.empty()) {
        std::vector<Cells> cells;
        std::vector<std::vector<std::string>> notes;
        size_t needed = 0;
        for (const Entry& entry : entries_) {
            cells.push_back(row_cells(entry.row, entry.progress));
            notes.push_back(row_notes(entry.row));
            needed += 1 + notes.back().size();
        }
        // Lines left for rows once the header lines and the table's own header are counted.
        const size_t fixed = lines.size() + 1;
        const size_t available = options.max_lines > fixed ? options.max_lines - fixed : 0;
        size_t shown = entries_.size();
        if (needed > available) {
            const size_t budget = available > 0 ? available - 1 : 0;  // keep one for "... more"
            size_t used = 0;
            shown = 0;
            while (shown < entries_.size() && used + 1 + notes[shown].size() <= budget) {
                used += 1 + notes[shown].size();
                ++shown;
            }
        }
        if (shown > 0) {
            std::array<size_t, kColumns> widths{};
            for (size_t i = 0; i < kColumns; ++i) widths[i] = rune_count(kTableHeader[i]);
            for (size_t row = 0; row < shown; ++row) {
                for (size_t i = 0; i < kColumns; ++i) {
                    widths[i] = std::max(widths[i], rune_count(cells[row][i]));
                }
            }
            lines.push_back(table_line(kTableHeader, widths));
            for (size_t row = 0; row < shown; ++row) {
                lines.push_back(table_line(cells[row], widths));
                lines.insert(lines.end(), notes[row].begin(), notes[row].end());
            }
        }
        if (shown < entries_.size()) {
            lines.push_back("... and " + std::to_string(entries_.size() - shown) + " more");
        }
    }
    std::string text;
    for (const std::string& line : lines) {
        text += options.max_columns > 0 ? clip_runes(line, options.max_columns) : line;
        text += '\n';
    }
    return text;
}

}  // namespace narad::cli
