// ClientConnection over a bare tcp::socket (with an ssl_stream on it for https): no
// beast::tcp_stream, whose per-operation timer an event loop with thousands of connections would
// pay for; deadlines come from the owner through expire_if_due(). Every operation completes from
// a handler, never inside the call that started it, so an owner may start the next operation from
// a completion without recursing.
#include "net/client_connection.h"

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <poll.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <optional>
#include <vector>

#include "base/assert.h"
#include "net/http_wire.h"
#include "net/response_reader.h"
#include "net/tls_stream.h"

namespace narad::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace {

constexpr size_t kReadChunkBytes = 64 * 1024;
// A request up to this size is written at once (it fits an empty socket send buffer), and its
// answer is read once it is written: by then the answer may have arrived, which saves an empty
// read. A larger one may wait for the server to read it, and the server may answer (a 413) and
// close before it has read it all, so its answer is read while it is written.
constexpr size_t kReadWhileWritingBytes = 64 * 1024;

std::string in_ms(Millis timeout) { return std::to_string(timeout.count()) + " ms"; }

MonoTime deadline_after(Millis timeout) {
    MonoTime now = std::chrono::steady_clock::now();
    if (timeout >= std::chrono::duration_cast<Millis>(MonoTime::max() - now)) {
        return MonoTime::max();
    }
    return now + timeout;
}

}  // namespace

class ClientConnection::Impl {
  public:
    Impl(asio::io_context& loop, std::shared_ptr<const ConnectionTarget> target)
        : loop_(loop), target_(std::move(target)) {}

    // --- Connecting ---

    void async_connect(Millis timeout, Done done) {
        close();
        begin(timeout);
        connect_done_ = std::move(done);
        beast::error_code ec;
        auto address = asio::ip::make_address(target_->host, ec);
        if (!ec) {
            endpoints_.assign(1, tcp::endpoint(address, target_->port));
            return dial();
        }
        if (!resolver_) resolver_.emplace(loop_);
        resolver_->async_resolve(
            target_->host, std::to_string(target_->port),
            [this](const beast::error_code& resolve_ec, const tcp::resolver::results_type& found) {
                if (timed_out_) {
                    return connected(Status(
                        Errc::timeout,
                        "resolving " + target_->host + " timed out after " + in_ms(timeout_)));
                }
                if (resolve_ec || found.empty()) {
                    return connected(Status(
                        Errc::peer_error, "cannot resolve " + target_->host + ": " +
                                              (resolve_ec ? resolve_ec.message() : "no address")));
                }
                endpoints_.clear();
                for (const auto& entry : found) endpoints_.push_back(entry.endpoint());
                dial();
            });
    }

    // --- One request and its response ---

    void async_exchange(const ClientRequest& request, HttpResponse& response, Millis timeout,
                        ExchangeDone done) {
        exchange_done_ = std::move(done);
        begin(timeout);
        streaming_ = false;
        progress_ = Progress{};
        reader_.start(response, request.method == "HEAD", request.response_body_limit_bytes);
        write(request);
        if (head_.size() + request.body.size() > kReadWhileWritingBytes) start_read();
    }

    // --- An answer read piece by piece ---

    void async_send(const ClientRequest& request, HttpResponse& response, Millis timeout,
                    Done done) {
        send_done_ = std::move(done);
        begin(timeout);
        streaming_ = true;
        progress_ = Progress{};
        progress_.reading = false;
        reader_.start(response, false, request.response_body_limit_bytes);
        write(request);
    }

