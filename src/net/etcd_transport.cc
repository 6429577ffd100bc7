// HttpEtcdTransport: every connection runs a private io_context on the calling thread, as
// HttpClient does. HttpClient itself is not reused for POSTs because it sends a request once more
// when a reused connection fails before any answer; for etcd that could apply a txn twice, and the
// second run would report the first's success as a failed compare. Here a request is sent once:
// a failure before the connection exists is Errc::peer_error, any later one Errc::unknown_outcome.
// A pooled connection is checked (poll, no wait) before reuse, so one that etcd closed while idle
// (after a restart, say) is replaced rather than failing a request.
#include "net/etcd_transport.h"

#include <poll.h>

#include <array>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <limits>

#include "base/mutex.h"
#include "net/http_wire.h"
#include "net/response_reader.h"
#include "net/tls_stream.h"

namespace narad::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace {

constexpr size_t kReadChunkBytes = 64 * 1024;

struct Endpoint {
    bool https = false;
    std::string host;
    uint16_t port = 0;
};

Result<Endpoint> parse_endpoint(std::string_view url) {
    Endpoint out;
    std::string_view rest;
    if (url.starts_with("http://")) {
        rest = url.substr(7);
    } else if (url.starts_with("https://")) {
        out.https = true;
        rest = url.substr(8);
    } else {
        return Status(Errc::invalid_argument,
                      "etcd endpoint must be http(s)://host:port: " + std::string(url));
    }
    rest = rest.substr(0, rest.find('/'));
    auto colon = rest.rfind(':');
    if (colon == std::string_view::npos || colon + 1 == rest.size()) {
        return Status(Errc::invalid_argument, "etcd endpoint without a port: " + std::string(url));
    }
    out.host = std::string(rest.substr(0, colon));
    if (out.host.size() >= 2 && out.host.front() == '[')
        out.host = out.host.substr(1, out.host.size() - 2);
    unsigned long port = 0;
    for (char c : rest.substr(colon + 1)) {
        if (c < '0' || c > '9') {
            return Status(Errc::invalid_argument, "bad port in etcd endpoint " + std::string(url));
        }
        port = port * 10 + static_cast<unsigned long>(c - '0');
        if (port > 65535) return Status(Errc::invalid_argument, "bad port in " + std::string(url));
    }
    out.port = static_cast<uint16_t>(port);
    return out;
}

}  // namespace

class HttpEtcdTransport::Connection {
  public:
    // `tls` null: plain HTTP.
    Connection(std::string where, uint64_t body_limit_bytes, std::shared_ptr<TlsContext> tls)
        : where_(std::move(where)),
          stream_(beast::tcp_stream(ioc_), std::move(tls)),
          reader_(body_limit_bytes) {}

    // Errc::peer_error (nothing sent) when the connection cannot be made within `timeout`.
    Status connect(const Endpoint& endpoint, Millis timeout) {
        beast::error_code ec;
        std::vector<tcp::endpoint> addresses;
        auto address = asio::ip::make_address(endpoint.host, ec);
        if (!ec) {
            addresses.emplace_back(address, endpoint.port);
        } else {
            tcp::resolver resolver(ioc_);
            auto results = resolver.resolve(endpoint.host, std::to_string(endpoint.port), ec);
            if (ec) {
                return Status(Errc::peer_error,
                              "cannot resolve " + endpoint.host + ": " + ec.message());
            }
            for (const auto& entry : results) addresses.push_back(entry.endpoint());
        }
        stream_.tcp().expires_after(timeout);
        stream_.tcp().async_connect(addresses, [&](beast::error_code connect_ec,
                                                   const tcp::endpoint&) { ec = connect_ec; });
        run();
        if (!ec && stream_.tls()) {
            // Checked against the cluster's authority only, as node-to-node calls are.
            stream_.tls_stream().async_handshake(
                asio::ssl::stream_base::client,
                [&](beast::error_code handshake_ec) { ec = handshake_ec; });
            run();
        }
        stream_.tcp().expires_never();
        if (ec) {
            return Status(
                Errc::peer_error,
                "cannot connect to etcd at " + where_ + ": " +
                    (ec == beast::error::timeout ? std::string("timed out") : ec.message()));
        }
        stream_.tcp().socket().set_option(tcp::no_delay(true), ec);
        return Status::ok();
    }

