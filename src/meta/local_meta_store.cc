#include "meta/local_meta_store.h"

#include "base/assert.h"
#include "base/log.h"
#include "base/mutex.h"
#include "meta/codec.h"

namespace narad::meta {
namespace {
constexpr const char* kStateFile = "state";
}

LocalMetaStore::LocalMetaStore(io::FileSystem* fs, std::string path)
    : fs_(fs), path_(std::move(path)), snapshot_(std::make_shared<MetaState>()) {}

Result<std::unique_ptr<LocalMetaStore>> LocalMetaStore::open(io::FileSystem& fs,
                                                             std::string directory) {
    NARAD_RETURN_IF_ERROR(fs.create_directories(directory));
    std::string path = io::join_path(directory, kStateFile);
    std::unique_ptr<LocalMetaStore> store(new LocalMetaStore(&fs, path));
    auto contents = io::read_file(fs, path);
    if (contents.is_ok()) {
        NARAD_ASSIGN_OR_RETURN(MetaState state, decode_state(*contents));
        MutexLock lock(store->snapshot_mutex_);
        store->snapshot_ = std::make_shared<const MetaState>(std::move(state));
    } else if (contents.code() != Errc::not_found) {
        return contents.status().with_context("reading the metastore state");
    }
    return store;
}

std::unique_ptr<LocalMetaStore> LocalMetaStore::in_memory() {
    return std::unique_ptr<LocalMetaStore>(new LocalMetaStore(nullptr, ""));
}

MetaSnapshot LocalMetaStore::snapshot() const {
    MutexLock lock(snapshot_mutex_);
    return snapshot_;
}

Status LocalMetaStore::commit(std::shared_ptr<MetaState> next) {
    next->revision = snapshot()->revision + 1;
    if (fs_ != nullptr) {
        NARAD_RETURN_IF_ERROR(io::write_file_atomically(*fs_, path_, encode_state(*next))
                                  .with_context("writing the metastore state"));
    }
    MetaSnapshot published = std::move(next);
    {
        MutexLock lock(snapshot_mutex_);
        snapshot_ = published;
    }
    for (auto& [id, watcher] : watchers_) watcher(published);
    return Status::ok();
}

Result<Topic> LocalMetaStore::create_topic(Topic topic, std::vector<NodeId> owners) {
    NARAD_ASSERT(owners.size() == topic.partitions, "one owner per partition");
    MutexLock lock(write_mutex_);
    MetaSnapshot current = snapshot();
    if (current->find_topic(topic.name) != nullptr) {
        return Status(Errc::already_exists, "topic '" + topic.name + "' already exists");
    }
    auto next = std::make_shared<MetaState>(*current);
    for (uint32_t p = 0; p < topic.partitions; ++p) {
        next->assignments[PartitionKey{topic.name, PartitionId(p)}] =
            Assignment{std::move(owners[p]), {}};
    }
    next->topics[topic.name] = topic;
    next->topics_version = current->topics_version + 1;
    next->assignments_version = current->assignments_version + 1;
    NARAD_RETURN_IF_ERROR(commit(std::move(next)));
    return topic;
}

Result<Topic> LocalMetaStore::update_topic(Topic topic, std::vector<NodeId> added_owners) {
    MutexLock lock(write_mutex_);
    MetaSnapshot current = snapshot();
    const Topic* existing = current->find_topic(topic.name);
    if (existing == nullptr || existing->incarnation != topic.incarnation) {
        return Status(Errc::not_found, "topic '" + topic.name + "' not found");
    }
    NARAD_ASSERT(topic.partitions >= existing->partitions, "partitions only grow");
    NARAD_ASSERT(added_owners.size() == topic.partitions - existing->partitions,
                 "one owner per new partition");
    auto next = std::make_shared<MetaState>(*current);
    for (uint32_t p = existing->partitions; p < topic.partitions; ++p) {
        next->assignments[PartitionKey{topic.name, PartitionId(p)}] =
            Assignment{std::move(added_owners[p - existing->partitions]), {}};
    }
    if (topic.partitions != existing->partitions) {
        next->assignments_version = current->assignments_version + 1;
    }
    next->topics[topic.name] = topic;
    next->topics_version = current->topics_version + 1;
    NARAD_RETURN_IF_ERROR(commit(std::move(next)));
    return topic;
}

Status LocalMetaStore::delete_topic(std::string_view name) {
    MutexLock lock(write_mutex_);
    MetaSnapshot current = snapshot();
    if (current->find_topic(name) == nullptr) {
        return Status(Errc::not_found, "topic '" + std::string(name) + "' not found");
    }
    auto next = std::make_shared<MetaState>(*current);
    apply_topic_delete(*next, name);
    return commit(std::move(next));
}

Result<std::vector<Topic>> LocalMetaStore::change_topics(const std::vector<std::string>& names,
                                                         const TopicsChange& change) {
    MutexLock lock(write_mutex_);
    MetaSnapshot current = snapshot();
    auto next = std::make_shared<MetaState>(*current);
    NARAD_ASSIGN_OR_RETURN(std::vector<Topic> stored,
                           apply_topic_change(*current, *next, names, change));
    if (!stored.empty()) NARAD_RETURN_IF_ERROR(commit(std::move(next)));
    return stored;
}

uint64_t LocalMetaStore::watch(std::function<void(const MetaSnapshot&)> watcher) {
    MutexLock lock(write_mutex_);
    uint64_t id = next_watch_id_++;
    watchers_[id] = std::move(watcher);
    return id;
}

void LocalMetaStore::unwatch(uint64_t id) {
    MutexLock lock(write_mutex_);
    watchers_.erase(id);
}

}  // namespace narad::meta
