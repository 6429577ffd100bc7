// ClientConnection: one client-side HTTP/1.1 connection, the layer every client in net/ is made of
// (HttpClient, LoadClient, and through them the etcd transport). It dials (resolve, connect, TLS
// with the host check), writes a request and reads the response (while it still writes a large
// one: a server may answer before it has read the whole body, a 413, and close), parses the
// response within a body limit, keeps the connection for the next request when the server allows,
// tells whether a failed exchange got any byte of an answer (what a resend rule needs), and reads a
// long answer piece by piece (etcd's chunked watch streams).
//
// ClientConnection is asynchronous on an io_context it borrows: start its operations from the
// thread running that io_context, one at a time; they complete on that thread. Deadlines are the
// owner's to enforce, so an event loop with many connections checks them all with one timer
// rather than arming one per request: expire_if_due() closes a connection whose pending operation
// is past its deadline, and that operation then completes with Errc::timeout. BlockingConnection
// owns an io_context and runs it on the calling thread until the operation is done or due: what
// the blocking clients use. Private to net/; Beast and Asio stay in client_connection.cc.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "net/http.h"
#include "net/tls.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace narad::net {

// Whom a connection dials and what every request on it carries. Made once per client
// (make_connection_target in http_client.h) and shared by its connections; immutable.
struct ConnectionTarget {
    std::string host;
    uint16_t port = 0;
    std::string where;                // "host:port", for messages and the Host header
    std::shared_ptr<TlsContext> tls;  // https; null: plain TCP
    HostCheck host_check = HostCheck::name;
    std::string authorization;  // the whole Authorization value ("Basic ..."), or empty
    std::string client_name;    // the X-Narad-Client value, or empty for none
};

// One request. The views must stay valid until the operation that sends it completes.
struct ClientRequest {
    std::string_view method;
    std::string_view target;
    std::string_view body;
    std::string_view content_type;
    const Headers* headers = nullptr;  // extra headers, or null
    // A larger response body fails the exchange (Errc::peer_error).
    uint64_t response_body_limit_bytes = uint64_t{1} << 30;
};

struct ExchangeResult {
    Status status;                // ok: the whole response arrived
    bool answer_started = false;  // some byte of a response arrived before the failure
};

class ClientConnection {
  public:
    using Done = std::function<void(Status)>;
    using ExchangeDone = std::function<void(const ExchangeResult&)>;

    ClientConnection(boost::asio::io_context& loop, std::shared_ptr<const ConnectionTarget> target);
    ~ClientConnection();
    ClientConnection(const ClientConnection&) = delete;
    ClientConnection& operator=(const ClientConnection&) = delete;

    // Opens a new connection (closing the open one): resolves the host unless it is an address,
    // connects, and with TLS shakes hands, all within `timeout`. Fails with Errc::timeout,
    // Errc::peer_error, or Errc::invalid_argument (the host name cannot be checked); nothing of a
    // request was sent then. Messages name host:port.
    void async_connect(Millis timeout, Done done);

    // Sends `request` on the open connection (is_open(), else a bug) and reads the whole response
    // into `response` (cleared; its buffers are reused), within `timeout`; `response` must stay
    // valid until `done` runs. Afterwards the connection stays open only if the server keeps it
    // alive and the whole request was written. A failure closes it: Errc::timeout, or
    // Errc::peer_error (refused, reset, closed, malformed, body over the limit), with a message
    // naming host:port.
    void async_exchange(const ClientRequest& request, HttpResponse& response, Millis timeout,
                        ExchangeDone done);

    // An answer read piece by piece: async_send writes `request` within `timeout` and completes
    // when it is written; then each async_read_more appends what arrived of the answer to
    // `response` (its body grows; the reader may take bytes off its front in between) and
    // completes with ok, or with the error that ended the answer (and closed the connection). No
    // deadline applies to async_read_more. Once answer_complete() or an error, there is nothing
    // more to read.
    void async_send(const ClientRequest& request, HttpResponse& response, Millis timeout,
                    Done done);
    void async_read_more(Done done);
    bool answer_complete() const;

    bool is_open() const;
    // Whether the server closed the idle open connection (or sent bytes nobody asked for): its
    // socket is readable although no request is outstanding. Polls; never waits.
    bool closed_by_server();
    // Closes the connection; a pending operation completes with an error.
    void close();
    // The deadline of the pending operation; MonoTime::max() when none has one.
    MonoTime deadline() const;
    // Closes the connection if the pending operation's deadline is at or before `now`; that
    // operation then completes with Errc::timeout.
    void expire_if_due(MonoTime now);

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

// A ClientConnection on an io_context of its own, run on the calling thread until the operation
// completes or its deadline passes. One thread at a time, except cancel().
class BlockingConnection {
  public:
    explicit BlockingConnection(std::shared_ptr<const ConnectionTarget> target);
    ~BlockingConnection();
    BlockingConnection(const BlockingConnection&) = delete;
    BlockingConnection& operator=(const BlockingConnection&) = delete;

    // As ClientConnection's operations, waiting for them.
    Status connect(Millis timeout);
    ExchangeResult exchange(const ClientRequest& request, HttpResponse& response, Millis timeout);
    Status send(const ClientRequest& request, HttpResponse& response, Millis timeout);
    // Waits until more of the answer arrived (ok), the answer ended (the error that ended it, or
    // ok with answer_complete()), or `deadline`: Errc::timeout, and the read stays pending for
    // the next call.
    Status read_more(MonoTime deadline);
    bool answer_complete() const;

    bool is_open() const;
    bool closed_by_server();
    void close();
    // Makes a read_more() waiting in another thread return soon (Errc::peer_error), and every
    // later one at once. Thread-safe.
    void cancel();
    bool cancelled() const { return cancelled_.load(); }

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
    std::atomic<bool> cancelled_{false};
};

}  // namespace narad::net
