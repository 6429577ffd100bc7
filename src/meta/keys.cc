#include "meta/keys.h"

#include <charconv>

namespace narad::meta {

Keys::Keys(std::string cluster) : prefix_("/narad/" + cluster + "/") {}

std::string Keys::topic(std::string_view name) const { return topics_prefix() + std::string(name); }
std::string Keys::topics_prefix() const { return prefix_ + "topics/"; }

std::string Keys::assignment(std::string_view topic, PartitionId partition) const {
    char index[16];
    std::snprintf(index, sizeof index, "%05u", partition.value());
    return assignments_prefix(topic) + index;
}

std::string Keys::assignments_prefix(std::string_view topic) const {
    return prefix_ + "assign/" + std::string(topic) + "/";
}

std::string Keys::member(const NodeId& node) const { return prefix_ + "members/" + node.value(); }
std::string Keys::live(const NodeId& node) const { return prefix_ + "live/" + node.value(); }
std::string Keys::dead(const NodeId& node) const { return prefix_ + "dead/" + node.value(); }
std::string Keys::draining(const NodeId& node) const { return draining_prefix() + node.value(); }
std::string Keys::draining_prefix() const { return prefix_ + "draining/"; }
std::string Keys::user(std::string_view name) const {
    return prefix_ + "users/" + std::string(name);
}
std::string Keys::election() const { return prefix_ + "election"; }
std::string Keys::ready() const { return prefix_ + "ready"; }
std::string Keys::barrier() const { return prefix_ + "barrier"; }

std::string Keys::freeze(std::string_view topic, PartitionId partition) const {
    char index[16];
    std::snprintf(index, sizeof index, "%05u", partition.value());
    return prefix_ + "freeze/" + std::string(topic) + "/" + index;
}

Keys::Parsed Keys::parse(std::string_view key) const {
    Parsed parsed;
    if (!key.starts_with(prefix_)) return parsed;
    key.remove_prefix(prefix_.size());
    if (key == "ready") {
        parsed.domain = Parsed::Domain::ready;
        return parsed;
    }
    auto slash = key.find('/');
    if (slash == std::string_view::npos) return parsed;
    std::string_view domain = key.substr(0, slash);
    std::string_view rest = key.substr(slash + 1);
    if (rest.empty()) return parsed;
    if (domain == "topics" && rest.find('/') == std::string_view::npos) {
        parsed.domain = Parsed::Domain::topic;
        parsed.name = rest;
    } else if (domain == "members" && rest.find('/') == std::string_view::npos) {
        parsed.domain = Parsed::Domain::member;
        parsed.name = rest;
    } else if (domain == "users" && rest.find('/') == std::string_view::npos) {
        parsed.domain = Parsed::Domain::user;
        parsed.name = rest;
    } else if (domain == "live" && rest.find('/') == std::string_view::npos) {
        parsed.domain = Parsed::Domain::live;
        parsed.name = rest;
    } else if (domain == "dead" && rest.find('/') == std::string_view::npos) {
        parsed.domain = Parsed::Domain::dead;
        parsed.name = rest;
    } else if (domain == "assign") {
        auto cut = rest.rfind('/');
        if (cut == std::string_view::npos || cut == 0) return parsed;
        std::string_view index = rest.substr(cut + 1);
        uint32_t partition = 0;
        auto [end, error] = std::from_chars(index.data(), index.data() + index.size(), partition);
        if (error != std::errc() || end != index.data() + index.size() || index.size() != 5) {
            return parsed;
        }
        parsed.domain = Parsed::Domain::assignment;
        parsed.name = rest.substr(0, cut);
        parsed.partition = PartitionId(partition);
    }
    return parsed;
}

}  // namespace narad::meta