    void async_read_more(Done done) {
        NARAD_ASSERT(open_, "a read on a closed client connection");
        read_done_ = std::move(done);
        stream_->async_read_some(
            buffer_.prepare(kReadChunkBytes), [this](const beast::error_code& ec, size_t n) {
                if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
                    Status end = reader_.put_eof();
                    if (end.is_ok() && !reader_.done()) {
                        end = Status(Errc::peer_error, "incomplete response");
                    }
                    return read_more_done(end.with_context("request to " + target_->where));
                }
                if (ec) return read_more_done(transport_error(ec));
                buffer_.commit(n);
                Status parsed;
                parse_buffered(parsed);
                read_more_done(parsed.with_context("request to " + target_->where));
            });
    }

    bool answer_complete() const { return reader_.done(); }

    // --- The connection ---

    bool is_open() const { return open_; }

    bool closed_by_server() {
        if (!open_) return false;
        if (buffer_.size() > 0) return true;
        pollfd fd{stream_->tcp().native_handle(), POLLIN, 0};
        return ::poll(&fd, 1, 0) != 0;
    }

    void close() {
        open_ = false;
        if (stream_) {
            beast::error_code ignored;
            stream_->tcp().shutdown(tcp::socket::shutdown_both, ignored);
            stream_->tcp().close(ignored);
        }
        buffer_.consume(buffer_.size());
    }

    MonoTime deadline() const { return busy_ ? deadline_ : MonoTime::max(); }

    void expire_if_due(MonoTime now) {
        if (!busy_ || now < deadline_) return;
        timed_out_ = true;
        if (resolver_) resolver_->cancel();
        close();
    }

  private:
    // How far the exchange has come: the request is written, and the response read (once the
    // request is written, or alongside for a large one).
    struct Progress {
        bool writing = true;
        bool reading = true;
        bool read_started = false;
        beast::error_code write_error;
        beast::error_code read_error;
        Status read_status;      // a malformed response, or a close before it was complete
        bool got_bytes = false;  // some byte of a response arrived
    };

    void begin(Millis timeout) {
        busy_ = true;
        timed_out_ = false;
        timeout_ = timeout;
        deadline_ = deadline_after(timeout);
    }

    void end_operation() { busy_ = false; }

    Status transport_error(const beast::error_code& ec) const {
        return Status(Errc::peer_error,
                      "request to " + target_->where + " failed: " + ec.message());
    }

    void dial() {
        // A new stream each time: a TLS stream cannot be reused once its connection closed.
        stream_.emplace(tcp::socket(loop_), target_->tls);
        asio::async_connect(
            stream_->tcp(), endpoints_, [this](const beast::error_code& ec, const tcp::endpoint&) {
                if (timed_out_) {
                    return connected(Status(
                        Errc::timeout,
                        "connecting to " + target_->where + " timed out after " + in_ms(timeout_)));
                }
                if (ec) {
                    return connected(
                        Status(Errc::peer_error,
                               "cannot connect to " + target_->where + ": " + ec.message()));
                }
                beast::error_code ignored;
                stream_->tcp().set_option(tcp::no_delay(true), ignored);
                if (stream_->tls()) return handshake();
                connected(Status::ok());
            });
    }

    // The TLS handshake on the connection just made, within the connect deadline.
    void handshake() {
        SSL* ssl = stream_->tls_stream().native_handle();
        beast::error_code ec;
        auto ip = asio::ip::make_address(target_->host, ec);
        if (ec) SSL_set_tlsext_host_name(ssl, target_->host.c_str());  // SNI: names only
        if (target_->host_check == HostCheck::name) {
            X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
            X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
            int set = ec ? X509_VERIFY_PARAM_set1_host(param, target_->host.c_str(), 0)
                         : X509_VERIFY_PARAM_set1_ip_asc(param, ip.to_string().c_str());
            if (set != 1) {
                return connected(
                    Status(Errc::invalid_argument, "cannot verify TLS for host " + target_->host));
            }
        }
        stream_->tls_stream().async_handshake(
            asio::ssl::stream_base::client, [this, ssl](const beast::error_code& handshake_ec) {
                if (!handshake_ec) return connected(Status::ok());
                if (timed_out_) {
                    return connected(Status(Errc::timeout, "TLS handshake with " + target_->where +
                                                               " timed out after " +
                                                               in_ms(timeout_)));
                }
                std::string reason = handshake_ec.message();
                long verify = SSL_get_verify_result(ssl);
                if (verify != X509_V_OK) {
                    reason += " (" + std::string(X509_verify_cert_error_string(verify)) + ")";
                }
                connected(Status(Errc::peer_error,
                                 "TLS handshake with " + target_->where + " failed: " + reason));
            });
    }

    void connected(Status status) {
        end_operation();
        if (status.is_ok()) {
            open_ = true;
        } else {
            close();
        }
        Done done = std::move(connect_done_);
        done(std::move(status));
    }

    void write(const ClientRequest& request) {
        NARAD_ASSERT(open_, "a request on a closed client connection");
        head_.clear();
        wire::append_request_head(
            head_,
            {request.method, request.target, target_->where, target_->authorization,
             request.content_type, request.body.size(), request.headers, target_->client_name});
        std::array<asio::const_buffer, 2> buffers{
            asio::buffer(head_), asio::buffer(request.body.data(), request.body.size())};
        stream_->async_write(buffers, [this](const beast::error_code& ec, size_t) {
            if (streaming_) return sent(ec);
            progress_.writing = false;
            progress_.write_error = ec;
            if (!progress_.read_started) return start_read();
            finish_exchange();
        });
    }

    void sent(const beast::error_code& ec) {
        end_operation();
        Status status;
        if (timed_out_) {
            status = Status(Errc::timeout, "sending a request to " + target_->where +
                                               " timed out after " + in_ms(timeout_));
        } else if (ec) {
            status = transport_error(ec);
        }
        if (!status.is_ok()) close();
        Done done = std::move(send_done_);
        done(std::move(status));
    }

    // Feeds what is buffered to the reader until the response is complete or needs more bytes.
    void parse_buffered(Status& error) {
        while (buffer_.size() > 0 && !reader_.done()) {
            auto data = buffer_.data();
            size_t used = reader_.put(
                std::string_view(static_cast<const char*>(data.data()), data.size()), error);
            buffer_.consume(used);
            if (!error.is_ok() || used == 0) return;
        }
    }

    void start_read() {
        progress_.read_started = true;
        read_step();
    }

    // Parses what is buffered, then reads more until the response is complete or failed.
    void read_step() {
        parse_buffered(progress_.read_status);
        if (!progress_.read_status.is_ok() || reader_.done()) return end_read();
        stream_->async_read_some(
            buffer_.prepare(kReadChunkBytes), [this](const beast::error_code& ec, size_t n) {
                // A TLS peer that closes without close_notify reads as a truncated stream: a
                // clean close between responses, but never the end of a body that runs to the
                // close.
                if (ec == asio::ssl::error::stream_truncated && progress_.got_bytes) {
                    progress_.read_status =
                        Status(Errc::peer_error, "the TLS stream was cut short (no close_notify)");
                    return end_read();
                }
                if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
                    progress_.read_status =
                        progress_.got_bytes ? reader_.put_eof()
                                            : Status(Errc::peer_error, "connection closed by peer");
                    if (progress_.read_status.is_ok() && !reader_.done()) {
                        progress_.read_status = Status(Errc::peer_error, "incomplete response");
                    }
                    return end_read();
                }
                if (ec) {
                    progress_.read_error = ec;
                    return end_read();
                }
                progress_.got_bytes = progress_.got_bytes || n > 0;
                buffer_.commit(n);
                read_step();
            });
    }

    // The response is complete or failed; a request still being written is abandoned.
    void end_read() {
        progress_.reading = false;
        if (progress_.writing) {
            beast::error_code ignored;
            stream_->tcp().cancel(ignored);
        }
        finish_exchange();
    }

    // Completes the exchange once both the write and the read have ended.
    void finish_exchange() {
        if (progress_.writing || progress_.reading) return;
        end_operation();
        ExchangeResult result;
        result.answer_started = progress_.got_bytes;
        if (reader_.done() && progress_.read_status.is_ok() && !progress_.read_error) {
            // An answer that came before the request was fully sent leaves the connection
            // unusable, as does a failed write.
            if (progress_.write_error || !reader_.keep_alive()) close();
        } else {
            if (timed_out_) {
                result.status = Status(Errc::timeout, "request to " + target_->where +
                                                          " timed out after " + in_ms(timeout_));
            } else if (!progress_.got_bytes && progress_.write_error) {
                result.status = transport_error(progress_.write_error);
            } else if (progress_.read_error) {
                result.status = transport_error(progress_.read_error);
            } else {
                result.status = progress_.read_status.with_context("request to " + target_->where);
            }
            close();
        }
        ExchangeDone done = std::move(exchange_done_);
        done(result);
    }

    void read_more_done(Status status) {
        if (!status.is_ok()) close();
        Done done = std::move(read_done_);
        done(std::move(status));
    }

    asio::io_context& loop_;
    const std::shared_ptr<const ConnectionTarget> target_;
    std::optional<tcp::resolver> resolver_;  // since the first name was resolved
    std::vector<tcp::endpoint> endpoints_;
    std::optional<ClientStream> stream_;  // since the first connect
    bool open_ = false;
    beast::flat_buffer buffer_;  // received, not yet parsed
    ResponseReader reader_;
    std::string head_;
    Progress progress_;
    bool streaming_ = false;  // the pending write is async_send's
    // The pending operation's deadline.
    bool busy_ = false;
    bool timed_out_ = false;
    Millis timeout_{0};
    MonoTime deadline_ = MonoTime::max();
    Done connect_done_;
    ExchangeDone exchange_done_;
    Done send_done_;
    Done read_done_;
};

