#include "node/power_cut.h"

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "base/log.h"
#include "io/fault_injection_fs.h"

namespace narad::node {

#ifdef NARAD_FAILPOINTS
namespace {

// Polls for the trigger file; when it appears, removes it (so the restart runs on), cuts the power.
[[noreturn]] void watch_for_power_cut(io::FaultInjectionFileSystem& fs, std::string trigger) {
    io::FileSystem& real = io::posix_file_system();
    while (!real.exists(trigger)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a test-only poll
    }
    (void)real.remove(trigger);
    NARAD_LOG_WARN("power cut (test): dropping every unsynced write, then SIGKILL");
    Status dropped = fs.crash();
    if (!dropped.is_ok()) NARAD_LOG_ERROR("power cut (test): {}", dropped.message());
    NARAD_LOG_WARN("power cut (test): {} unsynced bytes dropped", fs.dropped_bytes());
    spdlog::default_logger()->flush();
    ::raise(SIGKILL);
    std::abort();
}

}  // namespace
#endif

io::FileSystem& node_file_system(const std::string& data_directory) {
#ifdef NARAD_FAILPOINTS
    const char* trigger = std::getenv("NARAD_TEST_POWER_CUT");
    if (trigger != nullptr && *trigger != '\0') {
        // One per process, never destroyed: threads may still be blocked in it at the cut.
        static auto* fs = new io::FaultInjectionFileSystem();
        static std::once_flag watcher;
        std::call_once(watcher, [&] {
            std::thread(watch_for_power_cut, std::ref(*fs), io::join_path(data_directory, trigger))
                .detach();
        });
        return *fs;
    }
#else
    (void)data_directory;
#endif
    return io::posix_file_system();
}

}  // namespace narad::node