    // Whether etcd closed the idle connection (or sent bytes nobody asked for).
    bool dropped() {
        if (buffer_.size() > 0) return true;
        pollfd fd{stream_.tcp().socket().native_handle(), POLLIN, 0};
        return ::poll(&fd, 1, 0) != 0;
    }

    // One POST and its whole answer. Any failure is Errc::unknown_outcome: it may have been sent.
    Result<Reply> exchange(std::string_view path, std::string_view body, Millis timeout,
                           bool& reusable) {
        reusable = false;
        HttpResponse response;
        reader_.start(response, false);
        Progress progress;
        stream_.tcp().expires_after(timeout);
        write_request(path, body, progress);
        read_step(progress);
        run();
        stream_.tcp().expires_never();
        if (reader_.done() && progress.read_status.is_ok() && !progress.read_error) {
            reusable = !progress.write_error && reader_.keep_alive();
            return Reply{response.status, std::move(response.body)};
        }
        std::string why;
        if (progress.read_error == beast::error::timeout ||
            progress.write_error == beast::error::timeout) {
            why = "no answer within " + std::to_string(timeout.count()) + " ms";
        } else if (progress.read_error) {
            why = progress.read_error.message();
        } else if (progress.write_error) {
            why = progress.write_error.message();
        } else {
            why = progress.read_status.message();
        }
        return Status(Errc::unknown_outcome, "etcd request " + std::string(path) + " to " + where_ +
                                                 " may have been sent: " + why);
    }

    // Sends a request whose answer will be streamed; nothing of the answer is read yet.
    Status send_stream_request(std::string_view path, std::string_view body, Millis timeout) {
        reader_.start(response_, false);
        Progress progress;
        stream_.tcp().expires_after(timeout);
        write_request(path, body, progress);
        run();
        stream_.tcp().expires_never();
        if (progress.write_error) {
            return Status(Errc::unknown_outcome, "sending " + std::string(path) + " to " + where_ +
                                                     ": " + progress.write_error.message());
        }
        return Status::ok();
    }

    // --- Streaming: used by Stream only, from one thread at a time (close_soon from any). ---

    // Waits until a whole object is buffered, the answer ended, or `deadline`.
    Result<std::string> next_object(MonoTime deadline, uint64_t object_bytes_max) {
        while (true) {
            if (closed_.load()) return Status(Errc::peer_error, "etcd stream cancelled");
            std::string& text = response_.body;
            size_t newline;
            while ((newline = text.find('\n')) != std::string::npos) {
                std::string line = text.substr(0, newline);
                text.erase(0, newline + 1);
                if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
            }
            if (text.size() > object_bytes_max) {
                return Status(Errc::peer_error, "etcd stream object over " +
                                                    std::to_string(object_bytes_max) + " bytes");
            }
            if (stream_ended_) {
                // A non-200 answer is one JSON error object, not newline-terminated.
                if (text.find_first_not_of(" \t\r") != std::string::npos) {
                    std::string last = std::move(text);
                    text.clear();
                    return last;
                }
                return stream_status_.is_ok()
                           ? Status(Errc::peer_error, "etcd ended the stream from " + where_)
                           : stream_status_;
            }
            if (!read_pending_) start_stream_read();
            if (ioc_.stopped()) ioc_.restart();
            if (ioc_.run_one_until(deadline) == 0 && std::chrono::steady_clock::now() >= deadline) {
                return Status(Errc::timeout, "nothing from the etcd stream yet");
            }
        }
    }

