#include "node/topic_backend.h"

#include <shared_mutex>

#include "base/log.h"

namespace narad::node {

TopicBackend::TopicBackend(io::FileSystem& fs, std::string data_directory, meta::MetaStore& store,
                           storage::LogManager& logs, storage::TopicGuards& guards,
                           queue::ConsumeService& consume)
    : fs_(fs),
      data_directory_(std::move(data_directory)),
      store_(store),
      logs_(logs),
      guards_(guards),
      consume_(consume) {}

Status TopicBackend::reclaim(const std::string& topic, const meta::MetaState& state) {
    std::string directory = logs_.topic_directory(topic);
    if (!fs_.exists(directory)) return Status::ok();
    const meta::Topic* record = state.find_topic(topic);
    auto marker = storage::read_incarnation(fs_, directory);
    if (record != nullptr) {
        if (marker.is_ok() && *marker == record->incarnation) return Status::ok();  // current
        if (!marker.is_ok() && marker.code() == Errc::not_found) {
            // No marker: either an empty directory left by a crash (safe to adopt), or data of
            // unknown origin, which is set aside for an operator rather than served or deleted.
            auto names = fs_.list_directory(directory);
            if (names.is_ok() && names->empty()) return Status::ok();
            std::string aside = io::join_path(data_directory_, ".moves/" + topic + ".orphan");
            NARAD_RETURN_IF_ERROR(fs_.create_directories(io::parent_path(aside)));
            (void)fs_.remove_all(aside);
            consume_.drop_topic(topic);
            NARAD_RETURN_IF_ERROR(fs_.rename(directory, aside));
            NARAD_LOG_ERROR(
                "topic directory {} holds data without an incarnation marker; set "
                "aside to {} for an operator to inspect",
                directory, aside);
            return fs_.sync_directory(io::parent_path(directory));
        }
    }
    // The topic is gone, or the directory holds a deleted incarnation: its data is not needed.
    consume_.drop_topic(topic);
    NARAD_RETURN_IF_ERROR(logs_.remove_topic(topic));
    NARAD_LOG_INFO("removed the local data of deleted topic {}", topic);
    return Status::ok();
}

Result<size_t> TopicBackend::sweep() {
    std::string topics = io::join_path(data_directory_, "topics");
    if (!fs_.exists(topics)) return size_t{0};
    NARAD_ASSIGN_OR_RETURN(auto names, fs_.list_directory(topics));
    meta::MetaSnapshot snapshot = store_.snapshot();
    size_t reclaimed = 0;
    for (const std::string& name : names) {
        auto guard = guards_.guard(name);
        WriterLock lock(*guard);
        bool existed = fs_.exists(logs_.topic_directory(name));
        NARAD_RETURN_IF_ERROR(reclaim(name, *snapshot));
        if (existed && !fs_.exists(logs_.topic_directory(name))) ++reclaimed;
    }
    return reclaimed;
}

Status TopicBackend::purge_if_deleted(std::string_view topic) {
    auto guard = guards_.guard(topic);
    WriterLock lock(*guard);
    meta::MetaSnapshot snapshot = store_.snapshot();
    if (snapshot->find_topic(topic) != nullptr) {
        // Recreated meanwhile: only a directory of the old incarnation goes.
        return reclaim(std::string(topic), *snapshot);
    }
    consume_.drop_topic(topic);
    return logs_.remove_topic(topic);
}

std::vector<std::string> topics_dropped(const meta::MetaState& before,
                                        const meta::MetaState& after) {
    std::vector<std::string> dropped;
    if (before.topics_version == after.topics_version) return dropped;
    for (const auto& [name, topic] : before.topics) {
        const meta::Topic* now = after.find_topic(name);
        if (now == nullptr || now->incarnation != topic.incarnation) dropped.push_back(name);
    }
    return dropped;
}

void DeletedTopicPurger::on_snapshot(const meta::MetaSnapshot& snapshot) {
    meta::MetaSnapshot before = std::exchange(seen_, snapshot);
    if (!before) return;
    for (const std::string& name : topics_dropped(*before, *snapshot)) {
        bool queued = pool_.post([this, name] {
            Status purged = purge_(name);
            if (!purged.is_ok()) {
                NARAD_LOG_WARN("purging deleted topic {} failed: {}", name, purged.to_string());
            }
        }) == ThreadPool::Posted::queued;
        if (!queued) NARAD_LOG_WARN("purge of deleted topic {} not queued", name);
    }
}

}  // namespace narad::node
