#include "auth/cluster_proof.h"

#include <gtest/gtest.h>

#include <set>

namespace narad::auth {
namespace {

// Rule: nonces are fresh 64-digit lower-case hex strings; anything else is not a nonce.
TEST(ClusterProofTest, NoncesAreFreshHex) {
    std::set<std::string> seen;
    for (int i = 0; i < 100; ++i) {
        std::string nonce = make_nonce();
        EXPECT_TRUE(valid_nonce(nonce)) << nonce;
        EXPECT_TRUE(seen.insert(nonce).second) << "a nonce repeated";
    }
    EXPECT_FALSE(valid_nonce(""));
    EXPECT_FALSE(valid_nonce(std::string(63, 'a')));
    EXPECT_FALSE(valid_nonce(std::string(65, 'a')));
    EXPECT_FALSE(valid_nonce(std::string(64, 'A')));
    EXPECT_FALSE(valid_nonce(std::string(63, 'a') + "g"));
    EXPECT_TRUE(valid_nonce(std::string(64, '0')));
}

// Rule: a proof depends on the secret, the role and both nonces, and it is not the secret.
TEST(ClusterProofTest, ProofBindsSecretRoleAndBothNonces) {
    std::string a = make_nonce(), b = make_nonce();
    std::string proof = cluster_proof("s3cret", ProofRole::client, a, b);
    EXPECT_EQ(proof.size(), 64u);
    EXPECT_EQ(proof, cluster_proof("s3cret", ProofRole::client, a, b));
    EXPECT_NE(proof, cluster_proof("s3creT", ProofRole::client, a, b));
    EXPECT_NE(proof, cluster_proof("s3cret", ProofRole::server, a, b));
    EXPECT_NE(proof, cluster_proof("s3cret", ProofRole::client, b, a));
    EXPECT_NE(proof, cluster_proof("s3cret", ProofRole::client, a, make_nonce()));
    EXPECT_EQ(proof.find("s3cret"), std::string::npos);
    // Moving bytes between the parts changes the proof (each part is length-prefixed).
    EXPECT_NE(cluster_proof("k", ProofRole::client, "ab", "c"),
              cluster_proof("k", ProofRole::client, "a", "bc"));
}

// Rule: a proof is accepted when it was made with the current or the previous secret, and it says
// which; a proof of any other secret, or of the other role, is refused.
TEST(ClusterProofTest, RotationAcceptsCurrentAndPrevious) {
    ClusterSecrets secrets{.current = "new", .previous = "old"};
    std::string c = make_nonce(), s = make_nonce();
    EXPECT_EQ(matching_secret(secrets, ProofRole::client, c, s,
                              cluster_proof("new", ProofRole::client, c, s)),
              0u);
    EXPECT_EQ(matching_secret(secrets, ProofRole::client, c, s,
                              cluster_proof("old", ProofRole::client, c, s)),
              1u);
    EXPECT_EQ(matching_secret(secrets, ProofRole::client, c, s,
                              cluster_proof("other", ProofRole::client, c, s)),
              std::nullopt);
    EXPECT_EQ(matching_secret(secrets, ProofRole::client, c, s,
                              cluster_proof("new", ProofRole::server, c, s)),
              std::nullopt);
    EXPECT_EQ(matching_secret(secrets, ProofRole::client, c, s, ""), std::nullopt);
    // Once the rotation is over, the old secret no longer proves anything.
    ClusterSecrets rotated{.current = "new"};
    EXPECT_EQ(matching_secret(rotated, ProofRole::client, c, s,
                              cluster_proof("old", ProofRole::client, c, s)),
              std::nullopt);
    EXPECT_EQ(rotated.held().size(), 1u);
    EXPECT_TRUE(ClusterSecrets{}.held().empty());
}

// Rule: a generated secret is 32 random bytes in hex, different every time.
TEST(ClusterProofTest, GeneratedSecretsDiffer) {
    std::string one = generate_cluster_secret();
    EXPECT_EQ(one.size(), 64u);
    EXPECT_NE(one, generate_cluster_secret());
}

}  // namespace
}  // namespace narad::auth