    // Makes a next_object() blocked in another thread return soon. Thread-safe.
    void close_soon() {
        closed_.store(true);
        asio::post(ioc_, [this] {
            beast::error_code ignored;
            stream_.tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
            stream_.tcp().socket().close(ignored);
        });
    }

  private:
    struct Progress {
        bool writing = true;
        beast::error_code write_error;
        beast::error_code read_error;
        Status read_status;
    };

    void run() {
        ioc_.restart();
        ioc_.run();
    }

    void write_request(std::string_view path, std::string_view body, Progress& progress) {
        head_.clear();
        wire::append_request_head(
            head_, {"POST", path, where_, {}, "application/json", body.size(), nullptr});
        std::array<asio::const_buffer, 2> buffers{asio::buffer(head_),
                                                  asio::buffer(body.data(), body.size())};
        stream_.async_write(buffers, [&progress](beast::error_code ec, size_t) {
            progress.writing = false;
            progress.write_error = ec;
        });
    }

    // Parses what is buffered, then reads more until the answer is complete or failed.
    void read_step(Progress& progress) {
        while (buffer_.size() > 0 && !reader_.done()) {
            auto data = buffer_.data();
            size_t used =
                reader_.put(std::string_view(static_cast<const char*>(data.data()), data.size()),
                            progress.read_status);
            buffer_.consume(used);
            if (!progress.read_status.is_ok()) return end_read(progress);
            if (used == 0) break;
        }
        if (reader_.done()) return end_read(progress);
        stream_.async_read_some(
            buffer_.prepare(kReadChunkBytes), [this, &progress](beast::error_code ec, size_t n) {
                if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
                    progress.read_status = reader_.put_eof();
                    if (progress.read_status.is_ok() && !reader_.done()) {
                        progress.read_status = Status(Errc::peer_error, "incomplete answer");
                    }
                    return end_read(progress);
                }
                if (ec) {
                    progress.read_error = ec;
                    return end_read(progress);
                }
                buffer_.commit(n);
                read_step(progress);
            });
    }

    void end_read(Progress& progress) {
        if (progress.writing) {
            stream_.tcp().cancel();
            progress.write_error = asio::error::operation_aborted;
        }
    }

    void start_stream_read() {
        read_pending_ = true;
        stream_.async_read_some(buffer_.prepare(kReadChunkBytes), [this](beast::error_code ec,
                                                                         size_t n) {
            read_pending_ = false;
            if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
                Status eof = reader_.put_eof();
                stream_ended_ = true;
                stream_status_ = eof.is_ok() && reader_.done()
                                     ? Status::ok()
                                     : Status(Errc::peer_error, "etcd closed the stream");
                return;
            }
            if (ec) {
                stream_ended_ = true;
                stream_status_ = Status(Errc::peer_error,
                                        "etcd stream from " + where_ + " broke: " + ec.message());
                return;
            }
            buffer_.commit(n);
            while (buffer_.size() > 0 && !reader_.done()) {
                auto data = buffer_.data();
                Status error;
                size_t used = reader_.put(
                    std::string_view(static_cast<const char*>(data.data()), data.size()), error);
                buffer_.consume(used);
                if (!error.is_ok()) {
                    stream_ended_ = true;
                    stream_status_ = error;
                    return;
                }
                if (used == 0) break;
            }
            if (reader_.done()) stream_ended_ = true;
        });
    }

    std::string where_;  // "host:port"
    asio::io_context ioc_{1};
    MaybeTlsStream stream_;
    beast::flat_buffer buffer_;  // received, not yet parsed
    ResponseReader reader_;
    std::string head_;
    // Streaming state (owned by the thread calling next_object).
    HttpResponse response_;  // its body holds the received, not yet returned stream bytes
    bool read_pending_ = false;
    bool stream_ended_ = false;
    Status stream_status_;
    std::atomic<bool> closed_{false};
};

namespace {

class Stream final : public meta::EtcdStream {
  public:
    Stream(std::unique_ptr<HttpEtcdTransport::Connection> connection, uint64_t object_bytes_max)
        : connection_(std::move(connection)), object_bytes_max_(object_bytes_max) {}

