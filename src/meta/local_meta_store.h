// LocalMetaStore: the single-node MetaStore. The whole state lives in one file, <data>/meta/state
// (docs/formats/metastore.md), rewritten atomically on every change before the change is published,
// so a crash never loses an acknowledged topic change nor leaves a half-written state. With no
// file system (tests), it keeps the state in memory only.
//
// Writes are serialized by a mutex; snapshots are published with an atomic swap. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "io/file_system.h"
#include "meta/meta_store.h"

namespace narad::meta {

class LocalMetaStore final : public MetaStore {
  public:
    // Loads the state from `directory` (created if missing). A state file that fails its checksum
    // is an error: the node refuses to start rather than forget its topics.
    static Result<std::unique_ptr<LocalMetaStore>> open(io::FileSystem& fs, std::string directory);
    // A store that persists nothing (for tests).
    static std::unique_ptr<LocalMetaStore> in_memory();

    MetaSnapshot snapshot() const override;
    Result<Topic> create_topic(Topic topic, std::vector<NodeId> owners) override;
    Result<Topic> update_topic(Topic topic, std::vector<NodeId> added_owners) override;
    Status delete_topic(std::string_view name) override;
    Result<std::vector<Topic>> change_topics(const std::vector<std::string>& names,
                                             const TopicsChange& change) override;
    uint64_t watch(std::function<void(const MetaSnapshot&)> watcher) override;
    void unwatch(uint64_t id) override;

  private:
    LocalMetaStore(io::FileSystem* fs, std::string path);
    // Persists `next` and publishes it.
    Status commit(std::shared_ptr<MetaState> next) REQUIRES(write_mutex_);

    io::FileSystem* fs_;  // null: in memory
    std::string path_;
    Mutex write_mutex_;  // serializes writers and watcher calls
    mutable Mutex snapshot_mutex_;
    MetaSnapshot snapshot_ GUARDED_BY(snapshot_mutex_);
    std::map<uint64_t, std::function<void(const MetaSnapshot&)>> watchers_ GUARDED_BY(write_mutex_);
    uint64_t next_watch_id_ GUARDED_BY(write_mutex_) = 1;
};

}  // namespace narad::meta
