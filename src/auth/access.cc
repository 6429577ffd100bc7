#include "auth/access.h"

#include <algorithm>

namespace narad::auth {

namespace {

bool name_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

bool all_name_chars(std::string_view text) {
    return std::all_of(text.begin(), text.end(), name_char);
}

}  // namespace

Status validate_username(std::string_view name) {
    if (name == "." || name == "..") {
        return Status(Errc::invalid_argument, "username must not be \"" + std::string(name) + "\"");
    }
    if (name.empty() || name.size() > kMaxUsernameBytes || !all_name_chars(name)) {
        return Status(Errc::invalid_argument, "username must match ^[A-Za-z0-9._-]{1,64}$");
    }
    return Status::ok();
}

Status validate_password(std::string_view password) {
    if (password.empty()) return Status(Errc::invalid_argument, "password required");
    if (password.size() > kMaxPasswordBytes) {
        return Status(Errc::invalid_argument, "password must be at most 72 bytes");
    }
    return Status::ok();
}

Status validate_grants(const std::vector<meta::Grant>& grants) {
    for (const meta::Grant& grant : grants) {
        std::string action(meta::action_name(grant.action));
        if (grant.action == meta::Action::admin) {
            if (!grant.patterns.empty()) {
                return Status(Errc::invalid_argument,
                              "admin grants are global and must not carry patterns");
            }
            continue;
        }
        if (grant.patterns.empty()) {
            return Status(Errc::invalid_argument,
                          "grant \"" + action + "\" requires at least one topic pattern");
        }
        for (const std::string& pattern : grant.patterns) {
            if (pattern.empty()) {
                return Status(Errc::invalid_argument,
                              "grant \"" + action + "\" has an empty pattern");
            }
            std::string_view stem = pattern;
            if (stem.ends_with('*')) stem.remove_suffix(1);
            if (stem.size() > kMaxPatternBytes || !all_name_chars(stem)) {
                return Status(Errc::invalid_argument,
                              "grant \"" + action + "\" pattern \"" + pattern +
                                  "\" must be a topic name with an optional trailing '*'");
            }
        }
    }
    return Status::ok();
}

bool pattern_matches(std::string_view pattern, std::string_view topic) {
    if (pattern.ends_with('*')) {
        pattern.remove_suffix(1);
        return topic.starts_with(pattern);
    }
    return pattern == topic;
}

Principal Principal::anyone() {
    Principal principal;
    principal.security_off_ = true;
    return principal;
}

Principal Principal::of(const meta::User& user) {
    Principal principal;
    principal.root_ = user.root;
    principal.name_ = user.name;
    principal.grants_ = user.grants;
    return principal;
}

bool Principal::admin() const {
    if (root()) return true;
    return std::any_of(grants_.begin(), grants_.end(),
                       [](const meta::Grant& g) { return g.action == meta::Action::admin; });
}

bool Principal::allowed(meta::Action action, std::string_view topic) const {
    if (admin()) return true;
    return std::any_of(grants_.begin(), grants_.end(), [&](const meta::Grant& g) {
        return g.action == action &&
               std::any_of(g.patterns.begin(), g.patterns.end(),
                           [&](const std::string& p) { return pattern_matches(p, topic); });
    });
}

bool Principal::can_read(std::string_view topic, std::string_view owner) const {
    if (admin() || (!owner.empty() && owner == name_)) return true;
    return std::any_of(grants_.begin(), grants_.end(), [&](const meta::Grant& g) {
        return std::any_of(g.patterns.begin(), g.patterns.end(),
                           [&](const std::string& p) { return pattern_matches(p, topic); });
    });
}

bool Principal::can_manage(std::string_view owner) const {
    return admin() || (!owner.empty() && owner == name_);
}

bool Principal::can_delegate(const std::vector<meta::Grant>& grants) const {
    bool confers_admin = std::any_of(grants.begin(), grants.end(), [](const meta::Grant& g) {
        return g.action == meta::Action::admin;
    });
    if (confers_admin) return root();
    return admin();
}

}  // namespace narad::auth
