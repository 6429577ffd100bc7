// The cluster secret proved in both directions on a node-to-node connection, without the secret
// itself ever crossing the wire (docs/security.md, "Node to node"):
//   1. The dialling node sends a fresh nonce: POST /internal/v1/hello with
//      `x-narad-cluster-nonce`.
//   2. The serving node answers with a fresh nonce of its own and, for each secret it holds, the
//      server-role proof HMAC-SHA256(secret, role | client nonce | server nonce).
//   3. The dialling node sends nothing else on the connection unless one of those proofs matches
//      a secret it holds. It then proves itself with the client-role HMAC of the same nonces
//      (POST /internal/v1/hello/proof with `x-narad-cluster-proof`), and the connection stays
//      authenticated until it closes; the nonces are never used again.
// Both nonces are fresh per connection, so a recorded proof is worth nothing on another one. A
// secret being rotated out (NARAD_CLUSTER_SECRET_PREVIOUS) is held beside the current one, so
// nodes that have moved to the new secret and nodes that have not still prove to each other.
// Thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace narad::auth {

inline constexpr std::string_view kClusterHelloPath = "/internal/v1/hello";
inline constexpr std::string_view kClusterProofPath = "/internal/v1/hello/proof";
inline constexpr std::string_view kClusterNonceHeader = "x-narad-cluster-nonce";
inline constexpr std::string_view kClusterProofHeader = "x-narad-cluster-proof";

// The secrets a node proves with and accepts: `current`, and `previous` while a rotation is under
// way (empty otherwise).
struct ClusterSecrets {
    std::string current;
    std::string previous;

    bool empty() const { return current.empty(); }
    // The secrets in the order they are tried: current first.
    std::vector<std::string_view> held() const;
};

enum class ProofRole { client, server };

// 32 random bytes as 64 lower-case hex digits.
std::string make_nonce();
// Whether `nonce` has make_nonce()'s shape.
bool valid_nonce(std::string_view nonce);
// A secret for a lone node that was given none: 32 random bytes in hex, for this process only.
std::string generate_cluster_secret();

// The proof of `secret` for one connection's pair of nonces, in hex.
std::string cluster_proof(std::string_view secret, ProofRole role, std::string_view client_nonce,
                          std::string_view server_nonce);
// The index in secrets.held() of the secret `proof` was made with, or nullopt when it matches
// none. Every held secret is compared, in constant time.
std::optional<size_t> matching_secret(const ClusterSecrets& secrets, ProofRole role,
                                      std::string_view client_nonce, std::string_view server_nonce,
                                      std::string_view proof);

}  // namespace narad::auth
