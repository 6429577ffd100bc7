// Quarantined copies: partition data a node sets aside instead of deleting, because it may hold
// the only instance of some records (docs/operations.md, "Quarantined copies"). Three kinds, each
// renamed in place and never removed automatically except a topic incarnation the metastore
// confirmed gone:
//   partition          <data>/topics/<topic>/p<NNNNN>.quarantine[-<ms>]   (sweep, install)
//   staging            <data>/.moves/<topic>-<N>.quarantine[-<ms>]        (a move that ended)
//   topic_incarnation  <data>/topics/<topic>.stale-<incarnation>[-<ms>]   (a deleted incarnation)
// Also the inventory behind narad_quarantined_copies and narad_quarantined_bytes, and the test of
// whether a directory holds records retention has not expired. Pure functions over the FileSystem
// seam (and the metrics registry); callers hold the topic's guard while they rename.
#pragma once

#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "io/file_system.h"
#include "storage/log_manager.h"

namespace narad::move {

inline constexpr const char* kQuarantineSuffix = ".quarantine";
inline constexpr const char* kStaleIncarnationInfix = ".stale-";

// Renames `path` to `wanted`, or to `wanted-<wall ms>` when that name is taken, and syncs the
// directories involved. Returns where it went.
Result<std::string> set_aside(io::FileSystem& fs, Clock& clock, const std::string& path,
                              const std::string& wanted);

// Whether `directory` holds a segment with record bytes whose age is within `retention` (0: kept
// forever). A missing directory holds none.
bool holds_unexpired_records(io::FileSystem& fs, Clock& clock, const std::string& directory,
                             Millis retention);

// Closes every open partition log of `topic` found in its directory (before the directory is
// renamed away).
Status close_topic_partitions(io::FileSystem& fs, storage::LogManager& logs,
                              const std::string& topic);

// Bytes of the files in `directory` and one level below.
uint64_t directory_bytes(io::FileSystem& fs, const std::string& directory);

struct QuarantinedCopy {
    std::string kind;  // partition | staging | topic_incarnation
    std::string topic;
    int64_t partition = -1;  // -1: the whole topic directory
    std::string directory;
    uint64_t bytes = 0;
    WallTime modified;
};

// Every set-aside copy under the data directory `data_dir`.
std::vector<QuarantinedCopy> list_quarantined(io::FileSystem& fs, const std::string& data_dir);

// Sets narad_quarantined_copies and narad_quarantined_bytes from an inventory.
void publish_quarantine_metrics(const std::vector<QuarantinedCopy>& copies);

}  // namespace narad::move
