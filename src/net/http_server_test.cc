#include "net/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <set>
#include <thread>

#include "base/metrics.h"
#include "base/mutex.h"
#include "net/http_client.h"
#include "net/test_support.h"

namespace narad::net {
namespace {

using testing::FunctionHandler;
using testing::RawSocket;
using testing::text_response;

// Long enough never to fire in a passing test; the bound only turns a hang into a failure.
constexpr auto kWaitLimit = std::chrono::seconds(20);

class HttpServerTest : public ::testing::Test {
  protected:
    void start(ServerOptions options = {}) {
        options.address = "127.0.0.1";
        options.port = 0;
        server_ = std::make_unique<HttpServer>(options, handler_);
        ASSERT_TRUE(server_->start().is_ok());
        ASSERT_NE(server_->port(), 0);
    }

    ClientOptions client_options() const {
        ClientOptions options;
        options.port = server_->port();
        return options;
    }

    // Records each request and answers 200 with its body, unless a test replaces on_request_.
    void record(const HttpRequest& request) {
        MutexLock lock(mutex_);
        requests_.push_back(request);
        cv_.notify_all();
    }
    size_t request_count() {
        MutexLock lock(mutex_);
        return requests_.size();
    }
    std::vector<HttpRequest> requests() {
        MutexLock lock(mutex_);
        return requests_;
    }
    bool wait_for_requests(size_t count) {
        MutexLock lock(mutex_);
        return cv_.wait_for(lock, kWaitLimit,
                            [&]() REQUIRES(mutex_) { return requests_.size() >= count; });
    }

    std::function<void(HttpRequest, Responder)> on_request_ = [this](HttpRequest request,
                                                                     Responder respond) {
        record(request);
        respond(text_response(200, request.body));
    };
    FunctionHandler handler_{[this](HttpRequest request, Responder respond) {
        on_request_(std::move(request), std::move(respond));
    }};
    std::unique_ptr<HttpServer> server_;
    Mutex mutex_;
    CondVar cv_;
    std::vector<HttpRequest> requests_ GUARDED_BY(mutex_);
};

// Rule: a request's method, raw target, decoded path, decoded query (in order, duplicates kept),
// lower-cased headers, body and remote address reach the handler, and the handler's status, type,
// body and extra headers reach the client; the byte counters count both ways.
TEST_F(HttpServerTest, RoundTripCarriesEveryPartOfRequestAndResponse) {
    start();
    on_request_ = [this](HttpRequest request, Responder respond) {
        record(request);
        HttpResponse response = text_response(201, "created");
        response.headers = {{"X-Reply", "yes"}};
        respond(std::move(response));
    };
    auto options = client_options();
    options.basic_auth = "user:pw";
    HttpClient client(options);
    auto response = client.request("PUT", "/v1/a%20b?x=1&y=a+b&x=%2B3", "payload", "text/plain",
                                   {{"X-Custom", "Value"}});
    ASSERT_TRUE(response.is_ok()) << response.status().to_string();
    EXPECT_EQ(response->status, 201);
    EXPECT_EQ(response->body, "created");
    EXPECT_EQ(response->content_type, "text/plain");
    bool saw_reply = false;
    for (const auto& [name, value] : response->headers)
        saw_reply |= name == "x-reply" && value == "yes";
    EXPECT_TRUE(saw_reply);

    auto seen = requests();
    ASSERT_EQ(seen.size(), 1u);
    const HttpRequest& request = seen[0];
    EXPECT_EQ(request.method, "PUT");
    EXPECT_EQ(request.target, "/v1/a%20b?x=1&y=a+b&x=%2B3");
    EXPECT_EQ(request.path, "/v1/a b");
    using Query = std::vector<std::pair<std::string, std::string>>;
    EXPECT_EQ(request.query, (Query{{"x", "1"}, {"y", "a b"}, {"x", "+3"}}));
    EXPECT_EQ(request.query_count("x"), 2u);
    EXPECT_EQ(request.header("x-custom"), "Value");
    EXPECT_EQ(request.header("content-type"), "text/plain");
    EXPECT_EQ(request.header("authorization"), "Basic dXNlcjpwdw==");
    for (const auto& [name, value] : request.headers) {
        for (char c : name) EXPECT_FALSE(c >= 'A' && c <= 'Z') << name;
    }
    EXPECT_EQ(request.body, "payload");
    EXPECT_EQ(request.remote_address.rfind("127.0.0.1:", 0), 0u) << request.remote_address;
}

// Rule: a keep-alive client sends many requests over one connection.
TEST_F(HttpServerTest, KeepAliveReusesOneConnection) {
    start();
    HttpClient client(client_options());
    for (int i = 0; i < 50; ++i) {
        auto response = client.post("/echo", std::to_string(i));
        ASSERT_TRUE(response.is_ok()) << response.status().to_string();
        EXPECT_EQ(response->body, std::to_string(i));
    }
    std::set<std::string> remotes;
    for (const auto& request : requests()) remotes.insert(request.remote_address);
    EXPECT_EQ(remotes.size(), 1u);
    EXPECT_EQ(server_->stats().connections_open, 1u);
}

// Rule: a body over body_limit_bytes is answered 413 with the JSON error and never reaches the
// handler.
TEST_F(HttpServerTest, BodyOverLimitGets413AndNeverReachesHandler) {
    ServerOptions options;
    options.body_limit_bytes = 1024;
    start(options);
    HttpClient client(client_options());
    auto response = client.post("/big", std::string(2048, 'x'));
    ASSERT_TRUE(response.is_ok()) << response.status().to_string();
    EXPECT_EQ(response->status, 413);
    EXPECT_EQ(response->content_type, "application/json");
    EXPECT_EQ(response->body, "{\"error\":\"request body too large\"}");
    // Far more than the server drains: the client still reads the early 413 instead of failing
    // on the reset its unfinished upload runs into.
    auto huge = client.post("/huge", std::string(8 << 20, 'x'));
    ASSERT_TRUE(huge.is_ok()) << huge.status().to_string();
    EXPECT_EQ(huge->status, 413);
    auto small = client.post("/small", std::string(1024, 'x'));  // reconnects: 413 closed it
    ASSERT_TRUE(small.is_ok()) << small.status().to_string();
    EXPECT_EQ(small->status, 200);
    auto seen = requests();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].path, "/small");
}

