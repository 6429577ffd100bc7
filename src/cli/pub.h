// `narad pub` logic that needs no server: where the body comes from (--file, else the second
// argument unless it is "-", else all of stdin) and the produce target (`key` and `partition` in
// url.Values.Encode order). Pure, except read_pub_body which reads the file or stream.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "base/status.h"

namespace narad::cli {

enum class BodySource { file, argument, standard_input };

BodySource pub_body_source(const std::vector<std::string>& args, const std::string& file);

// The message bytes from the chosen source. File errors read like Go's (`open <path>: <why>`).
Result<std::string> read_pub_body(const std::vector<std::string>& args, const std::string& file,
                                  std::istream& in);

// /v1/topics/<t>/produce[?key=<k>&partition=<p>]: key only when non-empty, partition only >= 0.
std::string pub_target(const std::string& topic, const std::string& key, int64_t partition);

// Largest body `pub` reads (the server refuses more than 1 MiB anyway; this bounds memory).
inline constexpr size_t kMaxPubBodyBytes = 64 * 1024 * 1024;

}  // namespace narad::cli
