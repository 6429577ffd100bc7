#include "net/cluster_guard.h"

#include <utility>

#include "base/json_text.h"
#include "base/log.h"

namespace narad::net {

namespace {

HttpResponse refusal(int status, std::string_view message) {
    std::string body = "{\"error\":";
    append_json_string(body, message, HtmlEscape::no);
    body += "}\n";
    return HttpResponse{status, "application/json", std::move(body), {}};
}

HttpResponse not_proved() {
    return refusal(403, "this connection has not proved the cluster secret");
}

}  // namespace

ClusterGuard::ClusterGuard(auth::ClusterSecrets secrets, PlaneAccess access, HttpHandler& inner)
    : secrets_(std::move(secrets)), access_(access), inner_(inner) {}

std::optional<HttpResponse> ClusterGuard::screen(HttpRequest& head) {
    if (access_ == PlaneAccess::open) return inner_.screen(head);
    if (secrets_.empty()) return refusal(403, "cluster secret not configured");
    if (head.connection == nullptr) return not_proved();
    ConnectionState& connection = *head.connection;
    if (head.path == auth::kClusterHelloPath && head.method == "POST") {
        std::string nonce(head.header(auth::kClusterNonceHeader).value_or(""));
        if (!auth::valid_nonce(nonce)) {
            return refusal(
                400, std::string(auth::kClusterNonceHeader) + " must be 64 lower-case hex digits");
        }
        // A fresh start: whatever this connection proved before no longer counts.
        connection.client_nonce = std::move(nonce);
        connection.server_nonce = auth::make_nonce();
        connection.authenticated = false;
        return std::nullopt;
    }
    if (head.path == auth::kClusterProofPath && head.method == "POST") return screen_proof(head);
    if (!connection.authenticated) return not_proved();
    return inner_.screen(head);
}

std::optional<HttpResponse> ClusterGuard::screen_proof(HttpRequest& head) {
    ConnectionState& connection = *head.connection;
    // The nonces are spent by this attempt, right or wrong.
    std::string client_nonce = std::exchange(connection.client_nonce, {});
    std::string server_nonce = std::exchange(connection.server_nonce, {});
    if (server_nonce.empty()) {
        return refusal(403, "no cluster handshake in progress on this connection");
    }
    auto match =
        auth::matching_secret(secrets_, auth::ProofRole::client, client_nonce, server_nonce,
                              head.header(auth::kClusterProofHeader).value_or(""));
    if (!match) {
        // Logged the first time, then every thousandth: a prober cannot flood the log.
        if (uint64_t failed = failed_proofs_.fetch_add(1); failed % 1000 == 0) {
            NARAD_LOG_WARN("{} failed to prove the cluster secret; connection closed ({} so far)",
                           head.remote_address, failed + 1);
        }
        return refusal(403, "invalid proof of the cluster secret");
    }
    if (*match > 0) {
        NARAD_LOG_INFO("{} proved the previous cluster secret (rotation under way)",
                       head.remote_address);
    }
    connection.authenticated = true;
    return std::nullopt;
}

std::optional<uint64_t> ClusterGuard::body_limit(const HttpRequest& head) {
    if (access_ == PlaneAccess::open) return inner_.body_limit(head);
    bool handshake = head.path == auth::kClusterHelloPath || head.path == auth::kClusterProofPath;
    if (handshake || head.connection == nullptr || !head.connection->authenticated) return 0;
    return inner_.body_limit(head);
}

void ClusterGuard::handle(HttpRequest request, Responder respond) {
    if (access_ == PlaneAccess::open) return inner_.handle(std::move(request), std::move(respond));
    // The server screened the head already; what screen() settled is checked again here, for
    // callers that skip the server.
    const ConnectionState* connection = request.connection.get();
    bool hello = request.path == auth::kClusterHelloPath;
    if (secrets_.empty() || connection == nullptr ||
        (hello ? connection->server_nonce.empty() : !connection->authenticated)) {
        return respond(not_proved());
    }
    if (hello) {
        std::string proofs;
        for (std::string_view secret : secrets_.held()) {
            if (!proofs.empty()) proofs += ',';
            proofs += auth::cluster_proof(secret, auth::ProofRole::server, connection->client_nonce,
                                          connection->server_nonce);
        }
        HttpResponse answer{200, "", "", {}};
        answer.headers.emplace_back(std::string(auth::kClusterNonceHeader),
                                    connection->server_nonce);
        answer.headers.emplace_back(std::string(auth::kClusterProofHeader), std::move(proofs));
        return respond(std::move(answer));
    }
    if (request.path == auth::kClusterProofPath) return respond(HttpResponse{204, "", "", {}});
    inner_.handle(std::move(request), std::move(respond));
}

}  // namespace narad::net