// Rule: a handler may raise one route's body limit up to the server's ceiling, and only that
// route's; a chunked body is held to the raised limit too.
TEST_F(HttpServerTest, RouteBodyLimitRaisesOneRouteUpToTheCeiling) {
    ServerOptions options;
    options.body_limit_bytes = 1024;
    options.body_limit_ceiling_bytes = 8192;
    handler_.body_limit_fn = [](const HttpRequest& head) -> std::optional<uint64_t> {
        if (head.target == "/batch") return 4096;
        if (head.target == "/greedy") return 1 << 30;  // capped at the ceiling
        return std::nullopt;
    };
    start(options);
    HttpClient client(client_options());
    auto post = [&](std::string_view target, size_t bytes) {
        auto response = client.post(target, std::string(bytes, 'x'));
        EXPECT_TRUE(response.is_ok()) << response.status().to_string();
        return response.is_ok() ? response->status : 0;
    };
    EXPECT_EQ(post("/batch", 4096), 200);
    EXPECT_EQ(post("/batch", 4097), 413);
    EXPECT_EQ(post("/other", 1025), 413);
    EXPECT_EQ(post("/other", 1024), 200);
    EXPECT_EQ(post("/greedy", 8192), 200);
    EXPECT_EQ(post("/greedy", 8193), 413);
    RawSocket chunked(server_->port());
    // 4096 bytes in one chunk, then one more: the last chunk crosses the route's limit.
    chunked.send_all(
        "POST /batch HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n" +
        std::string(4096, 'y') + "\r\n1\r\nz\r\n0\r\n\r\n");
    std::string answer;
    chunked.read_until_close(answer);
    EXPECT_NE(answer.find(" 413 "), std::string::npos) << answer;
}

// Rule: a Content-Length over the limit is refused from the head alone, before any body byte is
// sent, and the connection is closed.
TEST_F(HttpServerTest, ContentLengthOverLimitIsRefusedBeforeTheBody) {
    ServerOptions options;
    options.body_limit_bytes = 1024;
    start(options);
    RawSocket socket(server_->port());
    ASSERT_TRUE(socket.connected());
    ASSERT_TRUE(
        socket.send_all("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 1000000000\r\n\r\n"));
    std::string received;
    ASSERT_TRUE(socket.read_until_close(received));
    EXPECT_EQ(received.rfind("HTTP/1.1 413 Payload Too Large\r\n", 0), 0u) << received;
    EXPECT_NE(received.find("Connection: close"), std::string::npos);
    EXPECT_NE(received.find("{\"error\":\"request body too large\"}"), std::string::npos);
    EXPECT_EQ(request_count(), 0u);
}

