#include "net/http_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "base/mutex.h"
#include "net/http_server.h"
#include "net/load_client.h"
#include "net/test_support.h"

namespace narad::net {
namespace {

using testing::FunctionHandler;
using testing::RawSocket;
using testing::text_response;

// A scripted server on raw sockets, for behaviour a correct server never shows (closing a
// connection that has an unanswered request on it).
class ScriptedServer {
  public:
    ScriptedServer() {
        listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
        ::listen(listen_fd_, 16);
        socklen_t size = sizeof(address);
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &size);
        port_ = ntohs(address.sin_port);
    }
    ~ScriptedServer() { ::close(listen_fd_); }
    uint16_t port() const { return port_; }

    // The next connection, or -1 if none arrives within `wait`.
    int accept_one(std::chrono::milliseconds wait = std::chrono::seconds(10)) {
        pollfd pfd{listen_fd_, POLLIN, 0};
        if (::poll(&pfd, 1, static_cast<int>(wait.count())) <= 0) return -1;
        return ::accept(listen_fd_, nullptr, nullptr);
    }

    // Reads one bodiless request head; false if the connection closed first.
    static bool read_head(int fd) {
        std::string data;
        char c;
        while (data.find("\r\n\r\n") == std::string::npos) {
            pollfd pfd{fd, POLLIN, 0};
            if (::poll(&pfd, 1, 10'000) <= 0 || ::recv(fd, &c, 1, 0) != 1) return false;
            data.push_back(c);
        }
        return true;
    }

    static void answer(int fd, std::string_view body) {
        std::string response = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                               "\r\n\r\n" + std::string(body);
        ::send(fd, response.data(), response.size(), MSG_NOSIGNAL);
    }

  private:
    int listen_fd_ = -1;
    uint16_t port_ = 0;
};

class HttpClientTest : public ::testing::Test {
  protected:
    void start(ServerOptions options = {}) {
        options.address = "127.0.0.1";
        options.port = 0;
        options.shutdown_grace = Millis(100);  // some tests leave a request unanswered
        server_ = std::make_unique<HttpServer>(options, handler_);
        ASSERT_TRUE(server_->start().is_ok());
    }
    ClientOptions client_options() const {
        ClientOptions options;
        options.port = server_->port();
        return options;
    }
    size_t distinct_remotes() {
        MutexLock lock(mutex_);
        return remotes_.size();
    }

    std::function<void(HttpRequest, Responder)> on_request_ =
        [](HttpRequest request, Responder respond) { respond(text_response(200, request.path)); };
    FunctionHandler handler_{[this](HttpRequest request, Responder respond) {
        {
            MutexLock lock(mutex_);
            remotes_.insert(request.remote_address);
        }
        on_request_(std::move(request), std::move(respond));
    }};
    std::unique_ptr<HttpServer> server_;
    Mutex mutex_;
    std::set<std::string> remotes_ GUARDED_BY(mutex_);
};

// Rule: when the server closed an idle keep-alive connection, the next request goes out on a new
// connection and succeeds.
TEST_F(HttpClientTest, ReconnectsAfterServerClosedIdleConnection) {
    ServerOptions options;
    options.idle_timeout = Millis(30);
    start(options);
    HttpClient client(client_options());
    ASSERT_TRUE(client.get("/first").is_ok());
    for (int i = 0; i < 20'000 && server_->stats().connections_open > 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(server_->stats().connections_open, 0u);
    auto response = client.get("/second");
    ASSERT_TRUE(response.is_ok()) << response.status().to_string();
    EXPECT_EQ(response->body, "/second");
    EXPECT_EQ(distinct_remotes(), 2u);
}

// Rule: by default (Resend::once_if_unsent_on_reused_connection), a request that failed on a
// reused connection before any response byte arrived is sent once more on a fresh connection: the
// call succeeds, and a server that read it before closing sees it twice.
TEST_F(HttpClientTest, ResendsOnceWhenReusedConnectionDiesBeforeAnyResponseByte) {
    ScriptedServer scripted;
    std::atomic<int> seen_b{0};
    std::thread script([&] {
        int first = scripted.accept_one();
        ASSERT_GE(first, 0);
        ASSERT_TRUE(ScriptedServer::read_head(first));
        ScriptedServer::answer(first, "one");
        ASSERT_TRUE(ScriptedServer::read_head(first));
        ++seen_b;
        ::close(first);  // the request dies unanswered
        int second = scripted.accept_one();
        ASSERT_GE(second, 0);
        ASSERT_TRUE(ScriptedServer::read_head(second));
        ++seen_b;
        ScriptedServer::answer(second, "two");
        ::close(second);
    });
    ClientOptions options;
    options.port = scripted.port();
    HttpClient client(options);
    auto one = client.get("/a");
    ASSERT_TRUE(one.is_ok()) << one.status().to_string();
    EXPECT_EQ(one->body, "one");
    auto two = client.get("/b");
    script.join();
    ASSERT_TRUE(two.is_ok()) << two.status().to_string();
    EXPECT_EQ(two->body, "two");
    EXPECT_EQ(seen_b.load(), 2);
}

// Rule: with Resend::never, the same failure is returned as it is: peer_error, the request
// maybe delivered (its outcome is unknown), and the server saw it once, on no second connection.
TEST_F(HttpClientTest, ResendNeverFailsAsMaybeDeliveredAndSendsOnce) {
    ScriptedServer scripted;
    std::atomic<int> seen_b{0};
    std::thread script([&] {
        int first = scripted.accept_one();
        ASSERT_GE(first, 0);
        ASSERT_TRUE(ScriptedServer::read_head(first));
        ScriptedServer::answer(first, "one");
        if (ScriptedServer::read_head(first)) ++seen_b;
        ::close(first);  // the request dies unanswered
    });
    ClientOptions options;
    options.port = scripted.port();
    options.request_timeout = Millis(2'000);  // a wrong resend would wait for an answer this long
    HttpClient client(options);
    auto one = client.get("/a");
    ASSERT_TRUE(one.is_ok()) << one.status().to_string();
    auto two = client.request("GET", "/b", {}, "application/json", {}, Resend::never);
    script.join();
    EXPECT_EQ(two.code(), Errc::peer_error) << two.status().to_string();
    EXPECT_TRUE(client.last_request_maybe_delivered());
    EXPECT_EQ(seen_b.load(), 1);
    // The call has returned, so a resend would have connected by now (the kernel completes the
    // connection even though the script never accepts it).
    EXPECT_LT(scripted.accept_one(std::chrono::milliseconds(0)), 0) << "a second connection";
}

// Rule: an interim 1xx response is skipped; the client returns the final response after it.
TEST_F(HttpClientTest, InterimResponseIsSkipped) {
    ScriptedServer scripted;
    std::thread script([&] {
        int fd = scripted.accept_one();
        ASSERT_GE(fd, 0);
        ASSERT_TRUE(ScriptedServer::read_head(fd));
        std::string_view interim = "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n";
        ::send(fd, interim.data(), interim.size(), MSG_NOSIGNAL);
        ScriptedServer::answer(fd, "final");
        ::close(fd);
    });
    ClientOptions options;
    options.port = scripted.port();
    HttpClient client(options);
    auto response = client.get("/");
    script.join();
    ASSERT_TRUE(response.is_ok()) << response.status().to_string();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, "final");
}

// Rule: a request that fails on a fresh connection is not resent: the client reports peer_error
// naming host:port.
TEST_F(HttpClientTest, FailureOnFreshConnectionIsNotResent) {
    ScriptedServer scripted;
    std::atomic<int> accepts{0};
    std::thread script([&] {
        int fd = scripted.accept_one();
        ASSERT_GE(fd, 0);
        ++accepts;
        ScriptedServer::read_head(fd);
        ::close(fd);
        int again = scripted.accept_one(std::chrono::milliseconds(200));
        if (again >= 0) {
            ++accepts;
            ::close(again);
        }
    });
    ClientOptions options;
    options.port = scripted.port();
    HttpClient client(options);
    auto response = client.get("/a");
    script.join();
    EXPECT_EQ(response.code(), Errc::peer_error);
    EXPECT_NE(response.status().message().find("127.0.0.1:" + std::to_string(scripted.port())),
              std::string::npos);
    EXPECT_EQ(accepts.load(), 1);
}

// Rule: nothing listening is a peer_error whose message names host:port.
TEST_F(HttpClientTest, ReportsPeerErrorWhenNothingListens) {
    ClientOptions options;
    options.port = testing::unused_port();
    HttpClient client(options);
    auto response = client.get("/");
    EXPECT_EQ(response.code(), Errc::peer_error);
    EXPECT_NE(response.status().message().find("127.0.0.1:" + std::to_string(options.port)),
              std::string::npos)
        << response.status().message();
}

// Rule: a server that never answers makes the request fail with Errc::timeout after
// request_timeout, and the client works again afterwards.
TEST_F(HttpClientTest, TimesOutWhenServerNeverAnswers) {
    Mutex held_mutex;
    std::vector<Responder> held;
    on_request_ = [&](HttpRequest request, Responder respond) {
        if (request.path == "/never") {
            MutexLock lock(held_mutex);
            held.push_back(std::move(respond));
            return;
        }
        respond(text_response(200, "fine"));
    };
    start();
    auto options = client_options();
    options.request_timeout = Millis(100);
    HttpClient client(options);
    auto response = client.get("/never");
    EXPECT_EQ(response.code(), Errc::timeout);
    EXPECT_NE(response.status().message().find("127.0.0.1:" + std::to_string(server_->port())),
              std::string::npos);
    auto after = client.get("/ok");
    ASSERT_TRUE(after.is_ok()) << after.status().to_string();
    EXPECT_EQ(after->body, "fine");
}

// Rule: a HEAD response announces a length but has no body, and the client does not wait for one.
TEST_F(HttpClientTest, HeadResponseHasNoBody) {
    start();
    HttpClient client(client_options());
    auto response = client.request("HEAD", "/resource");
    ASSERT_TRUE(response.is_ok()) << response.status().to_string();
    EXPECT_EQ(response->status, 200);
    EXPECT_TRUE(response->body.empty());
    auto next = client.get("/next");
    ASSERT_TRUE(next.is_ok());
    EXPECT_EQ(next->body, "/next");
}

// Rule: the load client spreads requests over its connections, each on_response sees its own
// 200, and run() returns once every generator said nothing more.
TEST_F(HttpClientTest, LoadClientRunsRequestsOverSeveralConnections) {
    ServerOptions server_options;
    server_options.threads = 2;
    start(server_options);
    LoadOptions options;
    options.client = client_options();
    options.connections = 4;
    options.threads = 2;
    constexpr int kRequests = 2'000;
    std::atomic<int> issued{0};
    std::atomic<int> ok{0};
    std::atomic<int> wrong{0};
    LoadClient load(options);
    Status status = load.run([&](uint32_t) -> std::optional<LoadRequest> {
        int n = issued.fetch_add(1);
        if (n >= kRequests) return std::nullopt;
        LoadRequest request;
        request.method = "POST";
        request.target = "/r/" + std::to_string(n);
        request.body = "x";
        request.on_response = [&, expected = request.target](const Result<HttpResponse>& r) {
            if (r.is_ok() && r->status == 200 && r->body == expected) {
                ++ok;
            } else {
                ++wrong;
            }
        };
        return request;
    });
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    EXPECT_EQ(ok.load(), kRequests);
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(distinct_remotes(), 4u);
}

// Rule: a request the server never answers is reported as Errc::timeout to on_response, and that
// connection reconnects and carries on.
TEST_F(HttpClientTest, LoadClientReportsTimeoutsAndReconnects) {
    Mutex held_mutex;
    std::vector<Responder> held;
    on_request_ = [&](HttpRequest request, Responder respond) {
        if (request.path == "/never") {
            MutexLock lock(held_mutex);
            held.push_back(std::move(respond));
            return;
        }
        respond(text_response(200, "ok"));
    };
    start();
    LoadOptions options;
    options.client = client_options();
    options.client.request_timeout = Millis(100);
    options.connections = 1;
    std::vector<std::string> outcomes;
    int step = 0;
    LoadClient load(options);
    Status status = load.run([&](uint32_t) -> std::optional<LoadRequest> {
        if (step == 3) return std::nullopt;
        LoadRequest request;
        request.method = "GET";
        request.target = step++ == 1 ? "/never" : "/fine";
        request.on_response = [&](const Result<HttpResponse>& r) {
            outcomes.push_back(r.is_ok() ? std::to_string(r->status)
                                         : std::string(errc_name(r.code())));
        };
        return request;
    });
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    EXPECT_EQ(outcomes, (std::vector<std::string>{"200", "timeout", "200"}));
    EXPECT_EQ(distinct_remotes(), 2u);
}

// Rule: with nothing listening every request reports peer_error and run() fails.
TEST_F(HttpClientTest, LoadClientFailsWhenNoConnectionCanBeMade) {
    LoadOptions options;
    options.client.port = testing::unused_port();
    options.connections = 2;
    std::atomic<int> issued{0};
    std::atomic<int> peer_errors{0};
    LoadClient load(options);
    Status status = load.run([&](uint32_t) -> std::optional<LoadRequest> {
        if (issued.fetch_add(1) >= 6) return std::nullopt;
        LoadRequest request;
        request.method = "GET";
        request.target = "/";
        request.on_response = [&](const Result<HttpResponse>& r) {
            if (r.code() == Errc::peer_error) ++peer_errors;
        };
        return request;
    });
    EXPECT_EQ(status.code(), Errc::peer_error);
    EXPECT_EQ(peer_errors.load(), 6);
}

}  // namespace
}  // namespace narad::net
