// HttpEtcdTransport: POSTs through pooled HttpClients with Resend::never; streams on a
// BlockingConnection. A pooled client checks (poll, no wait) before reuse whether etcd closed its
// idle connection (after a restart, say) and reconnects rather than failing the request.
#include "net/etcd_transport.h"

#include <chrono>
#include <limits>

#include "base/mutex.h"
#include "net/client_connection.h"

namespace narad::net {
namespace {

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

class Stream final : public meta::EtcdStream {
  public:
    Stream(std::shared_ptr<const ConnectionTarget> target, uint64_t object_bytes_max)
        : where_(target->where),
          connection_(std::move(target)),
          object_bytes_max_(object_bytes_max) {}

    // Connects and sends the request whose answer is the stream: Errc::peer_error when no
    // connection could be made, Errc::unknown_outcome when the request may have been sent.
    Status start(std::string_view path, std::string_view body, Millis timeout) {
        Status connected = connection_.connect(timeout);
        if (!connected.is_ok()) {
            return Status(Errc::peer_error, "etcd at " + where_ + ": " + connected.message());
        }
        const ClientRequest request{
            .method = "POST",
            .target = path,
            .body = body,
            .content_type = "application/json",
            .response_body_limit_bytes = std::numeric_limits<uint64_t>::max()};
        Status sent = connection_.send(request, response_, timeout);
        if (!sent.is_ok()) {
            return Status(Errc::unknown_outcome,
                          "sending " + std::string(path) + " to etcd: " + sent.message());
        }
        return Status::ok();
    }

    // Waits until a whole object is buffered, the answer ended, or the timeout.
    Result<std::string> next(Millis timeout) override {
        const MonoTime deadline = std::chrono::steady_clock::now() + timeout;
        while (true) {
            if (connection_.cancelled()) return Status(Errc::peer_error, "etcd stream cancelled");
            std::string& text = response_.body;  // received, not yet returned
            size_t newline;
            while ((newline = text.find('\n')) != std::string::npos) {
                std::string line = text.substr(0, newline);
                text.erase(0, newline + 1);
                if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
            }
            if (text.size() > object_bytes_max_) {
                return Status(Errc::peer_error, "etcd stream object over " +
                                                    std::to_string(object_bytes_max_) + " bytes");
            }
            if (ended_) {
                // A non-200 answer is one JSON error object, not newline-terminated.
                if (text.find_first_not_of(" \t\r") != std::string::npos) {
                    std::string last = std::move(text);
                    text.clear();
                    return last;
                }
                return end_status_.is_ok()
                           ? Status(Errc::peer_error, "etcd ended the stream from " + where_)
                           : end_status_;
            }
            Status read = connection_.read_more(deadline);
            if (read.code() == Errc::timeout) {
                return Status(Errc::timeout, "nothing from the etcd stream yet");
            }
            if (!read.is_ok()) {
                ended_ = true;
                end_status_ = Status(Errc::peer_error,
                                     "etcd stream from " + where_ + " broke: " + read.message());
            } else if (connection_.answer_complete()) {
                ended_ = true;
            }
        }
    }

    void cancel() override { connection_.cancel(); }

  private:
    const std::string where_;  // "host:port"
    BlockingConnection connection_;
    const uint64_t object_bytes_max_;
    HttpResponse response_;  // its body holds the received, not yet returned stream bytes
    bool ended_ = false;
    Status end_status_;  // why the answer ended; ok when it was complete
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

HttpEtcdTransport::~HttpEtcdTransport() = default;

Result<ClientOptions> HttpEtcdTransport::client_options(const std::string& endpoint) const {
    NARAD_ASSIGN_OR_RETURN(auto parsed, parse_endpoint(endpoint));
    ClientOptions options;
    options.host = parsed.host;
    options.port = parsed.port;
    options.client_name.clear();
    options.response_body_limit_bytes = options_.response_body_limit_bytes;
    if (parsed.https) {
        NARAD_RETURN_IF_ERROR(tls_error_.with_context("etcd TLS"));
        if (!tls_) {
            return Status(Errc::invalid_argument,
                          "etcd endpoint " + endpoint + " is https, but no cluster TLS is set");
        }
        // Checked against the cluster's authority only, as node-to-node calls are.
        options.tls = ClientTls{options_.tls->files, HostCheck::signature_only};
        options.tls_context = tls_;
    }
    return options;
}

Result<std::unique_ptr<HttpClient>> HttpEtcdTransport::take(const std::string& endpoint) {
    {
        MutexLock lock(mutex_);
        auto& pool = idle_[endpoint];
        if (!pool.empty()) {
            auto client = std::move(pool.back());
            pool.pop_back();
            return client;
        }
    }
    NARAD_ASSIGN_OR_RETURN(auto options, client_options(endpoint));
    return std::make_unique<HttpClient>(std::move(options));
}

void HttpEtcdTransport::give_back(const std::string& endpoint, std::unique_ptr<HttpClient> client) {
    MutexLock lock(mutex_);
    auto& pool = idle_[endpoint];
    if (pool.size() < options_.idle_connections_per_endpoint) pool.push_back(std::move(client));
}

Result<meta::EtcdTransport::Reply> HttpEtcdTransport::post(const std::string& endpoint,
                                                           std::string_view path,
                                                           std::string_view body, Millis timeout) {
    NARAD_ASSIGN_OR_RETURN(auto client, take(endpoint));
    client->set_timeouts(std::min(timeout, options_.connect_timeout), timeout);
    auto response = client->request("POST", path, body, "application/json", {}, Resend::never);
    if (!response.is_ok()) {
        if (!client->last_request_maybe_delivered()) {
            return Status(Errc::peer_error,
                          "etcd at " + endpoint + ": " + response.status().message());
        }
        return Status(Errc::unknown_outcome,
                      "etcd request " + std::string(path) + " to " + endpoint +
                          " may have been sent: " + response.status().message());
    }
    give_back(endpoint, std::move(client));
    return Reply{response->status, std::move(response->body)};
}

Result<std::unique_ptr<meta::EtcdStream>> HttpEtcdTransport::open_stream(
    const std::string& endpoint, std::string_view path, std::string_view body,
    Millis connect_timeout) {
    NARAD_ASSIGN_OR_RETURN(auto options, client_options(endpoint));
    NARAD_ASSIGN_OR_RETURN(auto target, make_connection_target(options));
    auto stream = std::make_unique<Stream>(std::move(target), options_.stream_object_bytes_max);
    NARAD_RETURN_IF_ERROR(stream->start(path, body, connect_timeout));
    return std::unique_ptr<meta::EtcdStream>(std::move(stream));
}

}  // namespace narad::net
