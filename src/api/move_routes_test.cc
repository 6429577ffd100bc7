#include "api/move_routes.h"

#include <gtest/gtest.h>

#include <vector>

namespace narad::api {
namespace {

// Records the timeout of every call and answers none (as a source that hangs: unknown outcome).
class HungSource final : public PeerClient {
  public:
    Result<PeerReply> call(const NodeId&, std::string_view method, std::string_view target,
                           std::string_view, std::string_view, Millis timeout) override {
        calls.push_back({std::string(method) + " " + std::string(target), timeout});
        return Status(Errc::unknown_outcome, "timed out");
    }
    std::vector<std::pair<std::string, Millis>> calls;
};

// Rule (found by the chaos suite, HungSourceHoldsTheFreezeRequestOnlyForTheFreezeTtl): a freeze or
// fence request to a source that hangs gives up after the freeze TTL, not the 30 s of a listing,
// so the destination judges the source (and may force-promote) without a 30 s stall.
TEST(PeerSourceClientTest, HungSourceHoldsTheFreezeRequestOnlyForTheFreezeTtl) {
    HungSource peers;
    PeerSourceClient client(peers, Millis(30'000), Millis(6'000));
    const NodeId source("n4");
    EXPECT_EQ(client.prepare(source, "t", PartitionId(1), FreezeToken()).status().code(),
              Errc::unknown_outcome);
    EXPECT_FALSE(
        client.fence(source, "t", PartitionId(1), FreezeToken("token"), Offset(7)).is_ok());
    EXPECT_FALSE(client.list(source, "t", PartitionId(1)).is_ok());
    ASSERT_EQ(peers.calls.size(), 3u);
    EXPECT_NE(peers.calls[0].first.find("prepare"), std::string::npos);
    EXPECT_EQ(peers.calls[0].second, Millis(6'000));
    EXPECT_NE(peers.calls[1].first.find("fence"), std::string::npos);
    EXPECT_EQ(peers.calls[1].second, Millis(6'000));
    EXPECT_EQ(peers.calls[2].second, Millis(30'000));  // a listing keeps the long timeout
}

// Rule: a freeze TTL longer than the request timeout never lengthens the freeze request.
TEST(PeerSourceClientTest, FreezeTimeoutNeverExceedsTheRequestTimeout) {
    HungSource peers;
    PeerSourceClient client(peers, Millis(30'000), Millis(120'000));
    (void)client.prepare(NodeId("n4"), "t", PartitionId(1), FreezeToken());
    ASSERT_EQ(peers.calls.size(), 1u);
    EXPECT_EQ(peers.calls[0].second, Millis(30'000));
}

}  // namespace
}  // namespace narad::api
