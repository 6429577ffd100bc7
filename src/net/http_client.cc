// HttpClient: each call runs a private io_context until the operation completes; the timeouts are
// beast::tcp_stream deadlines, which close the socket when they pass.
//
// Resending. A keep-alive connection the server closed while it was idle is the normal case, not
// an error: before reusing a connection the client checks (poll, no wait) whether the server has
// already closed it, and reconnects if so. A close can still race with the request; then, with
// Resend::once_if_unsent_on_reused_connection and on a reused connection only, a request that
// failed before any byte of a response arrived (and not by a timeout) is sent once more on a
// fresh connection. A request may therefore reach the server twice if the server read it and then
// died without answering: callers that allow it must treat a request whose answer they did not get
// as possibly applied, as they already must after a timeout.
#include "net/http_client.h"

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <poll.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <chrono>

#include "base/base64.h"
#include "net/http_wire.h"
#include "net/response_reader.h"
#include "net/tls_stream.h"

namespace narad::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace {

constexpr size_t kReadChunkBytes = 64 * 1024;

}  // namespace

class HttpClient::Impl {
  public:
    explicit Impl(ClientOptions options)
        : options_(std::move(options)),
          where_(options_.host + ":" + std::to_string(options_.port)),
          reader_(options_.response_body_limit_bytes) {
        if (!options_.basic_auth.empty()) {
            authorization_ = "Basic " + base64_encode(options_.basic_auth);
        }
        if (options_.tls && options_.tls_context) {
            tls_ = options_.tls_context;
        } else if (options_.tls) {
            auto tls = make_client_tls(options_.tls->files);
            if (tls.is_ok()) {
                tls_ = std::move(*tls);
            } else {
                tls_error_ = tls.status();
            }
        }
    }

    Result<HttpResponse> request(std::string_view method, std::string_view target,
                                 std::string_view body, std::string_view content_type,
                                 const Headers& headers, Resend resend) {
        maybe_delivered_ = false;
        if (connected_ && connection_dropped()) disconnect();
        bool reused = connected_;
        if (!connected_) NARAD_RETURN_IF_ERROR(open());
        bool may_resend = false;
        auto result = exchange(method, target, body, content_type, headers, may_resend);
        if (result.is_ok() || !reused || !may_resend || resend == Resend::never) return result;
        NARAD_RETURN_IF_ERROR(open());
        return exchange(method, target, body, content_type, headers, may_resend);
    }

    bool maybe_delivered() const { return maybe_delivered_; }
    void set_timeouts(Millis connect_timeout, Millis request_timeout) {
        options_.connect_timeout = connect_timeout;
        options_.request_timeout = request_timeout;
    }

  private:
    // Runs the private loop until the operation started just before has completed.
    void run() {
        ioc_.restart();
        ioc_.run();
    }

    void disconnect() {
        if (stream_) {
            beast::error_code ignored;
            stream_->tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
            stream_->tcp().close();
            stream_.reset();
        }
        buffer_.consume(buffer_.size());
        connected_ = false;
    }

    // Whether the server closed the idle connection (or sent bytes nobody asked for): the socket
    // is readable although no request is outstanding.
    bool connection_dropped() {
        if (buffer_.size() > 0) return true;
        pollfd fd{stream_->tcp().socket().native_handle(), POLLIN, 0};
        return ::poll(&fd, 1, 0) != 0;
    }

    Status resolve(std::vector<tcp::endpoint>& endpoints) {
        beast::error_code ec;
        auto address = asio::ip::make_address(options_.host, ec);
        if (!ec) {
            endpoints.emplace_back(address, options_.port);
            return Status::ok();
        }
        tcp::resolver resolver(ioc_);
        bool done = false;
        resolver.async_resolve(options_.host, std::to_string(options_.port),
                               [&](beast::error_code resolve_ec, tcp::resolver::results_type r) {
                                   done = true;
                                   ec = resolve_ec;
                                   for (const auto& entry : r)
                                       endpoints.push_back(entry.endpoint());
                               });
        ioc_.restart();
        ioc_.run_for(options_.connect_timeout);
        if (!done) {
            resolver.cancel();
            run();
            return Status(Errc::timeout, "resolving " + options_.host + " timed out after " +
                                             std::to_string(options_.connect_timeout.count()) +
                                             " ms");
        }
        if (ec || endpoints.empty()) {
            return Status(Errc::peer_error, "cannot resolve " + options_.host + ": " +
                                                (ec ? ec.message() : "no address"));
        }
        return Status::ok();
    }

