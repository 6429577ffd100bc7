// HttpClient: a small blocking HTTP/1.1 client over one keep-alive connection (reconnecting when
// the server closed it), for the CLI, the test harnesses and node-to-node calls made from worker
// threads. Every call has a timeout. Not thread-safe: use one client per thread.
//
// LoadClient: an asynchronous client for `narad bench`: `connections` keep-alive connections on its
// own event loops, each running requests back to back from a generator until it returns nothing.
// Connections are spread over `threads` loops (an io_context and a thread each, so a connection
// needs no strand); with threads > 1 the generator and the on_response callbacks run on several
// threads at once and must be thread-safe. A transport error (Errc::peer_error, or Errc::timeout
// after connect_timeout / request_timeout) goes to that request's on_response, and the connection
// reconnects for its next request.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "net/http.h"
#include "net/tls.h"

namespace narad::net {

// Sends one request on the connection just made, never resent: what a connection handshake uses.
using ConnectionExchange = std::function<Result<HttpResponse>(
    std::string_view method, std::string_view target, const Headers& headers)>;

struct ClientOptions {
    std::string host = "127.0.0.1";
    uint16_t port = 7942;
    Millis connect_timeout{5'000};
    Millis request_timeout{30'000};
    std::string basic_auth;  // "user:password", empty for none
    // Sent as X-Narad-Client, as Narad's CLI and Go SDK do (batch consume requires one, and it
    // lets a body-less or non-JSON POST past the content-type guard); empty sends none.
    std::string client_name = "narad-cli";
    // https: TLS on every connection, verified as ClientTls says. nullopt: plain http.
    std::optional<ClientTls> tls;
    // With `tls`: a context loaded already (make_client_tls), used instead of loading tls->files.
    std::shared_ptr<TlsContext> tls_context;
    // A larger response body fails the request (Errc::peer_error).
    uint64_t response_body_limit_bytes = uint64_t{1} << 30;
    // Runs on every new connection before the first request goes out on it (the cluster port's
    // proof of the secret). An error closes the connection and fails the request, which was then
    // not sent (last_request_maybe_delivered() is false).
    std::function<Status(const ConnectionExchange&)> on_connect;
};

class HttpClient {
  public:
    // A TLS file that does not load fails every request with the reason (Errc::invalid_argument).
    explicit HttpClient(ClientOptions options);
    ~HttpClient();
    HttpClient(HttpClient&&) noexcept;
    HttpClient& operator=(HttpClient&&) noexcept;

    // Sends one request and waits for the whole response. A transport failure (refused, reset,
    // timeout) is Errc::peer_error or Errc::timeout, with a message naming host:port; any HTTP
    // status is a successful Result. On a reused connection, a request that failed before any
    // byte of a response arrived (not by timeout) is sent once more on a new connection, so a
    // request may reach the server twice if the server died after reading it (see http_client.cc).
    Result<HttpResponse> request(std::string_view method, std::string_view target,
                                 std::string_view body = {},
                                 std::string_view content_type = "application/json",
                                 const Headers& headers = {});

    // Whether the last request() may have reached the server: false when it failed before any
    // byte of it was handed to a connection (resolve or connect failed), so it certainly was not
    // applied; true once sending began, whatever happened next. Node-to-node callers use it to
    // tell "peer unreachable" from "outcome unknown".
    bool last_request_maybe_delivered() const;
    // Changes the timeouts for the following requests (a pooled client serves calls with
    // different deadlines).
    void set_timeouts(Millis connect_timeout, Millis request_timeout);

    Result<HttpResponse> get(std::string_view target) { return request("GET", target); }
    Result<HttpResponse> post(std::string_view target, std::string_view body,
                              std::string_view content_type = "application/json") {
        return request("POST", target, body, content_type);
    }

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

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
