#include "auth/cluster_proof.h"

#include <sodium.h>

#include <array>

#include "auth/sodium.h"
#include "base/assert.h"

namespace narad::auth {

namespace {

constexpr size_t kNonceBytes = 32;

std::string to_hex(const unsigned char* data, size_t size) {
    std::string text(2 * size + 1, '\0');
    sodium_bin2hex(text.data(), text.size(), data, size);
    text.pop_back();
    return text;
}

std::string random_hex(size_t bytes) {
    init_sodium();
    std::array<unsigned char, 64> random{};
    NARAD_ASSERT(bytes <= random.size(), "random_hex: at most 64 bytes");
    randombytes_buf(random.data(), bytes);
    return to_hex(random.data(), bytes);
}

// The role label keeps a server's proof from being replayed as a client's on the same nonces.
std::string_view role_label(ProofRole role) {
    return role == ProofRole::client ? "narad-cluster-client-v1" : "narad-cluster-server-v1";
}

}  // namespace

std::vector<std::string_view> ClusterSecrets::held() const {
    std::vector<std::string_view> secrets;
    if (!current.empty()) secrets.emplace_back(current);
    if (!previous.empty() && previous != current) secrets.emplace_back(previous);
    return secrets;
}

std::string make_nonce() { return random_hex(kNonceBytes); }

bool valid_nonce(std::string_view nonce) {
    if (nonce.size() != 2 * kNonceBytes) return false;
    for (char c : nonce) {
        bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        if (!hex) return false;
    }
    return true;
}

std::string generate_cluster_secret() { return random_hex(32); }

std::string cluster_proof(std::string_view secret, ProofRole role, std::string_view client_nonce,
                          std::string_view server_nonce) {
    init_sodium();
    crypto_auth_hmacsha256_state state;
    crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(secret.data()),
                                secret.size());
    auto feed = [&state](std::string_view part) {
        // Each part is length-prefixed so no two different triples hash the same bytes.
        std::array<unsigned char, 8> length{};
        for (size_t i = 0; i < length.size(); ++i) {
            length[i] = static_cast<unsigned char>(part.size() >> (8 * i));
        }
        crypto_auth_hmacsha256_update(&state, length.data(), length.size());
        crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(part.data()),
                                      part.size());
    };
    feed(role_label(role));
    feed(client_nonce);
    feed(server_nonce);
    std::array<unsigned char, crypto_auth_hmacsha256_BYTES> mac{};
    crypto_auth_hmacsha256_final(&state, mac.data());
    return to_hex(mac.data(), mac.size());
}

std::optional<size_t> matching_secret(const ClusterSecrets& secrets, ProofRole role,
                                      std::string_view client_nonce, std::string_view server_nonce,
                                      std::string_view proof) {
    std::optional<size_t> match;
    std::vector<std::string_view> held = secrets.held();
    for (size_t i = 0; i < held.size(); ++i) {
        std::string expected = cluster_proof(held[i], role, client_nonce, server_nonce);
        // The length of a proof is public; only equal lengths are compared, in constant time.
        if (proof.size() == expected.size() &&
            sodium_memcmp(proof.data(), expected.data(), expected.size()) == 0 && !match) {
            match = i;
        }
    }
    return match;
}

}  // namespace narad::auth
