// The request-and-print shapes every admin command uses, as the Go CLI's httpClient helpers:
// send a JSON body (json.Marshal form: compact, keys sorted) or none, turn 4xx/5xx into errors,
// and print the answer pretty (print_response_body) or not at all. Main thread only.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cli/api.h"

namespace narad::cli {

// Compact JSON with sorted keys; invalid UTF-8 becomes U+FFFD rather than an exception.
std::string dump_json(const nlohmann::json& value);

// Sends `body` (if any) as application/json; errors per `send`.
Result<net::HttpResponse> send_json(Api& api, std::string_view method, std::string_view target,
                                    const std::optional<nlohmann::json>& body = std::nullopt);

// Sends and pretty-prints the answer (nothing for 204 or an empty body).
Status send_and_print(Api& api, std::ostream& out, std::string_view method, std::string_view target,
                      const std::optional<nlohmann::json>& body = std::nullopt);

// Sends and prints nothing.
Status send_silent(Api& api, std::string_view method, std::string_view target,
                   const std::optional<nlohmann::json>& body = std::nullopt);

// Sends a JSON body already encoded (e.g. holding a client's document verbatim) and
// pretty-prints the answer.
Status send_text_and_print(Api& api, std::ostream& out, std::string_view method,
                           std::string_view target, std::string body);

// `body` compact, with `"key":<raw>` added as its last member: `raw` is JSON text sent exactly
// as the user wrote it (a schema's numbers and key order survive).
std::string with_raw_member(const nlohmann::json& body, std::string_view key, std::string_view raw);

// "/v1/topics/<escaped name>".
std::string topic_path(std::string_view topic);

}  // namespace narad::cli
