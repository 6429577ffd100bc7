// HttpServer: the Beast/Asio HTTP/1.1 server behind the public API (and, later, the node-to-node
// port). It owns an io_context run by `threads` threads, accepts keep-alive connections, reads each
// request with the body capped at `body_limit_bytes` or the route's own limit (a larger body is
// answered 413 with a JSON error and the connection closed), hands it to the HttpHandler, and
// writes the response the handler produces, possibly later and from another thread. Before reading
// a body it lets the handler screen the head (HttpHandler::screen): a refused request is answered
// and its connection closed with the body unread. Malformed requests get 400. Idle connections
// close after `idle_timeout`; reading a request may take at most `read_timeout`.
//
// A Responder may be called from any thread, also after its connection closed or the server
// was destroyed: it then does nothing. Pipelined requests are answered in order (the next one is
// read once the previous response is written).
//
// start() binds and begins serving; stop() stops accepting, lets requests in progress finish for up
// to `shutdown_grace`, then closes everything. Thread-safe, except that stop() (and the destructor)
// must not run on one of the server's own threads. A stopped server cannot be started again.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "net/http.h"
#include "net/tls.h"

namespace narad::net {

struct ServerOptions {
    std::string address = "0.0.0.0";
    uint16_t port = 7942;  // 0 = any free port (see HttpServer::port())
    uint32_t threads = 2;
    uint64_t body_limit_bytes = 1 << 20;
    // The most any route may raise its body limit to (HttpHandler::body_limit); 0 means
    // body_limit_bytes.
    uint64_t body_limit_ceiling_bytes = 0;
    Millis read_timeout{10'000};
    Millis write_timeout{30'000};
    Millis idle_timeout{60'000};
    Millis shutdown_grace{10'000};
    // At this many open connections the server stops accepting until one closes: further
    // clients wait in the listen backlog. 0: no cap.
    uint32_t connections_max = 4096;
    // At this many open connections from one client IP address, a further one from it is
    // answered 503 and closed at once (it would otherwise wait behind connections_max with
    // everyone else's). 0: no cap.
    uint32_t connections_per_address_max = 1024;
    // TLS on every connection (the certificate and key; with a CA file, clients must present a
    // certificate it signed). nullopt: plain HTTP.
    std::optional<TlsFiles> tls;
    // Request line plus headers; a larger head is answered 431 and the connection closed.
    uint32_t header_limit_bytes = 16 * 1024;
};

struct ServerStats {
    uint64_t connections_open = 0;
    uint64_t connections_refused_per_address = 0;  // since start
    uint64_t requests_in_flight = 0;
};

class HttpServer {
  public:
    HttpServer(ServerOptions options, HttpHandler& handler);
    ~HttpServer();

    // Binds and starts serving; fails (e.g. address in use, a TLS file that does not load)
    // without starting anything.
    Status start();
    // Loads options.tls's files again; connections made from now on use them, those open keep
    // what they started with. On failure nothing changes. A no-op without TLS.
    Status reload_tls();
    void stop();
    // The bound port (useful when options.port was 0).
    uint16_t port() const;
    ServerStats stats() const;

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace narad::net
