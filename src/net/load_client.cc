// LoadClient: `threads` workers, each an io_context run by one thread and owning a share of the
// connections, so a connection's handlers never run concurrently and need neither strand nor lock.
// A connection reuses its head buffer, read buffer, parser and HttpResponse for every request;
// once warm, the only allocations per request are the generator's own. Deadlines are checked by
// one watchdog timer per worker rather than a timer per request.
#include "net/load_client.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "base/base64.h"
#include "base/log.h"
#include "base/mutex.h"
#include "net/http_wire.h"
#include "net/response_reader.h"

namespace narad::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

namespace {

constexpr size_t kReadChunkBytes = 64 * 1024;
constexpr uint32_t kConnectionsMax = 100'000;
constexpr uint32_t kThreadsMax = 256;
// Reconnect back-off after a failed connect: doubles from the minimum up to the maximum.
constexpr Millis kBackoffMin{10};
constexpr Millis kBackoffMax{1'000};

// What the workers share, read-only during the run (except the atomics).
struct Shared {
    LoadOptions options;
    LoadClient::Generator generator;
    std::vector<tcp::endpoint> endpoints;
    std::string where;  // "host:port"
    std::string authorization;
    std::atomic<bool> any_connected{false};
    std::atomic<bool> any_attempted{false};
    Mutex error_mutex;
    std::string last_connect_error GUARDED_BY(error_mutex);
};

class Worker;

class Connection {
  public:
    Connection(Worker& worker, Shared& shared, asio::io_context& ioc, uint32_t index)
        : worker_(worker),
          shared_(shared),
          index_(index),
          socket_(ioc),
          backoff_(ioc),
          reader_(shared.options.client.response_body_limit_bytes) {}

    void start() { next(); }

    // Called by the worker's watchdog: a connection past its deadline is closed, which makes its
    // pending operation complete with an error that fail() reports as a timeout.
    void check_deadline(SteadyClock::time_point now) {
        if (!busy_ || now < deadline_) return;
        timed_out_ = true;
        beast::error_code ignored;
        socket_.close(ignored);
    }

  private:
    void next();
    void finish();

    void connect() {
        shared_.any_attempted.store(true);
        begin(shared_.options.client.connect_timeout);
        connecting_ = true;
        asio::async_connect(socket_, shared_.endpoints,
                            [this](beast::error_code ec, const tcp::endpoint&) {
                                if (ec) return fail(ec);
                                connecting_ = false;
                                connected_ = true;
                                backoff_delay_ = Millis(0);
                                shared_.any_connected.store(true);
                                beast::error_code ignored;
                                socket_.set_option(tcp::no_delay(true), ignored);
                                send();
                            });
    }

    void send() {
        const LoadRequest& request = *request_;
        head_.clear();
        wire::append_request_head(
            head_, {request.method, request.target, shared_.where, shared_.authorization,
                    request.content_type, request.body.size(), nullptr,
                    shared_.options.client.client_name});
        begin(shared_.options.client.request_timeout);
        std::array<asio::const_buffer, 2> buffers{asio::buffer(head_), asio::buffer(request.body)};
        asio::async_write(socket_, buffers, [this](beast::error_code ec, size_t) {
            if (ec) return fail(ec);
            reader_.start(response_, request_->method == "HEAD");
            parse();
        });
    }

    void parse() {
        while (buffer_.size() > 0 && !reader_.done()) {
            Status error;
            auto data = buffer_.data();
            size_t used = reader_.put(
                std::string_view(static_cast<const char*>(data.data()), data.size()), error);
            buffer_.consume(used);
            if (!error.is_ok()) return fail_with(error.with_context(shared_.where), false);
            if (used == 0) break;
        }
        if (reader_.done()) return complete();
        socket_.async_read_some(buffer_.prepare(kReadChunkBytes),
                                [this](beast::error_code ec, size_t n) {
                                    if (ec == asio::error::eof && reader_.got_some()) {
                                        Status eof = reader_.put_eof();
                                        if (eof.is_ok() && reader_.done()) return complete();
                                    }
                                    if (ec) return fail(ec);
                                    buffer_.commit(n);
                                    parse();
                                });
    }

    void complete() {
        busy_ = false;
        bool keep_alive = reader_.keep_alive();
        // The response moves into the Result and back, so its buffers serve the next response.
        Result<HttpResponse> result(std::move(response_));
        deliver(result);
        response_ = std::move(result).value();
        if (!keep_alive) close();
        next();
    }

    void fail(const beast::error_code& ec) {
        if (timed_out_) {
            Millis limit = connecting_ ? shared_.options.client.connect_timeout
                                       : shared_.options.client.request_timeout;
            return fail_with(
                Status(Errc::timeout, (connecting_ ? "connecting to " : "request to ") +
                                          shared_.where + " timed out after " +
                                          std::to_string(limit.count()) + " ms"),
                connecting_);
        }
        std::string what = connecting_ ? "cannot connect to " : "request to ";
        fail_with(Status(Errc::peer_error, what + shared_.where + ": " + ec.message()),
                  connecting_);
    }

    void fail_with(Status status, bool during_connect) {
        busy_ = false;
        close();
        if (during_connect) {
            MutexLock lock(shared_.error_mutex);
            shared_.last_connect_error = status.message();
        }
        Result<HttpResponse> result(std::move(status));
        deliver(result);
        if (!during_connect) return next();
        // A refused connect fails at once; without a pause the loop would spin on the generator.
        backoff_delay_ = std::clamp(backoff_delay_ * 2, kBackoffMin, kBackoffMax);
        backoff_.expires_after(backoff_delay_);
        backoff_.async_wait([this](beast::error_code) { next(); });
    }

    void deliver(const Result<HttpResponse>& result) {
        if (!request_->on_response) return;
        try {
            request_->on_response(result);
        } catch (...) {
            NARAD_LOG_ERROR("load client: on_response threw an exception");
        }
    }

    void begin(Millis timeout) {
        busy_ = true;
        timed_out_ = false;
        deadline_ = SteadyClock::now() + timeout;
    }

    void close() {
        beast::error_code ignored;
        socket_.close(ignored);
        buffer_.consume(buffer_.size());
        connected_ = false;
        connecting_ = false;
    }

    Worker& worker_;
    Shared& shared_;
    uint32_t index_;
    tcp::socket socket_;
    asio::steady_timer backoff_;
    Millis backoff_delay_{0};
    std::optional<LoadRequest> request_;
    std::string head_;
    beast::flat_buffer buffer_;
    ResponseReader reader_;
    HttpResponse response_;
    bool connected_ = false;
    bool connecting_ = false;
    bool busy_ = false;  // an operation with a deadline is pending
    bool timed_out_ = false;
    SteadyClock::time_point deadline_;
};

class Worker {
  public:
    explicit Worker(Shared& shared) : shared_(shared), watchdog_(ioc_) {}

    void add(uint32_t index) {
        connections_.push_back(std::make_unique<Connection>(*this, shared_, ioc_, index));
    }

    void run() {
        active_ = connections_.size();
        for (auto& connection : connections_) connection->start();
        if (active_ > 0) arm_watchdog();
        ioc_.run();
    }

    void connection_done() {
        if (--active_ == 0) watchdog_.cancel();
    }

  private:
    void arm_watchdog() {
        Millis shortest = std::min(shared_.options.client.connect_timeout,
                                   shared_.options.client.request_timeout);
        watchdog_.expires_after(std::clamp(shortest / 10, Millis(5), Millis(250)));
        watchdog_.async_wait([this](beast::error_code ec) {
            if (ec || active_ == 0) return;
            auto now = SteadyClock::now();
            for (auto& connection : connections_) connection->check_deadline(now);
            arm_watchdog();
        });
    }

    Shared& shared_;
    asio::io_context ioc_{1};
    asio::steady_timer watchdog_;
    std::vector<std::unique_ptr<Connection>> connections_;
    size_t active_ = 0;
};

void Connection::next() {
    request_.reset();
    std::optional<LoadRequest> request;
    try {
        request = shared_.generator(index_);
    } catch (...) {
        NARAD_LOG_ERROR("load client: the generator threw an exception; closing connection {}",
                        index_);
    }
    if (!request) return finish();
    request_ = std::move(request);
    if (connected_) return send();
    connect();
}

void Connection::finish() {
    close();
    backoff_.cancel();
    worker_.connection_done();
}

Status resolve(const ClientOptions& options, std::vector<tcp::endpoint>& endpoints) {
    beast::error_code ec;
    auto address = asio::ip::make_address(options.host, ec);
    if (!ec) {
        endpoints.emplace_back(address, options.port);
        return Status::ok();
    }
    asio::io_context ioc{1};
    tcp::resolver resolver(ioc);
    auto results = resolver.resolve(options.host, std::to_string(options.port), ec);
    if (ec || results.empty()) {
        return Status(Errc::peer_error,
                      "cannot resolve " + options.host + ": " + (ec ? ec.message() : "no address"));
    }
    for (const auto& entry : results) endpoints.push_back(entry.endpoint());
    return Status::ok();
}

}  // namespace

class LoadClient::Impl {
  public:
    explicit Impl(LoadOptions options) : options_(std::move(options)) {}

