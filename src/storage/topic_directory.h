// The topic directory's incarnation marker: <data>/topics/<topic>/incarnation names the incarnation
// whose data the directory holds, so a node never serves a deleted topic's records under a
// recreated topic of the same name. Written atomically before any partition directory is created in
// it. Pure functions over the FileSystem seam; callers serialize per topic.
#pragma once

#include <string>

#include "base/ids.h"
#include "base/mutex.h"
#include "io/file_system.h"

namespace narad::storage {

inline constexpr const char* kIncarnationFile = "incarnation";

// The incarnation named by the marker in `topic_directory`; not_found without a marker (or without
// the directory); corrupt when the marker fails its checksum.
Result<IncarnationId> read_incarnation(io::FileSystem& fs, const std::string& topic_directory);

// Creates the directory (and its parents) and writes the marker, durably. Refuses with
// Errc::conflict if a marker names another incarnation, or if the directory holds data but no
// marker (its origin is unknown).
Status prepare_topic_directory(io::FileSystem& fs, const std::string& topic_directory,
                               const IncarnationId& incarnation);

}  // namespace narad::storage

#include <map>
#include <memory>

namespace narad::storage {

// TopicGuards: one reader/writer lock per topic name ("the topic's open guard"). Work that reads or
// writes a topic's data (commits, opening consumer state) holds it shared and re-checks the
// metastore under it; purging a deleted topic's directory holds it exclusively. So a commit that
// passed its check can never land in a directory being purged, nor recreate one after it.
class TopicGuards {
  public:
    std::shared_ptr<SharedMutex> guard(std::string_view topic);

  private:
    Mutex mutex_;
    std::map<std::string, std::shared_ptr<SharedMutex>, std::less<>> guards_ GUARDED_BY(mutex_);
};

}  // namespace narad::storage
