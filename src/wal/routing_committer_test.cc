#include "wal/routing_committer.h"

#include <gtest/gtest.h>

#include <deque>

#include "base/mutex.h"
#include "meta/fake_meta_store.h"
#include "wal/commit_codec.h"
#include "wal/wal_test_util.h"

namespace narad::wal {
namespace {

// A PeerClient that records calls and answers from a script (default: 204).
class FakePeers final : public PeerClient {
  public:
    struct Call {
        NodeId node;
        std::string method;
        std::string target;
        std::string body;
    };
    Result<PeerReply> call(const NodeId& node, std::string_view method, std::string_view target,
                           std::string_view body, std::string_view, Millis) override {
        MutexLock lock(mutex_);
        calls_.push_back({node, std::string(method), std::string(target), std::string(body)});
        if (answers_.empty()) return PeerReply{204, "", ""};
        auto answer = answers_.front();
        answers_.pop_front();
        return answer;
    }
    void answer(Result<PeerReply> reply) {
        MutexLock lock(mutex_);
        answers_.push_back(std::move(reply));
    }
    std::vector<Call> calls() {
        MutexLock lock(mutex_);
        return calls_;
    }

  private:
    Mutex mutex_;
    std::vector<Call> calls_;
    std::deque<Result<PeerReply>> answers_;
};

class RoutingCommitterTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(store_.create_topic_owned_by("t", {"a", "b", "c"}).is_ok());
        store_.update([](meta::MetaState& state) {
            for (const char* node : {"a", "b", "c"}) {
                state.members[NodeId(node)] = meta::MemberInfo{.id = NodeId(node)};
            }
        });
    }
    Status commit(uint32_t partition) {
        std::vector<storage::Record> records{
            {"k1", "v1", 1, {IngressId(9), WalSeq(1)}},
            {"k2", "v2", 2, {IngressId(9), WalSeq(2)}},
        };
        return routing_.commit("t", "inc-1", PartitionId(partition), records);
    }

    meta::FakeMetaStore store_;
    testing::FakeCommitter local_;
    FakePeers peers_;
    RoutingCommitter routing_{store_, NodeId("a"), local_, peers_};
};

// Rule: a partition this node owns is committed locally and nothing goes over the network.
TEST_F(RoutingCommitterTest, LocalPartitionGoesToLocalCommitter) {
    ASSERT_TRUE(commit(0).is_ok());
    EXPECT_EQ(local_.values({"t", 0}), (std::vector<std::string>{"v1", "v2"}));
    EXPECT_TRUE(peers_.calls().empty());
}

// Rule: a remote partition's batch is POSTed to its owner's commit route with the topic,
// incarnation, partition and the sender's metastore revision, and a body that decodes to the same
// records and stamps.
TEST_F(RoutingCommitterTest, RemotePartitionIsPostedToOwner) {
    ASSERT_TRUE(commit(1).is_ok());
    auto calls = peers_.calls();
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].node, NodeId("b"));
    EXPECT_EQ(calls[0].method, "POST");
    EXPECT_EQ(calls[0].target,
              "/internal/v1/commit?topic=t&incarnation=inc-1&partition=1&revision=" +
                  std::to_string(store_.snapshot()->revision));
    auto decoded = commit_codec::decode(calls[0].body);
    ASSERT_TRUE(decoded.is_ok());
    ASSERT_EQ(decoded->size(), 2u);
    EXPECT_EQ((*decoded)[1].value, "v2");
    EXPECT_EQ((*decoded)[1].producer.sequence, WalSeq(2));
    EXPECT_EQ(local_.committed(), 0u);
}

// Rule: the owner's 404 drops the records (not_found); 421, 5xx, an unreachable owner, a lost
// reply and an unknown member are all retryable (never not_found).
TEST_F(RoutingCommitterTest, OwnerAnswersMapToDropOrRetry) {
    peers_.answer(PeerReply{404, "{\"error\":\"topic not found\"}", ""});
    EXPECT_EQ(commit(2).code(), Errc::not_found);
    peers_.answer(PeerReply{421, "", ""});
    EXPECT_EQ(commit(2).code(), Errc::not_owner);
    peers_.answer(PeerReply{503, "", ""});
    EXPECT_EQ(commit(2).code(), Errc::unavailable);
    peers_.answer(Status(Errc::peer_error, "refused"));
    EXPECT_EQ(commit(2).code(), Errc::peer_error);
    peers_.answer(Status(Errc::unknown_outcome, "lost"));
    EXPECT_EQ(commit(2).code(), Errc::unknown_outcome);
    peers_.answer(Status(Errc::not_found, "not a member"));
    Status unknown_member = commit(2);
    EXPECT_FALSE(unknown_member.is_ok());
    EXPECT_NE(unknown_member.code(), Errc::not_found);
    EXPECT_TRUE(commit(2).is_ok());
}

// Rule: when the assignment moves to this node, the next commit goes local (routing follows the
// latest snapshot).
TEST_F(RoutingCommitterTest, RoutingFollowsTheLatestSnapshot) {
    store_.update([](meta::MetaState& state) {
        state.assignments[meta::PartitionKey{"t", PartitionId(1)}].owner = NodeId("a");
    });
    ASSERT_TRUE(commit(1).is_ok());
    EXPECT_TRUE(peers_.calls().empty());
    EXPECT_EQ(local_.values({"t", 1}).size(), 2u);
}

// Rule: a snapshot without members is a single node's: every batch is committed locally, even
// for assignments made under another node id.
TEST_F(RoutingCommitterTest, NoMembersMeansSingleNodeAndLocal) {
    store_.update([](meta::MetaState& state) { state.members.clear(); });
    ASSERT_TRUE(commit(1).is_ok());
    EXPECT_TRUE(peers_.calls().empty());
    EXPECT_EQ(local_.values({"t", 1}).size(), 2u);
}

}  // namespace
}  // namespace narad::wal
