#include "wal/produce_service.h"

#include <gtest/gtest.h>

#include <future>
#include <map>
#include <set>

#include "io/fault_injection_fs.h"
#include "meta/fake_meta_store.h"
#include "wal/direct_commits.h"
#include "wal/wal_test_util.h"

namespace narad::wal {
namespace {

class ProduceServiceTest : public testing::IngressWalFixture {
  protected:
    void SetUp() override {
        ASSERT_NO_FATAL_FAILURE(open_wal(collector_.consumer()));
        service_ = std::make_unique<ProduceService>(clock_, store_, *wal_, &liveness_);
        ASSERT_TRUE(store_.create_topic_owned_by("t", {"a", "b", "c", "a"}).is_ok());
        store_.update([](meta::MetaState& state) {
            state.live = {NodeId("a"), NodeId("b"), NodeId("c")};
        });
    }
    void TearDown() override { wal_->stop(); }

    void kill(const std::string& node) {
        store_.update([&](meta::MetaState& state) {
            state.live.erase(NodeId(node));
            state.down_since[NodeId(node)] = clock_.now();
        });
        clock_.advance(Millis(30'000));
    }
    Status produce(ProduceMessage message) {
        std::promise<Status> done;
        std::vector<ProduceMessage> messages;
        messages.push_back(std::move(message));
        service_->produce("t", std::move(messages),
                          [&](Status status) { done.set_value(std::move(status)); });
        return done.get_future().get();
    }
    // The partition the last produced record went to.
    uint32_t last_partition(size_t count) {
        EXPECT_TRUE(collector_.wait_for_count(count));
        return collector_.records().back()->partition.value();
    }
    // A key whose hash lands on `partition` of 4.
    static std::string key_for(uint32_t partition) {
        for (int i = 0;; ++i) {
            std::string key = "k" + std::to_string(i);
            if (fnv1a32(key) % 4 == partition) return key;
        }
    }

    meta::FakeMetaStore store_;
    testing::Collector collector_;
    OwnerLiveness liveness_{clock_, Millis(30'000)};
    std::unique_ptr<ProduceService> service_;
};

// Rule: a keyed message goes to its hash partition while that owner lives, and walks forward to
// the first partition whose owner is not dead once it is (Narad's dead-owner skip).
TEST_F(ProduceServiceTest, KeyedProduceWalksForwardPastDeadOwners) {
    std::string key = key_for(1);
    ASSERT_TRUE(produce({key, std::nullopt, "x"}).is_ok());
    EXPECT_EQ(last_partition(1), 1u);
    kill("b");  // owns 1
    ASSERT_TRUE(produce({key, std::nullopt, "y"}).is_ok());
    EXPECT_EQ(last_partition(2), 2u);
    kill("c");  // owns 2
    ASSERT_TRUE(produce({key, std::nullopt, "z"}).is_ok());
    EXPECT_EQ(last_partition(3), 3u);
}

// Rule: round-robin never picks a partition whose owner is dead.
TEST_F(ProduceServiceTest, RoundRobinSkipsDeadOwners) {
    kill("b");
    for (int i = 0; i < 8; ++i) {
        ASSERT_TRUE(produce({std::nullopt, std::nullopt, "v"}).is_ok());
        EXPECT_NE(last_partition(i + 1), 1u);
    }
}

// Rule (Narad 3.1): a message without a key is stored without one, and keyless messages go
// round-robin: every partition once per round, whatever partition the round starts at.
TEST_F(ProduceServiceTest, KeylessMessagesCarryNoKeyAndGoRoundRobin) {
    std::map<uint32_t, int> per_partition;
    for (int i = 0; i < 8; ++i) {
        ASSERT_TRUE(produce({std::nullopt, std::nullopt, "v"}).is_ok());
        per_partition[last_partition(i + 1)]++;
        EXPECT_TRUE(collector_.records().back()->key.empty());
    }
    EXPECT_EQ(per_partition, (std::map<uint32_t, int>{{0, 2}, {1, 2}, {2, 2}, {3, 2}}));
}

// Rule: each topic's rotation starts at a random partition, so producers that write several
// topics in turn do not all start (and pile up) on partition 0. Twenty topics all starting at 0
// would happen by chance once in 4^20 runs.
TEST_F(ProduceServiceTest, EachTopicsRotationStartsAtARandomPartition) {
    std::set<uint32_t> starts;
    for (int t = 0; t < 20; ++t) {
        std::string name = "rr" + std::to_string(t);
        ASSERT_TRUE(store_.create_topic_owned_by(name, {"a", "b", "c", "a"}).is_ok());
        std::promise<Status> done;
        std::vector<ProduceMessage> messages(1);
        messages[0].value = "v";
        service_->produce(name, std::move(messages),
                          [&](Status status) { done.set_value(std::move(status)); });
        ASSERT_TRUE(done.get_future().get().is_ok());
        starts.insert(last_partition(t + 1));
    }
    EXPECT_GT(starts.size(), 1u);
}

// Rule: a batch's refusal names its message, even in a batch of one; a single produce's does not.
TEST_F(ProduceServiceTest, BatchRefusalsNameTheMessage) {
    auto refusal = [&](ProduceService::Shape shape) {
        std::promise<Status> done;
        std::vector<ProduceMessage> messages(1);
        messages[0].partition = 9;
        messages[0].value = "v";
        service_->produce(
            "t", std::move(messages), [&](Status status) { done.set_value(std::move(status)); },
            shape);
        return done.get_future().get().message();
    };
    EXPECT_EQ(refusal(ProduceService::Shape::batch),
              "message 0: invalid argument: partition out of range");
    EXPECT_EQ(refusal(ProduceService::Shape::single), "invalid argument: partition out of range");
}

// Rule: an explicit partition whose owner is dead is refused with unavailable (503) naming the
// node; a live one is accepted.
TEST_F(ProduceServiceTest, ExplicitPartitionOfDeadOwnerIsUnavailable) {
    kill("b");
    Status refused = produce({std::nullopt, 1u, "v"});
    EXPECT_EQ(refused.code(), Errc::unavailable);
    EXPECT_NE(refused.message().find("b"), std::string::npos);
    EXPECT_TRUE(produce({std::nullopt, 2u, "v"}).is_ok());
}

// Rule: when every owner is dead a keyed message keeps its hash partition (the WAL holds it until
// an owner returns) rather than being refused.
TEST_F(ProduceServiceTest, EveryOwnerDeadKeepsHashPartition) {
    kill("a");
    kill("b");
    kill("c");
    ASSERT_TRUE(produce({key_for(2), std::nullopt, "v"}).is_ok());
    EXPECT_EQ(last_partition(1), 2u);
}

// Rule: with a direct path, a request whose partitions this node serves is committed straight to
// the partition log and never enters the WAL; one it does not serve goes through the WAL.
TEST_F(ProduceServiceTest, ServedPartitionsTakeTheDirectPathAndOthersTheWal) {
    testing::FakeCommitter committer(testing::FakeCommitter::Stamps::absent);
    DirectCommits direct(
        *wal_, committer,
        [](const meta::MetaState& state, std::string_view topic, PartitionId partition) {
            const meta::Assignment* assignment = state.find_assignment(topic, partition);
            return assignment != nullptr && assignment->owner == NodeId("a");
        });
    direct.start();
    service_ = std::make_unique<ProduceService>(clock_, store_, *wal_, &liveness_, &direct);
    ASSERT_TRUE(produce({std::nullopt, 3u, "direct"}).is_ok());  // "a" owns partition 3
    EXPECT_EQ(committer.values({"t", 3}), std::vector<std::string>{"direct"});
    EXPECT_EQ(wal_->stats().pending_records, 0u);
    ASSERT_TRUE(produce({std::nullopt, 1u, "through-wal"}).is_ok());  // "b" owns partition 1
    EXPECT_EQ(last_partition(1), 1u);
    EXPECT_EQ(collector_.records().back()->value, "through-wal");
    EXPECT_EQ(direct.stats().committed_records, 1u);
    direct.stop();
}

}  // namespace
}  // namespace narad::wal
