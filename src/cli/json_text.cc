#include "cli/json_text.h"

namespace narad::cli {
namespace {

// Writes the scanned value back with Go's json.Indent layout: a newline and two spaces per level
// before every member or element, none inside an empty container.
class Indenter final : public json_scan::Visitor {
  public:
    explicit Indenter(std::string& out) : out_(out) {}

    void open(char bracket, uint32_t depth) override {
        before_item(depth - 1);
        out_ += bracket;
        pending_ = true;
    }
    void close(char bracket, uint32_t depth, bool empty) override {
        if (!empty) newline(depth - 1);
        out_ += bracket;
        pending_ = false;
    }
    void scalar(std::string_view text, uint32_t depth) override {
        before_item(depth);
        out_.append(text);
    }
    void colon() override {
        out_ += ": ";
        after_colon_ = true;
    }
    void comma(uint32_t) override {
        out_ += ',';
        pending_ = true;
    }

  private:
    // An item (member key, element, or the top-level value) starts: the newline it is owed.
    void before_item(uint32_t depth) {
        if (after_colon_) {
            after_colon_ = false;  // a member's value stays on its key's line
            return;
        }
        if (pending_) newline(depth);
        pending_ = false;
    }
    void newline(uint32_t depth) {
        out_ += '\n';
        out_.append(size_t(depth) * 2, ' ');
    }

    std::string& out_;
    bool pending_ = false;
    bool after_colon_ = false;
};

}  // namespace

std::optional<std::string> indent_json(std::string_view text) {
    std::string out;
    Indenter indenter(out);
    json_scan::Scan scan = json_scan::scan_value(text, 0, json_scan::kGoMaxDepth, &indenter);
    if (scan.outcome != json_scan::Outcome::ok) return std::nullopt;
    if (json_scan::skip_space(text, scan.end) != text.size()) return std::nullopt;
    out.append(text.substr(scan.end));  // json.Indent copies trailing whitespace through
    return out;
}

}  // namespace narad::cli
