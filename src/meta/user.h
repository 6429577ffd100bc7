// The metastore's user records (security): a user's name, its argon2id password hash and its
// grants. Plain values, shared through MetaState like topics. What a grant allows is decided in
// auth/ (access.h); this file only holds and names the parts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace narad::meta {

// What a grant allows on the topics its pattern matches (admin: everything, on every topic).
enum class Action { produce, consume, create, admin };
std::string_view action_name(Action action);
std::optional<Action> parse_action(std::string_view name);

// One grant: an action on topic patterns, each an exact topic name, a prefix ending in `*`, or
// `*`. An admin grant has no patterns: it is global.
struct Grant {
    Action action = Action::consume;
    std::vector<std::string> patterns;
    bool operator==(const Grant&) const = default;
};

struct User {
    std::string name;
    std::string password_hash;  // crypto_pwhash_str's argon2id string; never leaves the node
    std::vector<Grant> grants;
    bool root = false;          // the seeded `admin`: every right, grants fixed, never deleted
    int64_t created_at_ms = 0;  // Unix milliseconds
    int64_t updated_at_ms = 0;
    std::string created_by;  // the user who created it (empty for the seeded root)
};

// The root user every secured cluster is seeded with; it cannot be deleted or lose admin.
inline constexpr std::string_view kRootUser = "admin";

}  // namespace narad::meta
