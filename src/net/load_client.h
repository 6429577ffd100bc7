// LoadClient: an asynchronous HTTP/1.1 client for `narad bench`: `connections` keep-alive
// connections on its own event loops, each running requests back to back from a generator until
// it returns nothing. Connections are spread over `threads` loops (an io_context and a thread
// each, so a connection needs no strand); with threads > 1 the generator and the on_response
// callbacks run on several threads at once and must be thread-safe. A transport error
// (Errc::peer_error, or Errc::timeout after connect_timeout / request_timeout) goes to that
// request's on_response, and the connection reconnects for its next request. A failed request is
// never resent (Resend::never): a benchmark counts every failure. Each connection is a
// ClientConnection (net/client_connection.h), as HttpClient's is.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "net/http.h"
#include "net/http_client.h"

namespace narad::net {

// One request of a load run, as produced by the generator.
struct LoadRequest {
    std::string method;
    std::string target;
    std::string body;
    std::string content_type = "application/octet-stream";
    // Called with the response (or the transport error) on a client thread.
    std::function<void(const Result<HttpResponse>&)> on_response;
};

struct LoadOptions {
    // Where and how to connect (https with client.tls, as HttpClient); on_connect is not run.
    ClientOptions client;
    uint32_t connections = 8;
    uint32_t threads = 1;
};

class LoadClient {
  public:
    // Called by a connection when it is ready for its next request; return nullopt to close it.
    using Generator = std::function<std::optional<LoadRequest>(uint32_t connection)>;
    explicit LoadClient(LoadOptions options);
    ~LoadClient();
    // Runs until every connection's generator returned nullopt. Fails if no connection could be
    // made.
    Status run(Generator generator);

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace narad::net
