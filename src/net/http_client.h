// HttpClient: a small blocking HTTP/1.1 client over one keep-alive connection (reconnecting when
// the server closed it), for the CLI, the test harnesses, node-to-node calls (PeerPool) and etcd's
// JSON gateway (HttpEtcdTransport). Every call has a timeout. Not thread-safe: use one client per
// thread. It is a ClientConnection (net/client_connection.h) with an event loop of its own, run on
// the calling thread; the asynchronous LoadClient (net/load_client.h) is the other user of it.
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

// Whether a request that failed is sent once more. Resending is for requests that are safe to
// apply twice: a keep-alive connection the server closed as the request went out is the common
// case, but a server that read the request and then died without answering gets it twice.
enum class Resend {
    // A failure is returned as it is: the caller learns that the outcome is unknown
    // (last_request_maybe_delivered()). For requests that must not apply twice, and for which a
    // second run would misreport the first (etcd's txn, put and lease writes: a resent txn may
    // apply twice, or fail its compare against the first run's write).
    never,
    // On a reused connection, a request that failed before any byte of an answer arrived (and not
    // by timeout) goes once more on a new connection. HttpClient's default (the CLI's one-off
    // commands and the test harnesses) and PeerPool's (see peer_pool.h).
    once_if_unsent_on_reused_connection,
};

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

struct ConnectionTarget;

// What a client with `options` dials and sends on every request: host and port, TLS (loading
// options.tls's files unless tls_context is given; Errc::invalid_argument when they do not load),
// the Authorization and X-Narad-Client values. HttpClient and LoadClient make theirs here.
Result<std::shared_ptr<const ConnectionTarget>> make_connection_target(
    const ClientOptions& options);

class HttpClient {
  public:
    // A TLS file that does not load fails every request with the reason (Errc::invalid_argument).
    explicit HttpClient(ClientOptions options);
    ~HttpClient();
    HttpClient(HttpClient&&) noexcept;
    HttpClient& operator=(HttpClient&&) noexcept;

    // Sends one request and waits for the whole response. A transport failure (refused, reset,
    // timeout) is Errc::peer_error or Errc::timeout, with a message naming host:port; any HTTP
    // status is a successful Result. A keep-alive connection the server closed while it was idle
    // is replaced before the request goes out; `resend` says what happens when one fails under it.
    Result<HttpResponse> request(std::string_view method, std::string_view target,
                                 std::string_view body = {},
                                 std::string_view content_type = "application/json",
                                 const Headers& headers = {},
                                 Resend resend = Resend::once_if_unsent_on_reused_connection);

    // Whether the last request() may have reached the server: false when it failed before any
    // byte of it was handed to a connection (resolve, connect or the connection handshake
    // failed), so it certainly was not applied; true once sending began, whatever happened next.
    // Node-to-node and etcd callers use it to tell "peer unreachable" from "outcome unknown".
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

}  // namespace narad::net
