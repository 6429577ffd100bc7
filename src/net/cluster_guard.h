// ClusterGuard: the serving side of the cluster handshake (auth/cluster_proof.h), in front of any
// HttpHandler (the cluster port's InternalRouter; a peer a test plays). A connection must first
// prove the cluster secret: POST /internal/v1/hello (answered here with this node's nonce and its
// proofs, one per secret held), then POST /internal/v1/hello/proof (204 when the proof matches a
// secret held). Until it has, every other request is refused on its head, before any body byte is
// read, with 403 and the connection closed, as is a wrong proof. With PlaneAccess::open (security
// off and no secret) every request goes through unproved; with PlaneAccess::proved and no secrets
// every request is refused. Thread-safe (a connection's state is touched by its own requests
// only, one at a time).
#pragma once

#include <atomic>

#include "auth/cluster_proof.h"
#include "net/http.h"

namespace narad::net {

// Whether the node-to-node plane asks for the proof of the secret.
enum class PlaneAccess { proved, open };

class ClusterGuard final : public HttpHandler {
  public:
    ClusterGuard(auth::ClusterSecrets secrets, PlaneAccess access, HttpHandler& inner);

    std::optional<HttpResponse> screen(HttpRequest& head) override;
    void handle(HttpRequest request, Responder respond) override;
    // No body before the secret is proved; then the inner handler's limit.
    std::optional<uint64_t> body_limit(const HttpRequest& head) override;

  private:
    std::optional<HttpResponse> screen_proof(HttpRequest& head);

    auth::ClusterSecrets secrets_;
    PlaneAccess access_;
    HttpHandler& inner_;
    std::atomic<uint64_t> failed_proofs_{0};
};

}  // namespace narad::net
