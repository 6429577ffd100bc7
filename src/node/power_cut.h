// The file system a node runs on. In test builds (NARAD_FAILPOINTS) a node started with
// NARAD_TEST_POWER_CUT=<file name> runs on an io::FaultInjectionFileSystem instead, and ends the
// way a power cut would the moment that file appears in its data directory: every write since
// the last fsync is dropped (and every rename or create no directory sync covered is undone),
// then the process is killed with SIGKILL. The chaos suite's power_cut nemesis
// (docs/reliability.md) uses it. Release builds always answer the real file system.
#pragma once

#include <string>

#include "io/file_system.h"

namespace narad::node {

io::FileSystem& node_file_system(const std::string& data_directory);

}  // namespace narad::node