// Rule: a chunked body is capped by the same limit.
// Rule: the handler screens a request on its head alone: a refusal is answered while the client
// has sent no byte of its (16 MiB) body, the connection closes, and handle() never runs; a request
// the screen lets through reaches handle() with its body.
TEST_F(HttpServerTest, ScreenedRequestIsAnsweredBeforeItsBodyIsSent) {
    std::atomic<size_t> screened_body_bytes{1};
    handler_.screen_fn = [&](const HttpRequest& head) -> std::optional<HttpResponse> {
        screened_body_bytes = head.body.size();
        if (head.header("x-pass")) return std::nullopt;
        return text_response(403, "refused");
    };
    ServerOptions options;
    options.body_limit_bytes = 32 << 20;
    start(options);
    RawSocket refused(server_->port());
    ASSERT_TRUE(
        refused.send_all("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 16777216\r\n\r\n"));
    std::string answer;
    EXPECT_TRUE(refused.read_until_close(answer));
    EXPECT_EQ(answer.rfind("HTTP/1.1 403", 0), 0u) << answer;
    EXPECT_NE(answer.find("refused"), std::string::npos);
    EXPECT_EQ(screened_body_bytes.load(), 0u);
    EXPECT_EQ(request_count(), 0u);

    RawSocket passed(server_->port());
    ASSERT_TRUE(passed.send_all(
        "POST /upload HTTP/1.1\r\nHost: x\r\nx-pass: 1\r\nContent-Length: 5\r\n\r\nhello"));
    std::string ok;
    ASSERT_TRUE(passed.read_responses(ok, 1));
    EXPECT_EQ(ok.rfind("HTTP/1.1 200", 0), 0u) << ok;
    ASSERT_TRUE(wait_for_requests(1));
    EXPECT_EQ(requests()[0].body, "hello");
}