ClientConnection::ClientConnection(asio::io_context& loop,
                                   std::shared_ptr<const ConnectionTarget> target)
    : impl_(std::make_unique<Impl>(loop, std::move(target))) {}
ClientConnection::~ClientConnection() = default;

void ClientConnection::async_connect(Millis timeout, Done done) {
    impl_->async_connect(timeout, std::move(done));
}
void ClientConnection::async_exchange(const ClientRequest& request, HttpResponse& response,
                                      Millis timeout, ExchangeDone done) {
    impl_->async_exchange(request, response, timeout, std::move(done));
}
void ClientConnection::async_send(const ClientRequest& request, HttpResponse& response,
                                  Millis timeout, Done done) {
    impl_->async_send(request, response, timeout, std::move(done));
}
void ClientConnection::async_read_more(Done done) { impl_->async_read_more(std::move(done)); }
bool ClientConnection::answer_complete() const { return impl_->answer_complete(); }
bool ClientConnection::is_open() const { return impl_->is_open(); }
bool ClientConnection::closed_by_server() { return impl_->closed_by_server(); }
void ClientConnection::close() { impl_->close(); }
MonoTime ClientConnection::deadline() const { return impl_->deadline(); }
void ClientConnection::expire_if_due(MonoTime now) { impl_->expire_if_due(now); }