    Status connect() {
        disconnect();
        NARAD_RETURN_IF_ERROR(tls_error_);
        std::vector<tcp::endpoint> endpoints;
        NARAD_RETURN_IF_ERROR(resolve(endpoints));
        beast::error_code ec;
        beast::tcp_stream tcp_stream(ioc_);
        tcp_stream.expires_after(options_.connect_timeout);
        tcp_stream.async_connect(endpoints, [&](beast::error_code connect_ec,
                                                const tcp::endpoint&) { ec = connect_ec; });
        run();
        if (ec == beast::error::timeout) {
            return Status(Errc::timeout, "connecting to " + where_ + " timed out after " +
                                             std::to_string(options_.connect_timeout.count()) +
                                             " ms");
        }
        if (ec) {
            return Status(Errc::peer_error, "cannot connect to " + where_ + ": " + ec.message());
        }
        tcp_stream.socket().set_option(tcp::no_delay(true), ec);
        stream_.emplace(std::move(tcp_stream), tls_);
        if (tls_) NARAD_RETURN_IF_ERROR(tls_handshake());
        connected_ = true;
        return Status::ok();
    }

    // The TLS handshake on the connection just made, within the connect timeout.
    Status tls_handshake() {
        SSL* ssl = stream_->tls_stream().native_handle();
        beast::error_code ec;
        auto ip = asio::ip::make_address(options_.host, ec);
        if (ec) SSL_set_tlsext_host_name(ssl, options_.host.c_str());  // SNI: names only
        if (options_.tls->host_check == HostCheck::name) {
            X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
            X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
            int set = ec ? X509_VERIFY_PARAM_set1_host(param, options_.host.c_str(), 0)
                         : X509_VERIFY_PARAM_set1_ip_asc(param, ip.to_string().c_str());
            if (set != 1) {
                disconnect();
                return Status(Errc::invalid_argument,
                              "cannot verify TLS for host " + options_.host);
            }
        }
        ec = {};
        stream_->tcp().expires_after(options_.connect_timeout);
        stream_->tls_stream().async_handshake(
            asio::ssl::stream_base::client,
            [&](beast::error_code handshake_ec) { ec = handshake_ec; });
        run();
        if (!ec) return Status::ok();
        std::string reason = ec.message();
        long verify = SSL_get_verify_result(ssl);
        if (verify != X509_V_OK)
            reason += " (" + std::string(X509_verify_cert_error_string(verify)) + ")";
        disconnect();
        if (ec == beast::error::timeout) {
            return Status(Errc::timeout, "TLS handshake with " + where_ + " timed out");
        }
        return Status(Errc::peer_error, "TLS handshake with " + where_ + " failed: " + reason);
    }

