#include "base/log.h"

#include <spdlog/sinks/stdout_sinks.h>

namespace narad::log {

bool valid_level(std::string_view level) {
    return level == "debug" || level == "info" || level == "warn" || level == "error";
}

void init(std::string_view level, Format format) {
    auto logger = spdlog::stderr_logger_mt("narad");
    spdlog::set_default_logger(logger);
    if (format == Format::json) {
        // Messages are written by our own code; quotes inside them are escaped by the callers that
        // log user-supplied text (names are validated, so they carry none).
        spdlog::set_pattern(R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","msg":"%v"})",
                            spdlog::pattern_time_type::utc);
    } else {
        spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%-5l%$ %v", spdlog::pattern_time_type::utc);
    }
    spdlog::level::level_enum parsed = spdlog::level::info;
    if (level == "debug") parsed = spdlog::level::debug;
    if (level == "warn") parsed = spdlog::level::warn;
    if (level == "error") parsed = spdlog::level::err;
    spdlog::set_level(parsed);
    spdlog::flush_on(spdlog::level::warn);
}

}  // namespace narad::log