// --- BlockingConnection ---

class BlockingConnection::Impl {
  public:
    explicit Impl(std::shared_ptr<const ConnectionTarget> target)
        : connection(loop, std::move(target)) {}

    // Runs the loop until `done`; when the operation's deadline passes first, expires it and runs
    // on until it has completed (with Errc::timeout).
    void wait(const bool& done) {
        loop.restart();
        while (!done && loop.run_one_until(connection.deadline()) > 0) {
        }
        if (done) return;
        connection.expire_if_due(MonoTime::max());
        loop.restart();
        while (!done && loop.run_one() > 0) {
        }
        NARAD_ASSERT(done, "a client operation did not complete after it was closed");
    }

    // Starts an operation with `start(callback)` and runs the loop until the callback has its
    // result.
    template <typename Result, typename Start>
    Result run(Start start) {
        bool done = false;
        Result result;
        start([&](const auto& outcome) {
            result = outcome;
            done = true;
        });
        wait(done);
        return result;
    }

    asio::io_context loop{1};
    ClientConnection connection;
    bool read_pending = false;
    std::optional<Status> read_result;  // of the read that completed, not yet returned
};

BlockingConnection::BlockingConnection(std::shared_ptr<const ConnectionTarget> target)
    : impl_(std::make_unique<Impl>(std::move(target))) {}
BlockingConnection::~BlockingConnection() = default;

Status BlockingConnection::connect(Millis timeout) {
    return impl_->run<Status>(
        [&](auto done) { impl_->connection.async_connect(timeout, std::move(done)); });
}

ExchangeResult BlockingConnection::exchange(const ClientRequest& request, HttpResponse& response,
                                            Millis timeout) {
    return impl_->run<ExchangeResult>([&](auto done) {
        impl_->connection.async_exchange(request, response, timeout, std::move(done));
    });
}

Status BlockingConnection::send(const ClientRequest& request, HttpResponse& response,
                                Millis timeout) {
    return impl_->run<Status>([&](auto done) {
        impl_->connection.async_send(request, response, timeout, std::move(done));
    });
}

Status BlockingConnection::read_more(MonoTime deadline) {
    if (cancelled_.load()) return Status(Errc::peer_error, "cancelled");
    Impl& impl = *impl_;
    if (!impl.read_pending) {
        impl.read_pending = true;
        impl.connection.async_read_more([&impl](Status status) {
            impl.read_pending = false;
            impl.read_result = std::move(status);
        });
    }
    impl.loop.restart();
    while (!impl.read_result && impl.loop.run_one_until(deadline) > 0) {
    }
    if (!impl.read_result) return Status(Errc::timeout, "nothing arrived yet");
    Status result = std::move(*impl.read_result);
    impl.read_result.reset();
    return result;
}

bool BlockingConnection::answer_complete() const { return impl_->connection.answer_complete(); }
bool BlockingConnection::is_open() const { return impl_->connection.is_open(); }
bool BlockingConnection::closed_by_server() { return impl_->connection.closed_by_server(); }
void BlockingConnection::close() { impl_->connection.close(); }

void BlockingConnection::cancel() {
    cancelled_.store(true);
    Impl* impl = impl_.get();
    asio::post(impl->loop, [impl] { impl->connection.close(); });
}

}  // namespace narad::net
