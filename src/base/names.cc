#include "base/names.h"

#include <string>

namespace narad {
namespace {

bool allowed(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

bool matches(std::string_view name, size_t max_length) {
    if (name.empty() || name.size() > max_length) return false;
    for (char c : name) {
        if (!allowed(c)) return false;
    }
    return true;
}

}  // namespace

Status validate_topic_name(std::string_view name) {
    if (!matches(name, kMaxTopicNameLength) || name == "." || name == "..") {
        return Status(Errc::invalid_argument,
                      "invalid topic name: must match ^[A-Za-z0-9._-]{1,200}$ and not be . or ..");
    }
    return Status::ok();
}

Status validate_node_id(std::string_view name) {
    if (!matches(name, 255) || name == "." || name == "..") {
        return Status(Errc::invalid_argument,
                      "invalid node id \"" + std::string(name.substr(0, 64)) +
                          "\": must match ^[A-Za-z0-9._-]{1,255}$ and not be . or ..");
    }
    return Status::ok();
}

Status validate_user_name(std::string_view name) {
    if (!matches(name, 64)) {
        return Status(Errc::invalid_argument,
                      "invalid username: must match ^[A-Za-z0-9._-]{1,64}$");
    }
    return Status::ok();
}

}  // namespace narad
