#include "net/http.h"

#include "base/url.h"

namespace narad::net {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// What a '+' stands for: a space in a query (HTML forms), itself in a path.
enum class Plus { space, literal };

// Appends the percent-decoded `in` to `out`. A '%' not followed by two hex digits is malformed:
// guessing what the client meant could route the request to the wrong name.
bool percent_decode(std::string_view in, Plus plus, std::string& out) {
    out.reserve(out.size() + in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        char c = in[i];
        if (c == '%') {
            if (i + 2 >= in.size()) return false;
            int high = hex_value(in[i + 1]);
            int low = hex_value(in[i + 2]);
            if (high < 0 || low < 0) return false;
            out.push_back(static_cast<char>(high * 16 + low));
            i += 2;
        } else if (c == '+' && plus == Plus::space) {
            out.push_back(' ');
        } else {
            out.push_back(c);
        }
    }
    return true;
}

}  // namespace

std::optional<std::string_view> HttpRequest::header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
        if (iequals(key, name)) return std::string_view(value);
    }
    return std::nullopt;
}

std::optional<std::string_view> HttpRequest::query_param(std::string_view name) const {
    for (const auto& [key, value] : query) {
        if (key == name) return std::string_view(value);
    }
    return std::nullopt;
}

size_t HttpRequest::query_count(std::string_view name) const {
    size_t count = 0;
    for (const auto& entry : query) {
        if (entry.first == name) ++count;
    }
    return count;
}

bool parse_target(std::string_view target, std::string& path,
                  std::vector<std::pair<std::string, std::string>>& query) {
    path.clear();
    query.clear();
    size_t question = target.find('?');
    std::string_view raw_path = target.substr(0, question);
    // A fragment is never sent by a conforming client; drop it rather than treat it as data.
    if (size_t hash = raw_path.find('#'); hash != std::string_view::npos) {
        raw_path = raw_path.substr(0, hash);
    }
    if (!percent_decode(raw_path, Plus::literal, path)) return false;
    if (question == std::string_view::npos) return true;

    std::string_view raw_query = target.substr(question + 1);
    if (size_t hash = raw_query.find('#'); hash != std::string_view::npos) {
        raw_query = raw_query.substr(0, hash);
    }
    while (!raw_query.empty()) {
        size_t amp = raw_query.find('&');
        std::string_view pair = raw_query.substr(0, amp);
        raw_query = amp == std::string_view::npos ? std::string_view() : raw_query.substr(amp + 1);
        if (pair.empty()) continue;  // "a=1&&b=2"
        size_t equals = pair.find('=');
        std::string_view raw_name = pair.substr(0, equals);
        std::string_view raw_value =
            equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1);
        auto& entry = query.emplace_back();
        if (!percent_decode(raw_name, Plus::space, entry.first) ||
            !percent_decode(raw_value, Plus::space, entry.second)) {
            query.clear();
            return false;
        }
    }
    return true;
}

std::string url_encode(std::string_view value) { return percent_encode(value); }

}  // namespace narad::net