TEST_F(HttpServerTest, ChunkedBodyOverLimitGets413) {
    ServerOptions options;
    options.body_limit_bytes = 10;
    start(options);
    RawSocket socket(server_->port());
    ASSERT_TRUE(
        socket.send_all("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                        "8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n"));
    std::string received;
    ASSERT_TRUE(socket.read_until_close(received));
    EXPECT_EQ(received.rfind("HTTP/1.1 413", 0), 0u) << received;
    EXPECT_EQ(request_count(), 0u);
}

// Rule: a malformed request line, and a target with a malformed percent escape, get 400 with the
// JSON error and a closed connection; the handler never sees them.
TEST_F(HttpServerTest, MalformedRequestsGet400) {
    start();
    for (std::string_view raw :
         {"GARBAGE\r\n\r\n", "GET /a%zz HTTP/1.1\r\nHost: h\r\n\r\n",
          "GET /a?b=%4 HTTP/1.1\r\nHost: h\r\n\r\n", "GET / HTTP/9.9\r\nHost: h\r\n\r\n"}) {
        RawSocket socket(server_->port());
        ASSERT_TRUE(socket.send_all(raw));
        std::string received;
        ASSERT_TRUE(socket.read_until_close(received)) << raw;
        EXPECT_EQ(received.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << received;
        EXPECT_NE(received.find("{\"error\":\"malformed request\"}"), std::string::npos);
    }
    EXPECT_EQ(request_count(), 0u);
}

// Rule: a request head over header_limit_bytes gets 431.
TEST_F(HttpServerTest, OversizedHeadGets431) {
    ServerOptions options;
    options.header_limit_bytes = 1024;
    start(options);
    RawSocket socket(server_->port());
    ASSERT_TRUE(socket.send_all("GET / HTTP/1.1\r\nX-Big: " + std::string(4000, 'a') + "\r\n\r\n"));
    std::string received;
    ASSERT_TRUE(socket.read_until_close(received));
    EXPECT_EQ(received.rfind("HTTP/1.1 431", 0), 0u) << received;
}

// Rule: at connections_max the server stops accepting: a client beyond the cap waits in the listen
// backlog and is served once a connection closes (it is never accepted only to be dropped).
TEST_F(HttpServerTest, ClientsBeyondTheConnectionCapWaitInTheBacklog) {
    ServerOptions options;
    options.connections_max = 1;
    start(options);
    auto first = std::make_unique<RawSocket>(server_->port());
    ASSERT_TRUE(first->send_all("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"));
    std::string answered;
    ASSERT_TRUE(first->read_responses(answered, 1));
    RawSocket second(server_->port());  // the kernel's backlog takes the connection
    ASSERT_TRUE(second.connected());
    ASSERT_TRUE(second.send_all("GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    EXPECT_EQ(server_->stats().connections_open, 1u);
    first.reset();
    std::string received;
    ASSERT_TRUE(second.read_until_close(received));
    EXPECT_EQ(received.rfind("HTTP/1.1 200", 0), 0u) << received;
    ASSERT_EQ(request_count(), 2u);
    EXPECT_EQ(requests()[1].path, "/b");
}

// Rule: at connections_per_address_max open connections from one IP address, one more from it is
// answered 503 and closed at once, while other addresses are served; a slot frees when one of its
// connections closes.
TEST_F(HttpServerTest, OneAddressCannotTakeEveryConnection) {
    ServerOptions options;
    options.connections_per_address_max = 2;
    start(options);
    auto request = [](RawSocket& socket) {
        std::string answer;
        EXPECT_TRUE(socket.send_all("GET /x HTTP/1.1\r\nHost: x\r\n\r\n"));
        EXPECT_TRUE(socket.read_responses(answer, 1));
        return answer;
    };
    auto first = std::make_unique<RawSocket>(server_->port(), "127.0.0.1");
    RawSocket second(server_->port(), "127.0.0.1");
    ASSERT_TRUE(first->connected() && second.connected());
    EXPECT_EQ(request(*first).rfind("HTTP/1.1 200", 0), 0u);
    EXPECT_EQ(request(second).rfind("HTTP/1.1 200", 0), 0u);

    RawSocket third(server_->port(), "127.0.0.1");
    // A client that sends its request at once still reads the answer (no reset).
    ASSERT_TRUE(third.send_all("GET /x HTTP/1.1\r\nHost: x\r\n\r\n"));
    std::string refused;
    ASSERT_TRUE(third.read_until_close(refused)) << "the refused connection stayed open";
    EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
    EXPECT_NE(refused.find("too many connections from this address"), std::string::npos);
    EXPECT_EQ(server_->stats().connections_refused_per_address, 1u);

    RawSocket elsewhere(server_->port(), "127.0.0.2");
    ASSERT_TRUE(elsewhere.connected());
    EXPECT_EQ(request(elsewhere).rfind("HTTP/1.1 200", 0), 0u) << "another address is served";

    first.reset();
    // The server sees the close when its read ends; poll for it, bounded.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (server_->stats().connections_open != 2 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(server_->stats().connections_open, 2u);
    RawSocket again(server_->port(), "127.0.0.1");
    EXPECT_EQ(request(again).rfind("HTTP/1.1 200", 0), 0u) << "a closed connection frees a slot";
}

// Rule: a handler may answer later from another thread.
TEST_F(HttpServerTest, HandlerMayRespondLaterFromAnotherThread) {
    start();
    std::vector<std::thread> threads;
    Mutex threads_mutex;
    on_request_ = [&](HttpRequest request, Responder respond) {
        MutexLock lock(threads_mutex);
        threads.emplace_back([request = std::move(request), respond = std::move(respond)] {
            respond(text_response(200, "late:" + request.body));
        });
    };
    HttpClient client(client_options());
    for (int i = 0; i < 20; ++i) {
        auto response = client.post("/later", std::to_string(i));
        ASSERT_TRUE(response.is_ok()) << response.status().to_string();
        EXPECT_EQ(response->body, "late:" + std::to_string(i));
    }
    MutexLock lock(threads_mutex);
    for (auto& thread : threads) thread.join();
}

// Rule: pipelined requests are answered in order, each after the one before.
TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
    start();
    on_request_ = [](HttpRequest request, Responder respond) {
        respond(text_response(200, request.path));
    };
    RawSocket socket(server_->port());
    ASSERT_TRUE(
        socket.send_all("GET /one HTTP/1.1\r\nHost: h\r\n\r\n"
                        "GET /two HTTP/1.1\r\nHost: h\r\n\r\n"
                        "GET /three HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"));
    std::string received;
    ASSERT_TRUE(socket.read_until_close(received));
    size_t one = received.find("\r\n\r\n/one");
    size_t two = received.find("\r\n\r\n/two");
    size_t three = received.find("\r\n\r\n/three");
    ASSERT_NE(one, std::string::npos);
    ASSERT_NE(two, std::string::npos);
    ASSERT_NE(three, std::string::npos);
    EXPECT_LT(one, two);
    EXPECT_LT(two, three);
}

// Rule: a 204 carries no body, no Content-Length and no Content-Type even when the handler set a
// body, so the next response on the connection is framed correctly.
TEST_F(HttpServerTest, NoContentResponseHasNoBody) {
    start();
    on_request_ = [](HttpRequest request, Responder respond) {
        respond(request.path == "/empty" ? text_response(204, "should not be sent")
                                         : text_response(200, "next"));
    };
    RawSocket socket(server_->port());
    ASSERT_TRUE(
        socket.send_all("GET /empty HTTP/1.1\r\nHost: h\r\n\r\n"
                        "GET /full HTTP/1.1\r\nHost: h\r\n\r\n"));
    std::string received;
    ASSERT_TRUE(socket.read_responses(received, 2));
    size_t end = received.find("\r\n\r\n");
    std::string first = received.substr(0, end);
    EXPECT_EQ(first.rfind("HTTP/1.1 204 No Content", 0), 0u);
    EXPECT_EQ(first.find("Content-Length"), std::string::npos);
    EXPECT_EQ(first.find("Content-Type"), std::string::npos);
    EXPECT_EQ(received.substr(end + 4).rfind("HTTP/1.1 200 OK", 0), 0u);
    EXPECT_EQ(received.find("should not be sent"), std::string::npos);

    HttpClient client(client_options());
    auto response = client.get("/empty");
    ASSERT_TRUE(response.is_ok());
    EXPECT_EQ(response->status, 204);
    EXPECT_TRUE(response->body.empty());
}

// Rule: HTTP/1.0 closes after the response unless the request asked for keep-alive.
TEST_F(HttpServerTest, Http10KeepAliveFollowsTheRequestHeader) {
    start();
    {
        RawSocket socket(server_->port());
        ASSERT_TRUE(socket.send_all("GET /a HTTP/1.0\r\n\r\n"));
        std::string received;
        ASSERT_TRUE(socket.read_until_close(received));
        EXPECT_EQ(received.rfind("HTTP/1.0 200 OK", 0), 0u) << received;
    }
    RawSocket socket(server_->port());
    ASSERT_TRUE(
        socket.send_all("GET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
                        "GET /c HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
    std::string received;
    ASSERT_TRUE(socket.read_responses(received, 2));
    EXPECT_NE(received.find("Connection: keep-alive"), std::string::npos);
}

// Rule: a client that sends "Expect: 100-continue" gets the interim 100 before sending its body.
TEST_F(HttpServerTest, ExpectContinueGetsInterimResponse) {
    start();
    RawSocket socket(server_->port());
    ASSERT_TRUE(socket.send_all(
        "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"));
    std::string received;
    ASSERT_TRUE(socket.read_responses(received, 1));
    EXPECT_EQ(received, "HTTP/1.1 100 Continue\r\n\r\n");
    ASSERT_TRUE(socket.send_all("hello"));
    ASSERT_TRUE(socket.read_responses(received, 2));
    EXPECT_EQ(received.substr(received.size() - 5), "hello");
}

// Rule: a request that stops arriving half-way is cut off after read_timeout.
TEST_F(HttpServerTest, StalledRequestIsClosedAfterReadTimeout) {
    ServerOptions options;
    options.read_timeout = Millis(100);
    start(options);
    RawSocket socket(server_->port());
    ASSERT_TRUE(socket.send_all("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc"));
    std::string received;
    EXPECT_TRUE(socket.read_until_close(received));
    EXPECT_EQ(request_count(), 0u);
}

// Rule: start() on a port already bound fails with Errc::unavailable naming the address; start()
// and stop() twice are harmless, and a stopped server does not restart.
TEST_F(HttpServerTest, StartFailsOnBoundPortAndLifecycleCallsAreIdempotent) {
    start();
    EXPECT_TRUE(server_->start().is_ok());
    ServerOptions options;
    options.address = "127.0.0.1";
    options.port = server_->port();
    HttpServer second(options, handler_);
    Status status = second.start();
    EXPECT_EQ(status.code(), Errc::unavailable);
    EXPECT_NE(status.message().find("127.0.0.1:" + std::to_string(server_->port())),
              std::string::npos)
        << status.message();
    server_->stop();
    server_->stop();
    EXPECT_FALSE(server_->start().is_ok());
    second.stop();
}

// Rule: a responder called after its client went away is dropped (and a second call ignored);
// the server keeps serving others.
TEST_F(HttpServerTest, ResponderAfterClientDisconnectIsDropped) {
    start();
    Mutex held_mutex;
    std::vector<Responder> held;
    on_request_ = [&](HttpRequest request, Responder respond) {
        if (request.path == "/hold") {
            {
                MutexLock lock(held_mutex);
                held.push_back(std::move(respond));
            }
            record(request);
            return;
        }
        respond(text_response(200, "ok"));
    };
    {
        RawSocket socket(server_->port());
        ASSERT_TRUE(socket.send_all("GET /hold HTTP/1.1\r\nHost: h\r\n\r\n"));
        ASSERT_TRUE(wait_for_requests(1));
    }
    MutexLock lock(held_mutex);
    held[0](text_response(200, "late"));
    held[0](text_response(200, "twice"));
    HttpClient client(client_options());
    auto response = client.get("/other");
    ASSERT_TRUE(response.is_ok()) << response.status().to_string();
    EXPECT_EQ(response->body, "ok");
}

// Rule: a responder kept past the server's destruction does nothing when called.
TEST_F(HttpServerTest, ResponderAfterServerDestroyedIsSafe) {
    ServerOptions options;
    options.shutdown_grace = Millis(10);
    start(options);
    Responder held;
    on_request_ = [&](HttpRequest request, Responder respond) {
        held = std::move(respond);
        record(request);
    };
    auto client_options_copy = client_options();
    std::thread client_thread([&] {
        HttpClient client(client_options_copy);
        auto response = client.get("/hold");
        EXPECT_FALSE(response.is_ok());
    });
    ASSERT_TRUE(wait_for_requests(1));
    server_.reset();
    held(text_response(200, "too late"));
    client_thread.join();
}

// Rule: stop() stops accepting, waits for a request already with the handler to be answered
// (within the grace), sends that answer with "Connection: close", then returns.
TEST_F(HttpServerTest, StopWaitsForInFlightRequestWithinGrace) {
    ServerOptions options;
    options.shutdown_grace = Millis(60'000);
    start(options);
    Responder held;
    on_request_ = [&](HttpRequest request, Responder respond) {
        held = std::move(respond);
        record(request);
    };
    uint16_t port = server_->port();
    std::promise<Result<HttpResponse>> result;
    std::thread client_thread([&] {
        HttpClient client(client_options());
        result.set_value(client.get("/slow"));
    });
    ASSERT_TRUE(wait_for_requests(1));
    std::atomic<bool> stopped{false};
    std::thread stopper([&] {
        server_->stop();
        stopped = true;
    });
    // stop() is under way once the listening socket is gone.
    for (int i = 0; i < 20'000 && RawSocket(port).connected(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_FALSE(RawSocket(port).connected());
    EXPECT_FALSE(stopped.load());
    EXPECT_EQ(server_->stats().requests_in_flight, 1u);
    held(text_response(200, "finished"));
    stopper.join();
    client_thread.join();
    auto response = result.get_future().get();
    ASSERT_TRUE(response.is_ok()) << response.status().to_string();
    EXPECT_EQ(response->body, "finished");
    bool closes = false;
    for (const auto& [name, value] : response->headers)
        closes |= name == "connection" && value == "close";
    EXPECT_TRUE(closes);
    EXPECT_EQ(server_->stats().requests_in_flight, 0u);
}

// Rule: a request the handler never answers does not hold stop() past the grace; its connection
// is closed and the client sees a transport error.
TEST_F(HttpServerTest, StopClosesUnansweredRequestsAfterGrace) {
    ServerOptions options;
    options.shutdown_grace = Millis(50);
    start(options);
    Responder held;
    on_request_ = [&](HttpRequest request, Responder respond) {
        held = std::move(respond);
        record(request);
    };
    std::promise<Result<HttpResponse>> result;
    std::thread client_thread([&] {
        HttpClient client(client_options());
        result.set_value(client.get("/never"));
    });
    ASSERT_TRUE(wait_for_requests(1));
    server_->stop();
    client_thread.join();
    auto response = result.get_future().get();
    EXPECT_EQ(response.code(), Errc::peer_error);
    EXPECT_EQ(server_->stats().requests_in_flight, 0u);
    EXPECT_EQ(server_->stats().connections_open, 0u);
    held(text_response(200, "after stop"));
}

}  // namespace
}  // namespace narad::net
