// LoadClient: `threads` workers, each an io_context run by one thread and owning a share of the
// connections, so a connection's handlers never run concurrently and need neither strand nor lock.
// A connection reuses its ClientConnection (head buffer, read buffer, parser) and its HttpResponse
// for every request; once warm, the only allocations per request are the generator's own.
// Deadlines are checked by one watchdog timer per worker rather than a timer per request.
#include "net/load_client.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/error.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/mutex.h"
#include "net/client_connection.h"

namespace narad::net {
namespace asio = boost::asio;
namespace beast = boost::beast;

namespace {

constexpr uint32_t kConnectionsMax = 100'000;
constexpr uint32_t kThreadsMax = 256;
// Reconnect back-off after a failed connect: doubles from the minimum up to the maximum.
constexpr Millis kBackoffMin{10};
constexpr Millis kBackoffMax{1'000};

// What the workers share, read-only during the run (except the atomics).
struct Shared {
    LoadOptions options;
    LoadClient::Generator generator;
    std::shared_ptr<const ConnectionTarget> target;
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
          connection_(ioc, shared.target),
          backoff_(ioc) {}

    void start() { next(); }

    // Called by the worker's watchdog: a pending operation past its deadline fails with
    // Errc::timeout.
    void check_deadline(MonoTime now) { connection_.expire_if_due(now); }

  private:
    void next();
    void finish();

    void connect() {
        shared_.any_attempted.store(true);
        connection_.async_connect(shared_.options.client.connect_timeout, [this](Status status) {
            if (!status.is_ok()) return fail_connect(std::move(status));
            backoff_delay_ = Millis(0);
            shared_.any_connected.store(true);
            send();
        });
    }

    void send() {
        const LoadRequest& request = *request_;
        const ClientRequest sent{
            .method = request.method,
            .target = request.target,
            .body = request.body,
            .content_type = request.content_type,
            .response_body_limit_bytes = shared_.options.client.response_body_limit_bytes};
        connection_.async_exchange(sent, response_, shared_.options.client.request_timeout,
                                   [this](const ExchangeResult& result) {
                                       if (!result.status.is_ok()) {
                                           deliver(Result<HttpResponse>(result.status));
                                           return next();
                                       }
                                       // The response moves into the Result and back, so its
                                       // buffers serve the next response.
                                       Result<HttpResponse> answer(std::move(response_));
                                       deliver(answer);
                                       response_ = std::move(answer).value();
                                       next();
                                   });
    }

    void fail_connect(Status status) {
        {
            MutexLock lock(shared_.error_mutex);
            shared_.last_connect_error = status.message();
        }
        deliver(Result<HttpResponse>(std::move(status)));
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

    Worker& worker_;
    Shared& shared_;
    uint32_t index_;
    ClientConnection connection_;
    asio::steady_timer backoff_;
    Millis backoff_delay_{0};
    std::optional<LoadRequest> request_;
    HttpResponse response_;
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
            auto now = std::chrono::steady_clock::now();
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
    if (connection_.is_open()) return send();
    connect();
}

void Connection::finish() {
    connection_.close();
    backoff_.cancel();
    worker_.connection_done();
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
        NARAD_ASSIGN_OR_RETURN(shared.target, make_connection_target(options_.client));

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
