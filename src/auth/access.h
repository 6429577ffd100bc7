// Who may do what (Narad's access model): the checks on user names, passwords and grants, and the
// decisions on a caller's grants. A caller is a Principal: the user record a request authenticated
// as, or everything allowed when security is off. Pure functions, any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "meta/user.h"

namespace narad::auth {

inline constexpr size_t kMaxUsernameBytes = 64;
inline constexpr size_t kMaxPasswordBytes = 72;
inline constexpr size_t kMaxPatternBytes = 255;

// 400 texts as Narad's; ok when valid.
Status validate_username(std::string_view name);
Status validate_password(std::string_view password);
Status validate_grants(const std::vector<meta::Grant>& grants);

// A trailing `*` matches by prefix; anything else is the exact name.
bool pattern_matches(std::string_view pattern, std::string_view topic);

class Principal {
  public:
    // Security off: no identity, every check passes.
    static Principal anyone();
    static Principal of(const meta::User& user);

    bool security_off() const { return security_off_; }
    // The user's name; empty with security off.
    const std::string& name() const { return name_; }
    bool root() const { return security_off_ || root_; }
    bool admin() const;
    // A grant of `action` matches `topic` (or the caller is an admin).
    bool allowed(meta::Action action, std::string_view topic) const;
    // Any grant matches `topic`, or the caller owns it, or is an admin: it may read the topic.
    bool can_read(std::string_view topic, std::string_view owner) const;
    // The owner or an admin may change and delete a topic. A topic without an owner (created
    // with security off) is an admin's alone.
    bool can_manage(std::string_view owner) const;
    // Only root confers admin; an admin confers any other grant.
    bool can_delegate(const std::vector<meta::Grant>& grants) const;

  private:
    bool security_off_ = false;
    bool root_ = false;
    std::string name_;
    std::vector<meta::Grant> grants_;
};

}  // namespace narad::auth
