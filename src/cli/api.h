// The CLI's view of a Narad node: one call = one HTTP request. Commands talk to an `Api` so tests
// can answer with a fake; the real one (http_api.h) rides on net::HttpClient. `send` applies the
// Go CLI's error rules: a transport failure reads `transport: <err>` and any 4xx/5xx becomes
// `http <code>: <msg>`. An Api is used by one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cli/context_store.h"
#include "net/http.h"

namespace narad::cli {

class Api {
  public:
    virtual ~Api() = default;
    // One request; an empty `content_type` sends none. Transport failures are errors whose
    // message already reads `transport: ...`; every HTTP status is a successful Result.
    virtual Result<net::HttpResponse> call(std::string_view method, std::string_view target,
                                           std::string_view body = {},
                                           std::string_view content_type = {}) = 0;
};

// Go's formatErrorBody: the `error` field of a JSON body, else the trimmed body, else
// `<empty body>`.
std::string format_error_body(std::string_view body);

// A request whose 4xx/5xx answers become errors `http <code>: <msg>`.
Result<net::HttpResponse> send(Api& api, std::string_view method, std::string_view target,
                               std::string_view body = {}, std::string_view content_type = {});

// True if `status` is the error `send` makes for HTTP status `code`.
bool is_http_error(const Status& status, int code);

// The Errc a CLI error for HTTP status `code` carries (for exit paths and tests; the message is
// what users see).
Errc errc_for_http_status(int code);

// Where `--server` points, as a URL like Go's client takes.
struct ServerAddress {
    bool https = false;
    std::string host;
    uint16_t port = 80;     // 443 for https unless given
    std::string base_path;  // prefix of every request target, without a trailing '/'
};

// Parses `http[s]://host[:port][/prefix]` (trailing '/' trimmed, as Go's client does). A bare
// `host:port` is taken as http. An https server is verified against the system's authorities,
// which SSL_CERT_FILE and SSL_CERT_DIR replace, as for Go's client.
Result<ServerAddress> parse_server_url(std::string_view server);

// The warning to print before Basic credentials go over plain http:// to a host that is not this
// machine; empty when there is nothing to warn about (or the URL is refused anyway).
std::string plaintext_credentials_warning(const CliContext& connection);

}  // namespace narad::cli
