#include "cli/admin.h"

#include <algorithm>

#include "cli/text.h"

namespace narad::cli {
namespace {

std::string trim_space(std::string_view text) {
    const auto space = [](char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
    };
    while (!text.empty() && space(text.front())) text.remove_prefix(1);
    while (!text.empty() && space(text.back())) text.remove_suffix(1);
    return std::string(text);
}

}  // namespace

Result<nlohmann::json> parse_grants(const std::vector<std::string>& specs) {
    nlohmann::json out = nlohmann::json::array();
    for (const std::string& spec : specs) {
        const size_t colon = spec.find(':');
        const std::string action = spec.substr(0, colon);
        const std::string trimmed = trim_space(action);
        nlohmann::json grant = {{"action", trimmed}};
        if (colon != std::string::npos && colon + 1 < spec.size()) {
            nlohmann::json patterns = nlohmann::json::array();
            std::string_view rest = std::string_view(spec).substr(colon + 1);
            while (true) {
                const size_t comma = rest.find(',');
                patterns.push_back(trim_space(rest.substr(0, comma)));
                if (comma == std::string_view::npos) break;
                rest.remove_prefix(comma + 1);
            }
            grant["patterns"] = patterns;
        }
        if (trimmed != "produce" && trimmed != "consume" && trimmed != "create" &&
            trimmed != "admin") {
            return Status(Errc::invalid_argument, "unknown action " + go_quote(action) +
                                                      " in grant " + go_quote(spec) +
                                                      " (want produce|consume|create|admin)");
        }
        out.push_back(std::move(grant));
    }
    return out;
}

Result<nlohmann::json> revoke_grants(const nlohmann::json& current, const nlohmann::json& revoked) {
    nlohmann::json kept = current.is_array() ? current : nlohmann::json::array();
    bool removed_any = false;
    for (const nlohmann::json& spec : revoked) {
        const std::string action = spec.value("action", "");
        const bool whole = !spec.contains("patterns");
        nlohmann::json next = nlohmann::json::array();
        for (nlohmann::json grant : kept) {
            if (grant.value("action", "") != action) {
                next.push_back(std::move(grant));
                continue;
            }
            if (whole) {
                removed_any = true;
                continue;
            }
            nlohmann::json patterns = nlohmann::json::array();
            for (const nlohmann::json& pattern : grant.value("patterns", nlohmann::json::array())) {
                bool named = std::find(spec["patterns"].begin(), spec["patterns"].end(), pattern) !=
                             spec["patterns"].end();
                if (named) {
                    removed_any = true;
                } else {
                    patterns.push_back(pattern);
                }
            }
            if (patterns.empty()) continue;
            grant["patterns"] = std::move(patterns);
            next.push_back(std::move(grant));
        }
        kept = std::move(next);
    }
    if (!removed_any) {
        return Status(Errc::invalid_argument, "the user holds none of the grants named");
    }
    return kept;
}

}  // namespace narad::cli
