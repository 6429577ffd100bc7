// PeerPool: the real PeerClient. It resolves a node id to that node's cluster host:port through
// an injected resolver (node/ wires the metastore's member list), keeps up to
// `idle_clients_per_peer` keep-alive HttpClients per address in a free list. Every new connection
// first proves the cluster secret both ways (auth/cluster_proof.h, cluster_handshake below): a
// call goes only to a peer that has proved it holds the secret, and the secret itself is never
// sent. With no secrets (security off and none configured) calls go out unproved.
//
// Failure mapping (base/peer_client.h): a node the resolver does not know is Errc::not_found; a
// call that failed before any byte of the request was sent (resolve or connect refused / timed
// out) is Errc::peer_error; a call that failed after sending began (reset, lost reply, timeout) is
// Errc::unknown_outcome, since the peer may have applied it. A client that failed is dropped, not
// pooled.
//
// Resending (http_client.h): Resend::once_if_unsent_on_reused_connection. A pooled connection the
// peer closed as a call went out on it is the race this covers; the call goes once more on a new
// connection, and the peer gets it twice only if it read the first and died before answering.
// Node-to-node calls are delivered at least once: a lost answer is Errc::unknown_outcome, which
// callers already treat as possibly applied (a remote commit is retried by its producer).
//
// Thread-safe: a client is taken from the free list under the mutex, used by one thread without
// it (HttpClient is single-threaded), and put back afterwards.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "auth/cluster_proof.h"
#include "base/mutex.h"
#include "base/peer_client.h"
#include "net/http_client.h"

namespace narad::net {

// The dialling side of the cluster handshake, for ClientOptions::on_connect. It fails with
// Errc::forbidden, before anything else is sent, when the peer cannot prove a secret held here or
// refuses this node's proof (PeerPool reports such a call as Errc::peer_error: never sent).
std::function<Status(const ConnectionExchange&)> cluster_handshake(auth::ClusterSecrets secrets);

// The `op` label of narad_cluster_rpc_* for a node-to-node target: the route without topic names
// or partitions ("commit", "consume", "ack_batch", "move_chunk").
std::string rpc_operation(std::string_view target);

struct PeerPoolOptions {
    auth::ClusterSecrets secrets;  // proved on every new connection; empty: none
    std::optional<ClientTls> tls;  // the cluster port's mutual TLS; nullopt: plain
    Millis connect_timeout_max{2'000};
    uint32_t idle_clients_per_peer = 8;
    uint64_t response_body_limit_bytes = 64ull << 20;
};

class PeerPool final : public PeerClient {
  public:
    // The cluster address ("host:port") of a node, or nullopt when it is not a known member.
    using Resolver = std::function<std::optional<std::string>(const NodeId&)>;

    PeerPool(Resolver resolver, PeerPoolOptions options);

    Result<PeerReply> call(const NodeId& node, std::string_view method, std::string_view target,
                           std::string_view body, std::string_view content_type,
                           Millis timeout) override;

    // Idle pooled clients for an address (tests).
    size_t idle_clients(const std::string& address) const;
    // Loads options.tls's files again: clients made from now on present and trust them, idle ones
    // are dropped, busy ones are dropped when they come back. On failure nothing changes.
    Status reload_tls();

  private:
    struct Pooled {
        std::unique_ptr<HttpClient> client;
        uint64_t generation = 0;  // tls_generation_ when it was made
    };
    Pooled take(const std::string& address, const std::string& host, uint16_t port);
    void give_back(const std::string& address, Pooled pooled);

    Resolver resolver_;
    PeerPoolOptions options_;
    mutable Mutex mutex_;
    std::map<std::string, std::vector<Pooled>> idle_ GUARDED_BY(mutex_);  // address -> idle clients
    std::shared_ptr<TlsContext> tls_context_ GUARDED_BY(mutex_);
    uint64_t tls_generation_ GUARDED_BY(mutex_) = 0;
};

}  // namespace narad::net
