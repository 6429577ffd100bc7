// TopicBackend: reconciles this node's topic directories with the metastore. At start-up (before
// the node accepts topic creates) it removes the directory of every topic the metastore no longer
// knows, or that holds another incarnation; afterwards it purges a topic's local state (consumer
// state, open logs, files) as soon as the metastore drops it, and sets aside a directory whose
// origin it cannot tell (data without an incarnation marker) rather than delete it.
// DeletedTopicPurger follows the metastore so that a delete made through another node (or a
// delete and recreate) reaches this node's data too.
// Thread-safe; purges block on disk.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "io/file_system.h"
#include "meta/meta_store.h"
#include "queue/consume_service.h"
#include "storage/log_manager.h"
#include "storage/topic_directory.h"

namespace narad::node {

class TopicBackend {
  public:
    TopicBackend(io::FileSystem& fs, std::string data_directory, meta::MetaStore& store,
                 storage::LogManager& logs, storage::TopicGuards& guards,
                 queue::ConsumeService& consume);

    // The start-up sweep; returns how many directories it removed or set aside.
    Result<size_t> sweep();
    // Purges the topic's local data if the metastore no longer has it (idempotent).
    Status purge_if_deleted(std::string_view topic);

  private:
    // Removes or sets aside one topic directory. Caller holds the topic's guard exclusively.
    Status reclaim(const std::string& topic, const meta::MetaState& state);

    io::FileSystem& fs_;
    std::string data_directory_;
    meta::MetaStore& store_;
    storage::LogManager& logs_;
    storage::TopicGuards& guards_;
    queue::ConsumeService& consume_;
};

// The topics whose local data a change of the metastore from `before` to `after` leaves behind:
// those deleted, and those deleted and recreated (another incarnation under the same name).
std::vector<std::string> topics_dropped(const meta::MetaState& before,
                                        const meta::MetaState& after);

// Another node's replica of a delete (or of a delete and recreate) reaching this node: this
// node's data of the old incarnation goes. on_snapshot() is called by the metastore watcher, one
// snapshot at a time; each purge runs on `pool`, since it blocks on disk. A purge the pool refuses
// is logged and left to the next start-up sweep.
class DeletedTopicPurger {
  public:
    using Purge = std::function<Status(std::string_view topic)>;  // TopicBackend::purge_if_deleted
    // `seen`: the snapshot the node's data was last reconciled with (the start-up sweep's); a
    // topic it holds that a later snapshot drops is purged.
    DeletedTopicPurger(Purge purge, ThreadPool& pool, meta::MetaSnapshot seen)
        : purge_(std::move(purge)), pool_(pool), seen_(std::move(seen)) {}

    void on_snapshot(const meta::MetaSnapshot& snapshot);

  private:
    Purge purge_;
    ThreadPool& pool_;
    meta::MetaSnapshot seen_;  // the last snapshot followed (on the watcher's thread only)
};

}  // namespace narad::node
