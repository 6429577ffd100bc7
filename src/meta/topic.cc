#include "meta/topic.h"

namespace narad::meta {

std::string_view role_name(TopicRole role) {
    switch (role) {
        case TopicRole::standalone:
            return "standalone";
        case TopicRole::parent:
            return "parent";
        case TopicRole::child:
            return "child";
    }
    return "standalone";
}

const std::string& Topic::schema() const {
    static const std::string kNone;
    return schema_versions.empty() ? kNone : schema_versions.back();
}

size_t Topic::schema_history_bytes() const {
    size_t bytes = 0;
    for (const std::string& version : schema_versions) bytes += version.size();
    return bytes;
}

void link_child(Topic& parent, Topic& child, std::string attach_epoch, int64_t delay_ms) {
    parent.role = TopicRole::parent;
    parent.children.push_back(child.name);
    child.role = TopicRole::child;
    child.parent = parent.name;
    child.attach_epoch = std::move(attach_epoch);
    child.fanout_delay_ms = delay_ms;
}

void unlink_child(Topic& parent, Topic& child) {
    std::erase(parent.children, child.name);
    if (parent.children.empty()) parent.role = TopicRole::standalone;
    child.role = TopicRole::standalone;
    child.parent.clear();
    child.attach_epoch.clear();
    child.fanout_delay_ms = 0;
}

std::vector<std::string> linked_topics(const Topic& topic) {
    if (topic.role == TopicRole::parent) return topic.children;
    if (topic.role == TopicRole::child && !topic.parent.empty()) return {topic.parent};
    return {};
}

void unlink_deleted(const Topic& deleted, Topic& other) {
    if (deleted.role == TopicRole::parent && other.parent == deleted.name) {
        Topic parent = deleted;
        unlink_child(parent, other);
    } else if (deleted.role == TopicRole::child) {
        std::erase(other.children, deleted.name);
        if (other.children.empty() && other.role == TopicRole::parent) {
            other.role = TopicRole::standalone;
        }
    }
}

std::string_view etcd_role_name(EtcdRole role) {
    switch (role) {
        case EtcdRole::none:
            return "none";
        case EtcdRole::learner:
            return "learner";
        case EtcdRole::voter:
            return "voter";
    }
    return "none";
}

const MemberInfo* MetaState::find_member(const NodeId& node) const {
    auto it = members.find(node);
    return it == members.end() ? nullptr : &it->second;
}

const User* MetaState::find_user(std::string_view name) const {
    auto it = users.find(name);
    return it == users.end() ? nullptr : &it->second;
}

std::string_view action_name(Action action) {
    switch (action) {
        case Action::produce:
            return "produce";
        case Action::consume:
            return "consume";
        case Action::create:
            return "create";
        case Action::admin:
            return "admin";
    }
    return "consume";
}

std::optional<Action> parse_action(std::string_view name) {
    for (Action action : {Action::produce, Action::consume, Action::create, Action::admin}) {
        if (action_name(action) == name) return action;
    }
    return std::nullopt;
}

bool MetaState::is_dead(const NodeId& node, MonoTime now, Millis dead_after) const {
    if (live.count(node) > 0) return false;
    auto it = down_since.find(node);
    return it != down_since.end() && now - it->second >= dead_after;
}

const Topic* MetaState::find_topic(std::string_view name) const {
    auto it = topics.find(name);
    return it == topics.end() ? nullptr : &it->second;
}

const Assignment* MetaState::find_assignment(std::string_view topic, PartitionId partition) const {
    auto it = assignments.find(PartitionKey{std::string(topic), partition});
    return it == assignments.end() ? nullptr : &it->second;
}

}  // namespace narad::meta
