#include <gtest/gtest.h>

#include <atomic>
#include <random>

#include "net/http_client.h"
#include "net/http_server.h"
#include "net/test_support.h"

namespace narad::net {
namespace {

using testing::FunctionHandler;
using testing::RawSocket;
using testing::text_response;

// Builds one hostile input: random bytes, a valid request with bytes flipped, cut or repeated,
// a head with absurd lines, or a broken chunked body.
std::string garbage(std::mt19937& random) {
    static const std::string kValid =
        "POST /v1/topics/a%20b/produce?key=k&partition=1 HTTP/1.1\r\nHost: h\r\n"
        "Content-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\":\"bcd\"}";
    auto pick = [&](size_t n) { return static_cast<size_t>(random() % n); };
    std::string data;
    switch (pick(6)) {
        case 0:  // pure noise
            data.resize(1 + pick(4096));
            for (char& c : data) c = static_cast<char>(random());
            break;
        case 1: {  // a valid request with a few bytes flipped
            data = kValid;
            for (size_t i = 0, n = 1 + pick(8); i < n; ++i) {
                data[pick(data.size())] = static_cast<char>(random());
            }
            break;
        }
        case 2:  // cut short
            data = kValid.substr(0, pick(kValid.size()));
            break;
        case 3: {  // CR/LF and separators sprinkled in
            data = kValid;
            for (size_t i = 0, n = 1 + pick(6); i < n; ++i) {
                static constexpr char kNasty[] = {'\r', '\n', ':', ' ', '%', '\0', '?', '&'};
                data.insert(pick(data.size()), 1, kNasty[pick(sizeof(kNasty))]);
            }
            break;
        }
        case 4:  // absurd head: a huge header line, or thousands of headers
            data = "GET / HTTP/1.1\r\n";
            if (pick(2) == 0) {
                data += "X-Long: " + std::string(20'000 + pick(50'000), 'a') + "\r\n\r\n";
            } else {
                for (int i = 0; i < 3'000; ++i) data += "X-" + std::to_string(i) + ": v\r\n";
                data += "\r\n";
            }
            break;
        default:  // broken chunked encoding
            data = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
            data += std::to_string(pick(100)) + (pick(2) ? "zz\r\n" : "\r\nabc\r\n");
            if (pick(2)) data += "ffffffffffffffffff\r\n";
            break;
    }
    return data;
}

// Rule: whatever bytes clients send, the server stays up, answers every request that does reach
// the handler with a parsed method and path, and still serves a valid request afterwards.
TEST(HttpFuzzTest, RandomGarbageNeverBreaksTheServer) {
    std::atomic<int> handled{0};
    std::atomic<int> bad_requests{0};
    FunctionHandler handler([&](HttpRequest request, Responder respond) {
        ++handled;
        if (request.method.empty() || request.path.empty()) ++bad_requests;
        respond(text_response(200, "ok"));
    });
    ServerOptions options;
    options.address = "127.0.0.1";
    options.port = 0;
    options.threads = 2;
    options.body_limit_bytes = 4096;
    options.read_timeout = Millis(100);
    options.idle_timeout = Millis(100);
    HttpServer server(options, handler);
    ASSERT_TRUE(server.start().is_ok());

    std::mt19937 random(20240611);
    constexpr int kRounds = 300;
    constexpr int kBatch = 10;  // sockets open at once
    for (int round = 0; round < kRounds; round += kBatch) {
        std::vector<std::unique_ptr<RawSocket>> sockets;
        for (int i = 0; i < kBatch; ++i) {
            auto socket = std::make_unique<RawSocket>(server.port());
            ASSERT_TRUE(socket->connected());
            // The server may refuse the rest by closing early; a failed send is fine.
            (void)socket->send_all(garbage(random));
            if (random() % 2 == 0) socket->shutdown_write();
            sockets.push_back(std::move(socket));
        }
        for (auto& socket : sockets) {
            std::string ignored;
            // Every connection ends: answered and closed, or cut off by the read/idle timeout.
            EXPECT_TRUE(socket->read_until_close(ignored));
        }
    }
    EXPECT_EQ(bad_requests.load(), 0);
    // Some inputs stay valid after mutation; they must have been served like any request.
    EXPECT_GT(handled.load(), 0);
    ::testing::Test::RecordProperty("handled", handled.load());

    ClientOptions client_options;
    client_options.port = server.port();
    HttpClient client(client_options);
    auto response = client.post("/still/alive", "{}");
    ASSERT_TRUE(response.is_ok()) << response.status().to_string();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, "ok");
}

}  // namespace
}  // namespace narad::net
