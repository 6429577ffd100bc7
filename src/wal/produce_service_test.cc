#include "wal/produce_service.h"

#include <gtest/gtest.h>

#include <future>

#include "io/fault_injection_fs.h"
#include "meta/fake_meta_store.h"
#include "wal/wal_test_util.h"

namespace narad::wal {
namespace {

class ProduceServiceTest : public ::testing::Test {
  protected:
    void SetUp() override {
        auto wal = IngressWal::open(fs_, clock_, dir_.file("ingress"), {});
        ASSERT_TRUE(wal.is_ok()) << wal.status().to_string();
        wal_ = std::move(wal).value();
        wal_->set_consumer(collector_.consumer());
        wal_->start();
        service_ = std::make_unique<ProduceService>(clock_, store_, *wal_, &liveness_);
        meta::Topic topic;
        topic.name = "t";
        topic.incarnation = IncarnationId("inc-1");
        topic.partitions = 4;
        ASSERT_TRUE(store_.create_topic(topic, {NodeId("a"), NodeId("b"), NodeId("c"), NodeId("a")})
                        .is_ok());
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

    testing::TempDir dir_;
    io::FaultInjectionFileSystem fs_;
    FakeClock clock_;
    meta::FakeMetaStore store_;
    std::unique_ptr<IngressWal> wal_;
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

}  // namespace
}  // namespace narad::wal