    Result<std::string> next(Millis timeout) override {
        return connection_->next_object(std::chrono::steady_clock::now() + timeout,
                                        object_bytes_max_);
    }

    void cancel() override { connection_->close_soon(); }

  private:
    std::unique_ptr<HttpEtcdTransport::Connection> connection_;
    uint64_t object_bytes_max_;
};

}  // namespace

HttpEtcdTransport::HttpEtcdTransport(EtcdTransportOptions options) : options_(options) {
    if (options_.tls) {
        auto loaded = make_client_tls(options_.tls->files);
        if (loaded.is_ok()) {
            tls_ = std::move(*loaded);
        } else {
            tls_error_ = loaded.status();
        }
    }
}

Result<std::unique_ptr<HttpEtcdTransport::Connection>> HttpEtcdTransport::open_connection(
    const std::string& endpoint, uint64_t body_limit_bytes, Millis connect_timeout) {
    NARAD_ASSIGN_OR_RETURN(auto parsed, parse_endpoint(endpoint));
    std::shared_ptr<TlsContext> tls;
    if (parsed.https) {
        NARAD_RETURN_IF_ERROR(tls_error_.with_context("etcd TLS"));
        if (!tls_) {
            return Status(Errc::invalid_argument,
                          "etcd endpoint " + endpoint + " is https, but no cluster TLS is set");
        }
        tls = tls_;
    }
    auto connection = std::make_unique<Connection>(parsed.host + ":" + std::to_string(parsed.port),
                                                   body_limit_bytes, std::move(tls));
    NARAD_RETURN_IF_ERROR(connection->connect(parsed, connect_timeout));
    return connection;
}

HttpEtcdTransport::~HttpEtcdTransport() = default;

std::unique_ptr<HttpEtcdTransport::Connection> HttpEtcdTransport::take_idle(
    const std::string& endpoint) {
    std::vector<std::unique_ptr<Connection>> stale;  // closed outside the lock
    std::unique_ptr<Connection> found;
    {
        MutexLock lock(mutex_);
        auto& pool = idle_[endpoint];
        while (!pool.empty() && !found) {
            auto candidate = std::move(pool.back());
            pool.pop_back();
            if (candidate->dropped()) {
                stale.push_back(std::move(candidate));
            } else {
                found = std::move(candidate);
            }
        }
    }
    return found;
}

void HttpEtcdTransport::give_back(const std::string& endpoint,
                                  std::unique_ptr<Connection> connection) {
    MutexLock lock(mutex_);
    auto& pool = idle_[endpoint];
    if (pool.size() < options_.idle_connections_per_endpoint) pool.push_back(std::move(connection));
}

Result<meta::EtcdTransport::Reply> HttpEtcdTransport::post(const std::string& endpoint,
                                                           std::string_view path,
                                                           std::string_view body, Millis timeout) {
    auto connection = take_idle(endpoint);
    if (!connection) {
        NARAD_ASSIGN_OR_RETURN(connection,
                               open_connection(endpoint, options_.response_body_limit_bytes,
                                               std::min(timeout, options_.connect_timeout)));
    }
    bool reusable = false;
    auto reply = connection->exchange(path, body, timeout, reusable);
    if (reusable) give_back(endpoint, std::move(connection));
    return reply;
}

Result<std::unique_ptr<meta::EtcdStream>> HttpEtcdTransport::open_stream(
    const std::string& endpoint, std::string_view path, std::string_view body,
    Millis connect_timeout) {
    NARAD_ASSIGN_OR_RETURN(
        auto connection,
        open_connection(endpoint, std::numeric_limits<uint64_t>::max(), connect_timeout));
    NARAD_RETURN_IF_ERROR(connection->send_stream_request(path, body, connect_timeout));
    return std::unique_ptr<meta::EtcdStream>(
        std::make_unique<Stream>(std::move(connection), options_.stream_object_bytes_max));
}

}  // namespace narad::net
