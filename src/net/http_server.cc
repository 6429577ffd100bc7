// The server's state (ServerCore) and the per-connection state machine (Session). Every Session
// runs on its own strand (or on the io_context itself when there is one thread), so its members
// need no lock; what sessions share lives in ServerCore, behind atomics or a mutex. Responders
// reach a session through a weak pointer and the Gate, so they stay safe to call after the
// connection or the whole server is gone.
#include "net/http_server.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/log.h"
#include "base/metrics.h"
#include "base/mutex.h"
#include "base/thread_pool.h"
#include "net/http_wire.h"
#include "net/request_reader.h"
#include "net/tls_stream.h"

namespace narad::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace {

constexpr size_t kReadChunkBytes = 16 * 1024;
// After an error response the server stops sending and reads (and drops) what the client still
// sends, so the client gets to read the response instead of a reset; at most this much, this long.
constexpr uint64_t kDrainBytesMax = 256 * 1024;
constexpr Millis kDrainTimeout{1'000};
// stop(): how long to wait for closed connections to wind down before stopping the loop anyway.
constexpr Millis kCloseWait{2'000};
// Pause before accepting again after an accept error (out of file descriptors).
constexpr Millis kAcceptRetryDelay{50};
// A response buffer larger than this is released after the write instead of kept for reuse.
constexpr size_t kKeptBodyBytesMax = 64 * 1024;
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

// A connection refused at accept, while its answer goes out and what it sends is dropped.
struct Refused {
    explicit Refused(tcp::socket socket) : stream(std::move(socket)) {}
    beast::tcp_stream stream;
    std::array<char, 4096> sink{};
    uint64_t drained = 0;
};

// Reads and drops until the client closes, kDrainBytesMax arrived or the deadline passed.
void drain_refused(const std::shared_ptr<Refused>& refused) {
    refused->stream.async_read_some(asio::buffer(refused->sink),
                                    [refused](beast::error_code ec, size_t n) {
                                        refused->drained += n;
                                        if (ec || refused->drained > kDrainBytesMax) {
                                            return refused->stream.close();
                                        }
                                        drain_refused(refused);
                                    });
}

struct ServerMetrics {
    metrics::Gauge& in_flight;
    metrics::Counter& refused_per_address;
};

ServerMetrics& server_metrics() {
    auto& registry = metrics::Registry::global();
    static ServerMetrics instance{
        registry.gauge("narad_http_requests_in_flight", "HTTP requests read and not yet answered")
            .get(),
        registry
            .counter("narad_http_connections_refused_total",
                     "Connections answered 503 and closed because their client address already "
                     "had http.max_connections_per_address open")
            .get()};
    return instance;
}

std::string json_error(std::string_view message) {
    std::string body = "{\"error\":\"";
    body.append(message);
    body.append("\"}");
    return body;
}

// Closed when the server stops: a responder or a task cancel that finds it closed must not touch
// the io_context, which may be gone.
struct Gate {
    Mutex mutex;
    bool open GUARDED_BY(mutex) = true;
};

class Session;

// What every session shares: options, handler, counters, the registry of open sessions.
class ServerCore {
  public:
    ServerCore(ServerOptions options, HttpHandler& handler)
        : options_(std::move(options)),
          handler_(handler),
          acceptor_(asio::make_strand(ioc_)),
          accept_retry_timer_(acceptor_.get_executor()),
          metrics_(server_metrics()) {}
    virtual ~ServerCore() = default;

    const ServerOptions& options() const { return options_; }
    HttpHandler& handler() { return handler_; }
    const std::shared_ptr<Gate>& gate() const { return gate_; }
    ServerMetrics& metrics() { return metrics_; }
    bool stopping() const { return stopping_.load(); }

    void request_started() {
        in_flight_.fetch_add(1);
        metrics_.in_flight.add(1);
    }
    void request_finished() {
        metrics_.in_flight.add(-1);
        if (in_flight_.fetch_sub(1) == 1 && stopping_.load()) notify_stop();
    }
    void session_closed(Session* session, const std::string& address) {
        bool resume = false;
        {
            MutexLock lock(sessions_mutex_);
            if (sessions_.erase(session) > 0) release_address(address);
            connections_open_.store(sessions_.size());
            resume = accept_paused_ && !at_connection_cap();
            if (resume) accept_paused_ = false;
        }
        if (stopping_.load()) notify_stop();
        if (resume) asio::post(acceptor_.get_executor(), [this] { accept(); });
    }

  protected:
    void notify_stop() {
        MutexLock lock(stop_mutex_);
        stop_cv_.notify_all();
    }

    // Declared first so it is destroyed last: sessions and timers still queued in it are
    // destroyed with it and must find nothing else gone yet except what they do not touch.
    asio::io_context ioc_;
    ServerOptions options_;
    HttpHandler& handler_;
    std::shared_ptr<Gate> gate_ = std::make_shared<Gate>();
    tcp::acceptor acceptor_;                 // used on its strand only
    asio::steady_timer accept_retry_timer_;  // on the acceptor's strand
    ServerMetrics& metrics_;

    std::atomic<bool> stopping_{false};
    std::atomic<uint64_t> in_flight_{0};
    std::atomic<uint64_t> connections_open_{0};
    Mutex stop_mutex_;
    CondVar stop_cv_;  // signalled when in_flight_ or the session count drops

    // At connections_max the acceptor stops until a connection closes: clients beyond the cap wait
    // in the listen backlog (never accepted only to be closed).
    bool at_connection_cap() const REQUIRES(sessions_mutex_) {
        return options_.connections_max != 0 && sessions_.size() >= options_.connections_max;
    }
    virtual void accept() = 0;
    bool accept_paused_ GUARDED_BY(sessions_mutex_) = false;

    // Counts one more connection from `address`; false (nothing counted) at the per-address cap.
    bool admit_address(const std::string& address) REQUIRES(sessions_mutex_) {
        uint32_t& open = per_address_[address];
        if (options_.connections_per_address_max != 0 &&
            open >= options_.connections_per_address_max) {
            return false;  // open >= 1 here, so the entry was there before
        }
        ++open;
        return true;
    }
    void release_address(const std::string& address) REQUIRES(sessions_mutex_) {
        auto it = per_address_.find(address);
        if (it != per_address_.end() && --it->second == 0) per_address_.erase(it);
    }
    std::unordered_map<std::string, uint32_t> per_address_ GUARDED_BY(sessions_mutex_);

    // What new connections speak TLS with (null: plain); replaced whole by reload_tls().
    std::shared_ptr<TlsContext> current_tls() {
        MutexLock lock(tls_mutex_);
        return tls_;
    }
    Mutex tls_mutex_;
    std::shared_ptr<TlsContext> tls_ GUARDED_BY(tls_mutex_);
    std::atomic<uint64_t> refused_per_address_{0};

    Mutex sessions_mutex_;
    std::unordered_map<Session*, std::shared_ptr<Session>> sessions_ GUARDED_BY(sessions_mutex_);
};

// The session whose handler call is on the stack of this thread: a responder called from inside
// handle() stores its response there, saving a post and a lock on the fast path.
thread_local Session* tl_inline_session = nullptr;

class Session : public std::enable_shared_from_this<Session> {
  public:
    Session(ServerCore& server, tcp::socket socket, std::string remote_ip,
            std::shared_ptr<TlsContext> tls)
        : server_(server),
          stream_(beast::tcp_stream(std::move(socket)), std::move(tls)),
          buffer_(server.options().header_limit_bytes + 2 * kReadChunkBytes),
          remote_ip_(std::move(remote_ip)) {
        beast::error_code ec;
        auto endpoint = stream_.tcp().socket().remote_endpoint(ec);
        if (!ec) {
            auto address = endpoint.address();
            remote_address_ =
                address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
            remote_address_ += ":" + std::to_string(endpoint.port());
        }
    }

    asio::any_io_executor executor() { return stream_.tcp().get_executor(); }

    void start() {
        if (!stream_.tls()) return read_next();
        // The TLS handshake gets the read deadline, as a request's head does.
        phase_ = Phase::reading;
        stream_.tcp().expires_after(server_.options().read_timeout);
        stream_.tls_stream().async_handshake(
            asio::ssl::stream_base::server, [self = shared_from_this()](beast::error_code ec) {
                if (ec) {
                    NARAD_LOG_DEBUG("TLS handshake with {} failed: {}", self->remote_address_,
                                    ec.message());
                    return self->close();
                }
                self->read_next();
            });
    }

    // The server stops: a connection between requests, or still receiving one, closes now; one
    // whose request is with the handler closes after its response.
    void begin_shutdown() {
        if (phase_ == Phase::idle || phase_ == Phase::reading) close();
    }

    void close() {
        if (phase_ == Phase::closed) return;
        phase_ = Phase::closed;
        finish_in_flight();
        stream_.tcp().close();
        server_.session_closed(this, remote_ip_);
    }

    // On the strand: the response for request `seq`, unless the connection moved on.
    void deliver(uint64_t seq, HttpResponse response) {
        if (phase_ != Phase::handling || seq != seq_) return;
        write_response(std::move(response));
    }

    // From a responder running inside handle() on this session's strand.
    bool capture_inline(uint64_t seq, HttpResponse& response) {
        if (phase_ != Phase::handling || seq != seq_ || inline_response_) return false;
        inline_response_ = std::move(response);
        return true;
    }

  private:
    enum class Phase { idle, reading, handling, writing, draining, closed };

    uint64_t body_ceiling() const {
        const ServerOptions& options = server_.options();
        return std::max(options.body_limit_bytes, options.body_limit_ceiling_bytes);
    }

    void read_next() {
        if (server_.stopping()) return close();
        phase_ = Phase::idle;
        screened_ = false;
        request_ = HttpRequest();
        reader_.start(request_, {body_ceiling(), server_.options().header_limit_bytes});
        if (buffer_.size() > 0) {
            // Pipelined: the next request has started arriving already.
            phase_ = Phase::reading;
            stream_.tcp().expires_after(server_.options().read_timeout);
            return parse();
        }
        stream_.tcp().expires_after(server_.options().idle_timeout);
        stream_.async_read_some(buffer_.prepare(kReadChunkBytes),
                                [self = shared_from_this()](beast::error_code ec, size_t n) {
                                    self->on_first_bytes(ec, n);
                                });
    }

    void on_first_bytes(beast::error_code ec, size_t n) {
        if (ec) return close();  // idle timeout, client closed, or shutdown
        buffer_.commit(n);
        // The read timeout runs from the first byte of a request, not from the end of the last.
        phase_ = Phase::reading;
        stream_.tcp().expires_after(server_.options().read_timeout);
        parse();
    }

    void parse() {
        auto data = buffer_.data();
        size_t used = 0;
        auto outcome =
            reader_.put(std::string_view(static_cast<const char*>(data.data()), data.size()), used);
        buffer_.consume(used);
        if (reader_.header_done() && !screened_) {
            // The head is in and nothing of the body has been read yet: the handler may refuse
            // the request now (the cluster port's secret), before the body costs anything.
            screened_ = true;
            if (!parse_target(request_.target, request_.path, request_.query)) {
                return send_error(400, "malformed request");
            }
            request_.remote_address = remote_address_;
            request_.connection = connection_;
            if (auto refusal = server_.handler().screen(request_)) return refuse(*refusal);
            uint64_t limit = std::min(
                server_.handler().body_limit(request_).value_or(server_.options().body_limit_bytes),
                body_ceiling());
            if (!reader_.limit_body(limit)) return reject(413, "request body too large");
        }
        switch (outcome) {
            case RequestReader::Outcome::done:
                return dispatch();
            case RequestReader::Outcome::head_done:
                return parse();  // on to the body, with what is already buffered
            case RequestReader::Outcome::need_more:
                break;
            case RequestReader::Outcome::body_too_large:
                return reject(413, "request body too large");
            case RequestReader::Outcome::header_too_large:
                return reject(431, "request header too large");
            case RequestReader::Outcome::malformed:
                return reject(400, "malformed request");
        }
        if (reader_.header_done() && reader_.expects_continue() && !sent_continue_) {
            // curl and others wait for this before sending a large body (RFC 9110 §10.1.1).
            sent_continue_ = true;
            stream_.async_write(asio::buffer(kContinue.data(), kContinue.size()),
                                [self = shared_from_this()](beast::error_code ec, size_t) {
                                    if (ec) return self->close();
                                    self->read_more();
                                });
            return;
        }
        read_more();
    }

    void read_more() {
        if (buffer_.size() + kReadChunkBytes > buffer_.max_size()) {
            return reject(431, "request header too large");
        }
        stream_.async_read_some(buffer_.prepare(kReadChunkBytes),
                                [self = shared_from_this()](beast::error_code ec, size_t n) {
                                    if (ec) return self->close();  // timeout, reset, close
                                    self->buffer_.commit(n);
                                    self->parse();
                                });
    }

    void reject(int status, std::string_view message) { send_error(status, message); }

    // Answers a request its handler screened out, then closes. What the client still sends (the
    // body it did not wait to send) is read and dropped for a bounded while, never buffered, so
    // the close does not reset the connection before the answer is read.
    void refuse(HttpResponse response) {
        keep_alive_ = false;
        head_request_ = false;
        version_ = 11;
        write_response(std::move(response));
    }

    void dispatch() {
        sent_continue_ = false;
        if (server_.stopping()) return close();
        // The target was parsed, and the remote address set, when the head was screened.
        version_ = reader_.version();
        keep_alive_ = reader_.keep_alive();
        head_request_ = request_.method == "HEAD";
        phase_ = Phase::handling;
        in_flight_ = true;
        server_.request_started();
        uint64_t seq = ++seq_;
        // What screen() reserved is released as the answer goes out (or when the responder is
        // dropped unanswered).
        Responder responder = [session = weak_from_this(), gate = server_.gate(), seq,
                               admission = request_.admission](HttpResponse response) {
            if (admission) admission->release();
            respond(session, gate, seq, std::move(response));
        };
        // Handlers hold no read timeout: a long poll may keep its request for seconds.
        stream_.tcp().expires_never();
        tl_inline_session = this;
        try {
            server_.handler().handle(std::move(request_), std::move(responder));
        } catch (...) {
            // Exceptions never cross the module boundary: the client gets a 500 instead.
            NARAD_LOG_ERROR("HTTP handler threw an exception");
            if (!inline_response_ && phase_ == Phase::handling) {
                inline_response_ =
                    HttpResponse{500, "application/json", json_error("internal error"), {}};
            }
        }
        tl_inline_session = nullptr;
        if (inline_response_) {
            HttpResponse response = std::move(*inline_response_);
            inline_response_.reset();
            write_response(std::move(response));
        }
    }

    static void respond(const std::weak_ptr<Session>& weak, const std::shared_ptr<Gate>& gate,
                        uint64_t seq, HttpResponse response) {
        if (Session* current = tl_inline_session; current != nullptr) {
            auto session = weak.lock();
            if (session.get() == current && current->capture_inline(seq, response)) return;
        }
        MutexLock lock(gate->mutex);
        if (!gate->open) return;  // the server stopped; the io_context may be gone
        auto session = weak.lock();
        if (!session) return;  // the connection died meanwhile
        auto executor = session->executor();
        asio::post(executor,
                   [session = std::move(session), seq, response = std::move(response)]() mutable {
                       session->deliver(seq, std::move(response));
                   });
    }

    void send_error(int status, std::string_view message) {
        keep_alive_ = false;
        head_request_ = false;
        version_ = 11;
        write_response(HttpResponse{status, "application/json", json_error(message), {}});
    }

    void write_response(HttpResponse response) {
        phase_ = Phase::writing;
        response_ = std::move(response);
        keep_alive_ = keep_alive_ && !server_.stopping();
        head_.clear();
        wire::append_response_head(head_, response_, {version_, keep_alive_, head_request_});
        bool send_body = !head_request_ && wire::status_has_body(response_.status);
        std::array<asio::const_buffer, 2> buffers{
            asio::buffer(head_), send_body ? asio::buffer(response_.body) : asio::const_buffer()};
        stream_.tcp().expires_after(server_.options().write_timeout);
        stream_.async_write(buffers, [self = shared_from_this()](beast::error_code ec, size_t n) {
            self->on_written(ec, n);
        });
    }

    void on_written(beast::error_code ec, size_t /*bytes*/) {
        finish_in_flight();
        if (response_.body.capacity() > kKeptBodyBytesMax) response_ = HttpResponse();
        if (ec) return close();
        if (!keep_alive_) return linger_close();
        read_next();
    }

    // Half-closes, then drains what the client still sends for a while: closing with unread
    // input makes the kernel send a reset, which can destroy the response before it is read.
    void linger_close() {
        phase_ = Phase::draining;
        beast::error_code ec;
        stream_.tcp().socket().shutdown(tcp::socket::shutdown_send, ec);
        if (ec) return close();
        buffer_.consume(buffer_.size());
        drained_bytes_ = 0;
        stream_.tcp().expires_after(kDrainTimeout);
        drain();
    }

    void drain() {
        stream_.async_read_some(buffer_.prepare(kReadChunkBytes),
                                [self = shared_from_this()](beast::error_code ec, size_t n) {
                                    self->drained_bytes_ += n;
                                    if (ec || self->drained_bytes_ > kDrainBytesMax) {
                                        return self->close();
                                    }
                                    self->drain();
                                });
    }

    void finish_in_flight() {
        if (!in_flight_) return;
        in_flight_ = false;
        server_.request_finished();
    }

    ServerCore& server_;
    MaybeTlsStream stream_;
    beast::flat_buffer buffer_;
    std::string remote_address_;
    std::string remote_ip_;  // what the per-address connection cap counts
    std::shared_ptr<ConnectionState> connection_ = std::make_shared<ConnectionState>();
    Phase phase_ = Phase::idle;
    HttpRequest request_;
    RequestReader reader_;  // writes into request_
    bool sent_continue_ = false;
    bool screened_ = false;  // the handler has seen this request's head
    uint64_t seq_ = 0;       // of the request with the handler; a stale responder's number differs
    int version_ = 11;
    bool keep_alive_ = false;
    bool head_request_ = false;
    bool in_flight_ = false;  // counted in the server's requests in flight
    std::optional<HttpResponse> inline_response_;
    HttpResponse response_;  // being written
    std::string head_;       // being written
    uint64_t drained_bytes_ = 0;
};

}  // namespace

class HttpServer::Impl : public ServerCore {
  public:
    using ServerCore::ServerCore;
    ~Impl();

    Status start();
    Status reload_tls();
    void stop();
    uint16_t port() const { return port_.load(); }
    ServerStats stats() const {
        return {connections_open_.load(), refused_per_address_.load(), in_flight_.load()};
    }

  private:
    enum class State { created, running, stopped };

    Status listen();
    void accept() override;
    void on_accept(beast::error_code ec, tcp::socket socket);
    void refuse_connection(tcp::socket socket, const std::string& ip);
    std::vector<std::shared_ptr<Session>> sessions_snapshot();
    bool on_server_thread() const;
    void wait_until(Millis limit, const std::function<bool()>& done);

    Mutex lifecycle_mutex_;  // serialises start() and stop()
    State state_ GUARDED_BY(lifecycle_mutex_) = State::created;
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
    std::vector<std::thread> threads_ GUARDED_BY(lifecycle_mutex_);
    std::vector<std::thread::id> thread_ids_;  // written before the threads start
    std::atomic<uint16_t> port_{0};
};

HttpServer::Impl::~Impl() {
    stop();
    // Responders and task handles may outlive the server; from now on they do nothing.
    MutexLock lock(gate_->mutex);
    gate_->open = false;
}

Status HttpServer::Impl::listen() {
    beast::error_code ec;
    std::string where = options_.address + ":" + std::to_string(options_.port);
    auto address = asio::ip::make_address(options_.address, ec);
    tcp::endpoint endpoint;
    if (!ec) {
        endpoint = tcp::endpoint(address, options_.port);
    } else {
        tcp::resolver resolver(ioc_);
        auto results = resolver.resolve(options_.address, std::to_string(options_.port),
                                        tcp::resolver::passive, ec);
        if (ec || results.empty()) {
            return Status(Errc::unavailable,
                          "cannot listen on " + where + ": " + (ec ? ec.message() : "no address"));
        }
        endpoint = results.begin()->endpoint();
    }
    auto fail = [&](std::string_view step) {
        beast::error_code ignored;
        acceptor_.close(ignored);
        return Status(Errc::unavailable,
                      "cannot listen on " + where + ": " + std::string(step) + ": " + ec.message());
    };
    if (acceptor_.open(endpoint.protocol(), ec)) return fail("open");
    if (acceptor_.set_option(asio::socket_base::reuse_address(true), ec)) return fail("setsockopt");
    if (acceptor_.bind(endpoint, ec)) return fail("bind");
    if (acceptor_.listen(asio::socket_base::max_listen_connections, ec)) return fail("listen");
    auto local = acceptor_.local_endpoint(ec);
    if (ec) return fail("getsockname");
    port_.store(local.port());
    return Status::ok();
}

Status HttpServer::Impl::reload_tls() {
    if (!options_.tls) return Status::ok();
    auto loaded = make_server_tls(*options_.tls);
    if (!loaded.is_ok()) return loaded.status();
    MutexLock lock(tls_mutex_);
    tls_ = std::move(*loaded);
    return Status::ok();
}

Status HttpServer::Impl::start() {
    MutexLock lock(lifecycle_mutex_);
    if (state_ == State::running) return Status::ok();
    if (state_ == State::stopped) {
        return Status(Errc::shutting_down, "the HTTP server was stopped and cannot restart");
    }
    NARAD_RETURN_IF_ERROR(reload_tls());
    NARAD_RETURN_IF_ERROR(listen());
    work_.emplace(ioc_.get_executor());
    uint32_t count = std::max<uint32_t>(1, options_.threads);
    Mutex started_mutex;
    CondVar started_cv;
    size_t started = 0;
    for (uint32_t i = 0; i < count; ++i) {
        threads_.push_back(
            named_thread("narad-http", [this, &started_mutex, &started_cv, &started] {
                {
                    MutexLock started_lock(started_mutex);
                    thread_ids_.push_back(std::this_thread::get_id());
                    ++started;
                    started_cv.notify_all();
                }
                for (;;) {
                    try {
                        ioc_.run();
                        return;
                    } catch (const std::exception& e) {
                        NARAD_LOG_ERROR("HTTP server loop: {}", e.what());
                    }
                }
            }));
    }
    {
        MutexLock started_lock(started_mutex);
        started_cv.wait(started_lock, [&] { return started == count; });
    }
    asio::post(acceptor_.get_executor(), [this] { accept(); });
    state_ = State::running;
    NARAD_LOG_INFO("HTTP server listening on {}:{}", options_.address, port_.load());
    return Status::ok();
}

void HttpServer::Impl::accept() {
    // More than one thread: each connection gets its own strand so its handlers never overlap.
    asio::any_io_executor executor = options_.threads > 1
                                         ? asio::any_io_executor(asio::make_strand(ioc_))
                                         : asio::any_io_executor(ioc_.get_executor());
    acceptor_.async_accept(executor, [this](beast::error_code ec, tcp::socket socket) {
        on_accept(ec, std::move(socket));
    });
}

void HttpServer::Impl::on_accept(beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
        NARAD_LOG_WARN("HTTP accept failed: {}", ec.message());
        accept_retry_timer_.expires_after(kAcceptRetryDelay);
        accept_retry_timer_.async_wait([this](beast::error_code wait_ec) {
            if (!wait_ec && acceptor_.is_open()) accept();
        });
        return;
    }
    beast::error_code ignored;
    bool paused = false;
    if (stopping_.load()) {
        socket.close(ignored);
    } else {
        socket.set_option(tcp::no_delay(true), ignored);
        auto endpoint = socket.remote_endpoint(ignored);
        std::string ip = ignored ? std::string() : endpoint.address().to_string();
        std::shared_ptr<Session> session;
        {
            MutexLock lock(sessions_mutex_);
            if (admit_address(ip)) {
                session = std::make_shared<Session>(*this, std::move(socket), ip, current_tls());
                sessions_.emplace(session.get(), session);
                connections_open_.store(sessions_.size());
                paused = accept_paused_ = at_connection_cap();
            }
        }
        if (session) {
            auto executor = session->executor();
            asio::dispatch(executor, [session] { session->start(); });
        } else {
            refuse_connection(std::move(socket), ip);
        }
    }
    if (!paused) accept();
}

// One connection too many from an address. On a plain port it is answered 503 and what it sends
// meanwhile is read and dropped for a bounded while (so the close does not reset the answer away);
// a TLS port just closes it, as its client could not read a plain answer.
void HttpServer::Impl::refuse_connection(tcp::socket socket, const std::string& ip) {
    metrics_.refused_per_address.inc();
    if (refused_per_address_.fetch_add(1) % 1000 == 0) {
        NARAD_LOG_WARN(
            "{} has {} connections open, the most one address may have "
            "(http.max_connections_per_address); refusing more",
            ip, options_.connections_per_address_max);
    }
    beast::error_code ignored;
    if (options_.tls) {
        socket.close(ignored);
        return;
    }
    static const std::string kAnswer = [] {
        std::string body = "{\"error\":\"too many connections from this address\"}\n";
        return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
               "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body;
    }();
    auto refused = std::make_shared<Refused>(std::move(socket));
    refused->stream.expires_after(kDrainTimeout);
    asio::async_write(refused->stream, asio::buffer(kAnswer),
                      [refused](beast::error_code ec, size_t) {
                          beast::error_code unused;
                          if (ec) return refused->stream.close();
                          refused->stream.socket().shutdown(tcp::socket::shutdown_send, unused);
                          drain_refused(refused);
                      });
}

std::vector<std::shared_ptr<Session>> HttpServer::Impl::sessions_snapshot() {
    MutexLock lock(sessions_mutex_);
    std::vector<std::shared_ptr<Session>> result;
    result.reserve(sessions_.size());
    for (const auto& [raw, session] : sessions_) result.push_back(session);
    return result;
}

bool HttpServer::Impl::on_server_thread() const {
    auto me = std::this_thread::get_id();
    for (auto id : thread_ids_) {
        if (id == me) return true;
    }
    return false;
}

void HttpServer::Impl::wait_until(Millis limit, const std::function<bool()>& done) {
    MutexLock lock(stop_mutex_);
    stop_cv_.wait_for(lock, limit, done);
}

void HttpServer::Impl::stop() {
    MutexLock lock(lifecycle_mutex_);
    if (state_ != State::running) return;
    NARAD_ASSERT(!on_server_thread(), "HttpServer::stop() called from a server thread");
    stopping_.store(true);
    asio::post(acceptor_.get_executor(), [this] {
        beast::error_code ignored;
        acceptor_.close(ignored);
        accept_retry_timer_.cancel();
    });
    for (auto& session : sessions_snapshot()) {
        asio::post(session->executor(), [session] { session->begin_shutdown(); });
    }
    // Requests with the handler get the grace to be answered; their connections close after.
    wait_until(options_.shutdown_grace, [this] { return in_flight_.load() == 0; });
    for (auto& session : sessions_snapshot()) {
        asio::post(session->executor(), [session] { session->close(); });
    }
    wait_until(kCloseWait, [this] { return connections_open_.load() == 0; });
    {
        MutexLock gate_lock(gate_->mutex);
        gate_->open = false;
    }
    work_.reset();
    ioc_.stop();
    for (auto& thread : threads_) thread.join();
    threads_.clear();
    // Anything the loop did not get to close (a session stuck past kCloseWait) closes here, with
    // the threads gone, so nothing races with it.
    for (auto& session : sessions_snapshot()) session->close();
    uint64_t abandoned = in_flight_.exchange(0);
    metrics_.in_flight.add(-static_cast<double>(abandoned));
    state_ = State::stopped;
    NARAD_LOG_INFO("HTTP server on port {} stopped", port_.load());
}

HttpServer::HttpServer(ServerOptions options, HttpHandler& handler)
    : impl_(std::make_unique<Impl>(std::move(options), handler)) {}

HttpServer::~HttpServer() = default;

Status HttpServer::start() { return impl_->start(); }

Status HttpServer::reload_tls() { return impl_->reload_tls(); }
void HttpServer::stop() { impl_->stop(); }
uint16_t HttpServer::port() const { return impl_->port(); }
ServerStats HttpServer::stats() const { return impl_->stats(); }

}  // namespace narad::net
