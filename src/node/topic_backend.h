// TopicBackend: reconciles this node's topic directories with the metastore. At start-up (before
// the node accepts topic creates) it removes the directory of every topic the metastore no longer
// knows, or that holds another incarnation; afterwards it purges a topic's local state (consumer
// state, open logs, files) as soon as the metastore drops it, and sets aside a directory whose
// origin it cannot tell (data without an incarnation marker) rather than delete it.
// Thread-safe; purges block on disk.
#pragma once

#include <string>

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

}  // namespace narad::node
