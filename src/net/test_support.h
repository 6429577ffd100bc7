// Helpers for the net/ tests only: a handler built from a lambda, and raw TCP sockets (plain POSIX,
// so the tests neither include Asio nor trust the code under test to talk to it). Every read has
// a deadline so a broken server fails the test instead of hanging it. Single-threaded use.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/loopback_ports.h"
#include "net/http.h"

namespace narad::net::testing {

class FunctionHandler final : public HttpHandler {
  public:
    using Fn = std::function<void(HttpRequest, Responder)>;
    explicit FunctionHandler(Fn fn) : fn_(std::move(fn)) {}
    void handle(HttpRequest request, Responder respond) override {
        fn_(std::move(request), std::move(respond));
    }
    std::optional<HttpResponse> screen(HttpRequest& head) override {
        return screen_fn ? screen_fn(head) : std::nullopt;
    }
    std::optional<uint64_t> body_limit(const HttpRequest& head) override {
        return body_limit_fn ? body_limit_fn(head) : std::nullopt;
    }

    // Set before the server starts; empty lets every request through.
    std::function<std::optional<HttpResponse>(const HttpRequest&)> screen_fn;
    // Set before the server starts; empty keeps the server's body limit for every request.
    std::function<std::optional<uint64_t>(const HttpRequest&)> body_limit_fn;

  private:
    Fn fn_;
};

inline HttpResponse text_response(int status, std::string body) {
    HttpResponse response;
    response.status = status;
    response.content_type = "text/plain";
    response.body = std::move(body);
    return response;
}

// Makes a test PKI in `dir` with the openssl tool: authorities `<ca>.pem`/`.key` for each name in
// `authorities`, and for each {name, authority, subject_alt_names} a leaf `<name>.pem` and
// `<name>.key` it signed (P-256 keys, valid two days; SANs as openssl writes them, e.g.
// "IP:127.0.0.1,DNS:localhost"). False if a command failed.
struct TestCertificate {
    std::string name;
    std::string authority;
    std::string subject_alt_names;
};
inline bool make_test_certificates(const std::string& dir,
                                   const std::vector<std::string>& authorities,
                                   const std::vector<TestCertificate>& leaves) {
    auto run = [](const std::string& command) {
        return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
    };
    const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
    for (const auto& ca : authorities) {
        if (!run("openssl req -x509 " + key + " -keyout " + dir + "/" + ca + ".key -out " + dir +
                 "/" + ca + ".pem -days 2 -subj /CN=" + ca)) {
            return false;
        }
    }
    for (const auto& leaf : leaves) {
        std::string base = dir + "/" + leaf.name;
        std::string ca = dir + "/" + leaf.authority;
        std::ofstream(base + ".ext") << "subjectAltName=" << leaf.subject_alt_names << "\n";
        if (!run("openssl req " + key + " -keyout " + base + ".key -out " + base +
                 ".csr -subj /CN=" + leaf.name) ||
            !run("openssl x509 -req -in " + base + ".csr -CA " + ca + ".pem -CAkey " + ca +
                 ".key -CAcreateserial -days 2 -out " + base + ".pem -extfile " + base + ".ext")) {
            return false;
        }
    }
    return true;
}

// One request through `handler` as the server runs it: screen(), then handle() unless screened
// out; the answer, or a 599 if none came within 30 s. `request.path` and `query` are parsed from
// `target` here.
inline HttpResponse screen_and_handle(HttpHandler& handler, HttpRequest request) {
    if (!parse_target(request.target, request.path, request.query)) return {400, "", "", {}};
    std::string body = std::exchange(request.body, {});
    if (auto refusal = handler.screen(request)) return *refusal;
    request.body = std::move(body);
    auto done = std::make_shared<std::promise<HttpResponse>>();
    auto answer = done->get_future();
    handler.handle(std::move(request), [done](HttpResponse r) { done->set_value(std::move(r)); });
    if (answer.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
        return {599, "", "no answer", {}};
    }
    return answer.get();
}

// A connected socket to 127.0.0.1:port, closed on destruction; fd() < 0 if the connect failed.
class RawSocket {
  public:
    // `source`: the local IPv4 address to connect from (any 127.x.y.z works on Linux), or null
    // for the kernel's choice.
    explicit RawSocket(uint16_t port, const char* source = nullptr) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        if (source != nullptr) {
            sockaddr_in local{};
            local.sin_family = AF_INET;
            ::inet_pton(AF_INET, source, &local.sin_addr);
            if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
                ::close(fd_);
                fd_ = -1;
                return;
            }
        }
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }
    ~RawSocket() { close(); }
    RawSocket(const RawSocket&) = delete;
    RawSocket& operator=(const RawSocket&) = delete;

    int fd() const { return fd_; }
    bool connected() const { return fd_ >= 0; }

    // Sends everything; false if the peer reset the connection.
    bool send_all(std::string_view data) {
        while (!data.empty()) {
            ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            data.remove_prefix(static_cast<size_t>(n));
        }
        return true;
    }

    void shutdown_write() { ::shutdown(fd_, SHUT_WR); }

    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

    // Reads until the peer closes (true) or nothing arrives for `quiet` (false).
    bool read_until_close(std::string& out,
                          std::chrono::milliseconds quiet = std::chrono::seconds(10)) {
        char chunk[16 * 1024];
        for (;;) {
            pollfd pfd{fd_, POLLIN, 0};
            int ready = ::poll(&pfd, 1, static_cast<int>(quiet.count()));
            if (ready <= 0) return false;
            ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return true;  // closed (or reset)
            out.append(chunk, static_cast<size_t>(n));
        }
    }

    // Reads until `out` contains `count` complete responses framed by Content-Length (or without
    // a body). Returns false on close or after 10 s without progress.
    bool read_responses(std::string& out, size_t count) {
        char chunk[16 * 1024];
        while (complete_responses(out) < count) {
            pollfd pfd{fd_, POLLIN, 0};
            if (::poll(&pfd, 1, 10'000) <= 0) return false;
            ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            out.append(chunk, static_cast<size_t>(n));
        }
        return true;
    }

    // How many whole responses `data` holds (1xx interim responses count too).
    static size_t complete_responses(std::string_view data) {
        size_t count = 0;
        for (;;) {
            size_t end = data.find("\r\n\r\n");
            if (end == std::string_view::npos) return count;
            std::string_view head = data.substr(0, end);
            size_t length = 0;
            size_t at = head.find("Content-Length: ");
            if (at != std::string_view::npos) {
                length =
                    std::stoul(std::string(head.substr(at + 16, head.find("\r\n", at) - at - 16)));
            }
            if (data.size() < end + 4 + length) return count;
            data.remove_prefix(end + 4 + length);
            ++count;
        }
    }

  private:
    int fd_ = -1;
};

// A port nothing listens on, claimed against other test processes (base/loopback_ports.h).
inline uint16_t unused_port() { return unused_loopback_ports(1).front(); }

}  // namespace narad::net::testing
