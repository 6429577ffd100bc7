// Logging: one line per event through spdlog, in JSON or text, at the level from the config.
// Use the NARAD_LOG_* macros with fmt-style arguments. Thread-safe.
#pragma once

#include <spdlog/spdlog.h>

#include <string_view>

namespace narad::log {

enum class Format { json, text };

// Sets the process-wide logger: level ("debug", "info", "warn", "error") and format. Unknown levels
// are refused by the config loader before this is called.
void init(std::string_view level, Format format);
bool valid_level(std::string_view level);

}  // namespace narad::log

#define NARAD_LOG_DEBUG(...) SPDLOG_DEBUG(__VA_ARGS__)
#define NARAD_LOG_INFO(...) SPDLOG_INFO(__VA_ARGS__)
#define NARAD_LOG_WARN(...) SPDLOG_WARN(__VA_ARGS__)
#define NARAD_LOG_ERROR(...) SPDLOG_ERROR(__VA_ARGS__)