    // A new connection, with its handshake done. The handshake as a whole gets one
    // request_timeout, not one per step. Whether the caller's request may have been delivered
    // is what it was before (a resend after a reused connection failed stays "maybe").
    Status open() {
        NARAD_RETURN_IF_ERROR(connect());
        if (!options_.on_connect) return Status::ok();
        const bool delivered = maybe_delivered_;
        const auto deadline = std::chrono::steady_clock::now() + options_.request_timeout;
        const Millis call_timeout = options_.request_timeout;
        Status shook = options_.on_connect([&](std::string_view method, std::string_view target,
                                               const Headers& headers) -> Result<HttpResponse> {
            auto left =
                std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now());
            if (left <= Millis(0)) {
                return Status(Errc::timeout, "the handshake with " + where_ + " took longer than " +
                                                 std::to_string(call_timeout.count()) + " ms");
            }
            options_.request_timeout = left;
            bool unused = false;
            auto answer = exchange(method, target, {}, "application/json", headers, unused);
            options_.request_timeout = call_timeout;
            return answer;
        });
        maybe_delivered_ = delivered;
        if (!shook.is_ok()) {
            disconnect();
            return shook.with_context("connection handshake with " + where_);
        }
        if (!connected_) {
            return Status(Errc::peer_error, "connection handshake with " + where_ +
                                                " ended with the connection closed");
        }
        return Status::ok();
    }

    Status transport_error(const beast::error_code& ec) {
        disconnect();
        if (ec == beast::error::timeout) {
            return Status(Errc::timeout, "request to " + where_ + " timed out after " +
                                             std::to_string(options_.request_timeout.count()) +
                                             " ms");
        }
        return Status(Errc::peer_error, "request to " + where_ + " failed: " + ec.message());
    }

    // The progress of one exchange: the request is written while the response is read, because
    // a server may answer before it has read the whole body (a 413) and then close.
    struct Exchange {
        bool writing = true;
        beast::error_code write_error;
        beast::error_code read_error;
        Status read_status;  // a malformed response, or a close before it was complete
        bool got_bytes = false;
    };

    // One request and its response on the open connection. `may_resend` tells whether it failed
    // before any byte of a response arrived, for a reason other than the deadline.
    Result<HttpResponse> exchange(std::string_view method, std::string_view target,
                                  std::string_view body, std::string_view content_type,
                                  const Headers& headers, bool& may_resend) {
        may_resend = false;
        maybe_delivered_ = true;  // from here on, some of the request may reach the server
        head_.clear();
        wire::append_request_head(head_, {method, target, where_, authorization_, content_type,
                                          body.size(), &headers, options_.client_name});
        HttpResponse response;
        reader_.start(response, method == "HEAD");
        Exchange exchange;
        // One deadline for the whole exchange: writing the request and reading the response.
        stream_->tcp().expires_after(options_.request_timeout);
        std::array<asio::const_buffer, 2> buffers{asio::buffer(head_),
                                                  asio::buffer(body.data(), body.size())};
        stream_->async_write(buffers, [&exchange](beast::error_code ec, size_t) {
            exchange.writing = false;
            exchange.write_error = ec;
        });
        read_step(exchange);
        run();

        if (reader_.done() && exchange.read_status.is_ok() && !exchange.read_error) {
            // An answer that came before the request was fully sent leaves the connection
            // unusable, as does a failed write.
            if (exchange.write_error || !reader_.keep_alive()) disconnect();
            return response;
        }
        bool timed_out = exchange.read_error == beast::error::timeout ||
                         exchange.write_error == beast::error::timeout;
        may_resend = !exchange.got_bytes && !timed_out;
        if (timed_out) return transport_error(beast::error::timeout);
        if (!exchange.got_bytes && exchange.write_error) {
            return transport_error(exchange.write_error);
        }
        if (exchange.read_error) return transport_error(exchange.read_error);
        disconnect();
        return exchange.read_status.with_context("request to " + where_);
    }

    // Parses what is buffered, then reads more until the response is complete or failed.
    void read_step(Exchange& exchange) {
        while (buffer_.size() > 0 && !reader_.done()) {
            auto data = buffer_.data();
            size_t used =
                reader_.put(std::string_view(static_cast<const char*>(data.data()), data.size()),
                            exchange.read_status);
            buffer_.consume(used);
            if (!exchange.read_status.is_ok()) return end_read(exchange);
            if (used == 0) break;
        }
        if (reader_.done()) return end_read(exchange);
        stream_->async_read_some(
            buffer_.prepare(kReadChunkBytes), [this, &exchange](beast::error_code ec, size_t n) {
                // A TLS peer that closes without close_notify reads as a truncated stream: a clean
                // close between responses, but never the end of a body that runs to the close.
                if (ec == asio::ssl::error::stream_truncated && exchange.got_bytes) {
                    exchange.read_status =
                        Status(Errc::peer_error, "the TLS stream was cut short (no close_notify)");
                    return end_read(exchange);
                }
                if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
                    exchange.read_status =
                        exchange.got_bytes ? reader_.put_eof()
                                           : Status(Errc::peer_error, "connection closed by peer");
                    if (exchange.read_status.is_ok() && !reader_.done()) {
                        exchange.read_status = Status(Errc::peer_error, "incomplete response");
                    }
                    return end_read(exchange);
                }
                if (ec) {
                    exchange.read_error = ec;
                    return end_read(exchange);
                }
                exchange.got_bytes = exchange.got_bytes || n > 0;
                buffer_.commit(n);
                read_step(exchange);
            });
    }

    // The response is complete or failed; a request still being written is abandoned.
    void end_read(Exchange& exchange) {
        if (exchange.writing) {
            stream_->tcp().cancel();
            exchange.write_error = asio::error::operation_aborted;
        }
    }

    ClientOptions options_;
    std::string where_;  // "host:port", for messages and the Host header
    std::string authorization_;
    asio::io_context ioc_{1};
    std::shared_ptr<TlsContext> tls_;       // https: made once, shared by every connection
    Status tls_error_;                      // why tls_ could not be made
    std::optional<MaybeTlsStream> stream_;  // while connected
    beast::flat_buffer buffer_;             // received, not yet parsed
    ResponseReader reader_;
    std::string head_;
    bool connected_ = false;
    bool maybe_delivered_ = false;  // see HttpClient::last_request_maybe_delivered
};

HttpClient::HttpClient(ClientOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
HttpClient::~HttpClient() = default;
HttpClient::HttpClient(HttpClient&&) noexcept = default;
HttpClient& HttpClient::operator=(HttpClient&&) noexcept = default;

Result<HttpResponse> HttpClient::request(std::string_view method, std::string_view target,
                                         std::string_view body, std::string_view content_type,
                                         const Headers& headers, Resend resend) {
    return impl_->request(method, target, body, content_type, headers, resend);
}

bool HttpClient::last_request_maybe_delivered() const { return impl_->maybe_delivered(); }

void HttpClient::set_timeouts(Millis connect_timeout, Millis request_timeout) {
    impl_->set_timeouts(connect_timeout, request_timeout);
}

}  // namespace narad::net