    Status run(Generator generator) {
        if (options_.connections == 0 || options_.connections > kConnectionsMax) {
            return Status(Errc::invalid_argument,
                          "connections must be 1.." + std::to_string(kConnectionsMax));
        }
        if (options_.threads > kThreadsMax) {
            return Status(Errc::invalid_argument,
                          "threads must be 1.." + std::to_string(kThreadsMax));
        }
        Shared shared;
        shared.options = options_;
        shared.generator = std::move(generator);
        shared.where = options_.client.host + ":" + std::to_string(options_.client.port);
        if (!options_.client.basic_auth.empty()) {
            shared.authorization = "Basic " + base64_encode(options_.client.basic_auth);
        }
        NARAD_RETURN_IF_ERROR(resolve(options_.client, shared.endpoints));

        uint32_t worker_count = std::clamp<uint32_t>(options_.threads, 1, options_.connections);
        std::vector<std::unique_ptr<Worker>> workers;
        for (uint32_t i = 0; i < worker_count; ++i) {
            workers.push_back(std::make_unique<Worker>(shared));
        }
        for (uint32_t i = 0; i < options_.connections; ++i) workers[i % worker_count]->add(i);
        std::vector<std::thread> threads;
        for (uint32_t i = 1; i < worker_count; ++i) {
            threads.emplace_back([&worker = *workers[i]] { worker.run(); });
        }
        workers[0]->run();
        for (auto& thread : threads) thread.join();

        if (shared.any_attempted.load() && !shared.any_connected.load()) {
            MutexLock lock(shared.error_mutex);
            return Status(Errc::peer_error,
                          "no connection could be made: " + shared.last_connect_error);
        }
        return Status::ok();
    }

  private:
    LoadOptions options_;
};

LoadClient::LoadClient(LoadOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
LoadClient::~LoadClient() = default;

Status LoadClient::run(Generator generator) { return impl_->run(std::move(generator)); }

}  // namespace narad::net
