// The real Api: requests over one keep-alive net::HttpClient to the resolved server, with HTTP
// Basic auth when a user is set and the Go CLI's 60 s timeout. One instance per thread.
#pragma once

#include <memory>

#include "base/status.h"
#include "cli/api.h"
#include "cli/context_store.h"
#include "net/http_client.h"

namespace narad::cli {

inline constexpr Millis kRequestTimeout{60'000};

// Client options for a resolved connection (host, port, auth, timeouts).
Result<net::ClientOptions> client_options(const CliContext& connection);

// An Api for a resolved connection; fails only on an unusable server URL.
Result<std::unique_ptr<Api>> make_http_api(const CliContext& connection);

}  // namespace narad::cli
