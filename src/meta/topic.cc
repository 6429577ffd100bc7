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

const Topic* MetaState::find_topic(std::string_view name) const {
    auto it = topics.find(name);
    return it == topics.end() ? nullptr : &it->second;
}

const Assignment* MetaState::find_assignment(std::string_view topic, PartitionId partition) const {
    auto it = assignments.find(PartitionKey{std::string(topic), partition});
    return it == assignments.end() ? nullptr : &it->second;
}

}  // namespace narad::meta
