// HttpClient: a BlockingConnection, reopened when it is closed, with the resend rule and the
// connection handshake on top.
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

#include <chrono>
#include <optional>

#include "base/base64.h"
#include "net/client_connection.h"

namespace narad::net {

Result<std::shared_ptr<const ConnectionTarget>> make_connection_target(
    const ClientOptions& options) {
    auto target = std::make_shared<ConnectionTarget>();
    target->host = options.host;
    target->port = options.port;
    target->where = options.host + ":" + std::to_string(options.port);
    if (options.tls) {
        target->host_check = options.tls->host_check;
        if (options.tls_context) {
            target->tls = options.tls_context;
        } else {
            NARAD_ASSIGN_OR_RETURN(target->tls, make_client_tls(options.tls->files));
        }
    }
    if (!options.basic_auth.empty()) {
        target->authorization = "Basic " + base64_encode(options.basic_auth);
    }
    target->client_name = options.client_name;
    return std::shared_ptr<const ConnectionTarget>(std::move(target));
}

class HttpClient::Impl {
  public:
    explicit Impl(ClientOptions options) : options_(std::move(options)) {
        auto target = make_connection_target(options_);
        if (target.is_ok()) {
            connection_.emplace(std::move(*target));
        } else {
            tls_error_ = target.status();
        }
    }

    Result<HttpResponse> request(std::string_view method, std::string_view target,
                                 std::string_view body, std::string_view content_type,
                                 const Headers& headers, Resend resend) {
        maybe_delivered_ = false;
        if (!connection_) return tls_error_;
        if (connection_->closed_by_server()) connection_->close();
        const bool reused = connection_->is_open();
        if (!reused) NARAD_RETURN_IF_ERROR(open());
        const ClientRequest request{
            .method = method,
            .target = target,
            .body = body,
            .content_type = content_type,
            .headers = &headers,
            .response_body_limit_bytes = options_.response_body_limit_bytes};
        bool resendable = false;
        auto result = exchange(request, options_.request_timeout, resendable);
        if (result.is_ok() || !reused || !resendable || resend == Resend::never) return result;
        NARAD_RETURN_IF_ERROR(open());
        return exchange(request, options_.request_timeout, resendable);
    }

    bool maybe_delivered() const { return maybe_delivered_; }
    void set_timeouts(Millis connect_timeout, Millis request_timeout) {
        options_.connect_timeout = connect_timeout;
        options_.request_timeout = request_timeout;
    }

  private:
    // One request and its response on the open connection. `resendable` tells whether it failed
    // before any byte of a response arrived, for a reason other than the deadline.
    Result<HttpResponse> exchange(const ClientRequest& request, Millis timeout, bool& resendable) {
        resendable = false;
        if (!connection_->is_open()) {  // a handshake step's answer closed it
            return Status(Errc::peer_error, "the connection to " + where() + " was closed");
        }
        maybe_delivered_ = true;  // from here on, some of the request may reach the server
        HttpResponse response;
        ExchangeResult result = connection_->exchange(request, response, timeout);
        resendable = !result.answer_started && result.status.code() != Errc::timeout;
        if (!result.status.is_ok()) return result.status;
        return response;
    }

    // A new connection, with its handshake done. The handshake as a whole gets one
    // request_timeout, not one per step. Whether the caller's request may have been delivered
    // is what it was before (a resend after a reused connection failed stays "maybe").
    Status open() {
        NARAD_RETURN_IF_ERROR(connection_->connect(options_.connect_timeout));
        if (!options_.on_connect) return Status::ok();
        const bool delivered = maybe_delivered_;
        const auto deadline = std::chrono::steady_clock::now() + options_.request_timeout;
        const Millis call_timeout = options_.request_timeout;
        Status shook = options_.on_connect([&](std::string_view method, std::string_view target,
                                               const Headers& headers) -> Result<HttpResponse> {
            auto left =
                std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now());
            if (left <= Millis(0)) {
                return Status(Errc::timeout, "the handshake with " + where() +
                                                 " took longer than " +
                                                 std::to_string(call_timeout.count()) + " ms");
            }
            const ClientRequest step{
                .method = method,
                .target = target,
                .content_type = "application/json",
                .headers = &headers,
                .response_body_limit_bytes = options_.response_body_limit_bytes};
            bool unused = false;
            return exchange(step, left, unused);
        });
        maybe_delivered_ = delivered;
        if (!shook.is_ok()) {
            connection_->close();
            return shook.with_context("connection handshake with " + where());
        }
        if (!connection_->is_open()) {
            return Status(Errc::peer_error, "connection handshake with " + where() +
                                                " ended with the connection closed");
        }
        return Status::ok();
    }

    std::string where() const { return options_.host + ":" + std::to_string(options_.port); }

    ClientOptions options_;
    std::optional<BlockingConnection> connection_;  // none when the TLS files did not load
    Status tls_error_;                              // why they did not
    bool maybe_delivered_ = false;                  // see HttpClient::last_request_maybe_delivered
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
