// The "limits" probe of `narad-compare`: what this machine allows, measured in the same run as
// the systems, so each figure can be read as a fraction of it. fdatasync rate: a loop of
// write(N bytes) + fdatasync appending to one file in the data directory, for a few seconds per
// size. Loopback TCP: one connection on 127.0.0.1 pushing 1 MiB buffers for ~2 s, the reader
// counting bytes. Each probe runs on the calling thread (plus one thread for the TCP reader).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace narad::compare {

struct SyncProbe {
    uint64_t write_bytes = 0;
    uint64_t syncs = 0;
    double seconds = 0;
    std::string error;  // empty when it ran

    double syncs_per_second() const { return seconds > 0 ? double(syncs) / seconds : 0; }
    double megabytes_per_second() const {
        return seconds > 0 ? double(syncs) * double(write_bytes) / seconds / 1e6 : 0;
    }
};

struct LoopbackProbe {
    uint64_t bytes = 0;
    double seconds = 0;
    std::string error;

    double megabytes_per_second() const { return seconds > 0 ? double(bytes) / seconds / 1e6 : 0; }
};

struct LimitsResult {
    std::string directory;  // where the sync probe wrote
    std::vector<SyncProbe> syncs;
    LoopbackProbe loopback;
};

// write + fdatasync of `write_bytes` in a loop for `seconds`, appending to a fresh file in
// `directory` (removed afterwards); the file wraps to its start after 1 GiB.
SyncProbe probe_fdatasync(const std::string& directory, uint64_t write_bytes, double seconds);
// One loopback TCP connection pushing 1 MiB writes for `seconds`.
LoopbackProbe probe_loopback(double seconds);

// The default set: fdatasync at 64 KiB and 256 KiB for `sync_seconds` each, loopback for
// `loopback_seconds`.
LimitsResult probe_limits(const std::string& directory, double sync_seconds,
                          double loopback_seconds);

}  // namespace narad::compare
