#include "meta/meta_store.h"

namespace narad::meta {

Result<Topic> MetaStore::create_topic_on(Topic topic, const NodeId& owner) {
    std::vector<NodeId> owners(topic.partitions, owner);
    return create_topic(std::move(topic), std::move(owners));
}

Result<Topic> MetaStore::update_topic_on(Topic topic, const NodeId& owner) {
    MetaSnapshot view = snapshot();
    const Topic* existing = view->find_topic(topic.name);
    uint32_t added = existing != nullptr && topic.partitions > existing->partitions
                         ? topic.partitions - existing->partitions
                         : 0;
    return update_topic(std::move(topic), std::vector<NodeId>(added, owner));
}

}  // namespace narad::meta
