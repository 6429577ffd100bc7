#include "wal/direct_commits.h"

#include <gtest/gtest.h>

#include <deque>
#include <future>
#include <set>
#include <thread>

#include "base/failpoint.h"
#include "base/mutex.h"
#include "wal/wal_test_util.h"

namespace narad::wal {
namespace {

using testing::append_and_wait;
using testing::Collector;
using testing::FakeCommitter;
using testing::kPatience;
using testing::make_record;

// The WAL's consumer only collects: what goes through the WAL stays held there, so a test sees
// exactly which records took that path.
class DirectCommitsTest : public testing::IngressWalFixture {
  protected:
    void SetUp() override { ASSERT_NO_FATAL_FAILURE(open_wal(collector_.consumer())); }
    void TearDown() override {
        failpoint::clear_all();
        if (direct_) direct_->stop();
        wal_->stop();
    }

    // Requests over up to four partitions taken, for the tests of split requests.
    static DirectOptions splitting() {
        DirectOptions options;
        options.max_partitions = 4;
        return options;
    }

    void start(DirectOptions options = {}) {
        direct_ = std::make_unique<DirectCommits>(
            *wal_, committer_,
            [this](const meta::MetaState&, std::string_view, PartitionId partition) {
                MutexLock lock(mutex_);
                return unserved_.count(partition.value()) == 0;
            },
            options);
        direct_->start();
    }
    void unserve(uint32_t partition) {
        MutexLock lock(mutex_);
        unserved_.insert(partition);
    }

    // Makes the first commit of `partition` wait in the committer until release_held();
    // wait_held() returns once it is waiting.
    void hold_first_commit(uint32_t partition) {
        committer_.set_gate([this, partition](const FakeCommitter::Key& key, size_t attempt) {
            if (key.second == partition && attempt == 1) {
                entered_.set_value();
                released_.wait();
            }
            return Status::ok();
        });
    }
    void wait_held() { entered_.get_future().wait(); }
    void release_held() { release_.set_value(); }

    // Offers the request; on true, `outcome` gets its completion's status.
    bool offer(std::vector<IngressRecord>& records, std::promise<Status>& outcome) {
        IngressWal::Completion done = [&outcome](Status status) {
            outcome.set_value(std::move(status));
        };
        return direct_->try_take(state_, records, done);
    }
    // Offers one record of `partition` and waits for its completion.
    Status commit(uint32_t partition, const std::string& value) {
        std::vector<IngressRecord> records{make_record("t", partition, value)};
        std::promise<Status> outcome;
        if (!offer(records, outcome)) return Status(Errc::conflict, "declined");
        auto future = outcome.get_future();
        if (future.wait_for(kPatience) != std::future_status::ready) {
            return Status(Errc::timeout, "never completed");
        }
        return future.get();
    }
    static std::vector<std::string> values_of(const Collector& collector) {
        std::vector<std::string> out;
        for (const auto& record : collector.records()) out.push_back(record->value);
        return out;
    }

    Collector collector_;
    FakeCommitter committer_{FakeCommitter::Stamps::absent};
    meta::MetaState state_;
    Mutex mutex_;
    std::promise<void> release_;
    std::shared_future<void> released_ = release_.get_future().share();
    std::promise<void> entered_;
    std::set<uint32_t> unserved_ GUARDED_BY(mutex_);
    std::unique_ptr<DirectCommits> direct_;
};

// Rule: a request for partitions served here is durable in their logs, unstamped, when it
// completes, and the WAL never sees it.
TEST_F(DirectCommitsTest, ServedPartitionsAreCommittedWithoutTheWal) {
    start();
    ASSERT_TRUE(commit(0, "a").is_ok());
    ASSERT_TRUE(commit(1, "b").is_ok());
    EXPECT_EQ(committer_.values({"t", 0}), std::vector<std::string>{"a"});
    EXPECT_EQ(committer_.values({"t", 1}), std::vector<std::string>{"b"});
    EXPECT_EQ(wal_->stats().next_sequence, WalSeq(1));  // no sequence was ever handed out
    EXPECT_TRUE(collector_.records().empty());
    EXPECT_EQ(direct_->stats().committed_records, 2u);
}

// Rule: a partition the WAL holds a record of is declined, records and completion untouched, so
// a record answered through the WAL is never overtaken; once the WAL no longer holds one, the
// partition is taken again.
TEST_F(DirectCommitsTest, PartitionTheWalHoldsIsDeclinedUntilItsRecordsAreCommitted) {
    start();
    append("t", 0, "earlier");
    ASSERT_TRUE(wal_->holds("t", PartitionId(0)));
    std::vector<IngressRecord> records{make_record("t", 1, "x"), make_record("t", 0, "y")};
    std::promise<Status> outcome;
    bool called = false;
    IngressWal::Completion done = [&called](Status) { called = true; };
    EXPECT_FALSE(direct_->try_take(state_, records, done));
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].value, "x");
    EXPECT_EQ(records[1].value, "y");
    ASSERT_TRUE(done);
    EXPECT_FALSE(called);
    EXPECT_EQ(commit(1, "other partition").code(), Errc::ok);

    // A record is durable before the WAL hands it to its consumer, so wait for the hand-over.
    ASSERT_TRUE(collector_.wait_for_count(1));
    wal_->mark_committed(collector_.sequences());
    EXPECT_FALSE(wal_->holds("t", PartitionId(0)));
    EXPECT_TRUE(commit(0, "later").is_ok());
    EXPECT_EQ(committer_.values({"t", 0}), std::vector<std::string>{"later"});
}

// Rule: one partition not served here sends the whole request to the WAL (declined, nothing
// committed), so a request is answered by one path only.
TEST_F(DirectCommitsTest, OneUnservedPartitionDeclinesTheWholeRequest) {
    start(splitting());
    unserve(2);
    std::vector<IngressRecord> records{make_record("t", 0, "a"), make_record("t", 2, "b")};
    std::promise<Status> outcome;
    EXPECT_FALSE(offer(records, outcome));
    EXPECT_EQ(records.size(), 2u);
    EXPECT_EQ(committer_.committed(), 0u);
    EXPECT_EQ(commit(2, "c").code(), Errc::conflict);  // declined on its own too
}

// Rule: a request over more partitions than max_partitions (one by default) is declined whole,
// records and completion untouched: one WAL sync answers it sooner than a log sync per partition.
TEST_F(DirectCommitsTest, RequestOverMorePartitionsThanTheBoundIsDeclined) {
    start();
    std::vector<IngressRecord> spread{make_record("t", 0, "a"), make_record("t", 1, "b")};
    std::promise<Status> declined;
    EXPECT_FALSE(offer(spread, declined));
    EXPECT_EQ(spread.size(), 2u);
    std::promise<Status> outcome;
    std::vector<IngressRecord> one{make_record("t", 0, "c"), make_record("t", 0, "d")};
    ASSERT_TRUE(offer(one, outcome));
    auto future = outcome.get_future();
    ASSERT_EQ(future.wait_for(kPatience), std::future_status::ready);
    EXPECT_TRUE(future.get().is_ok());
    EXPECT_EQ(committer_.values({"t", 0}), (std::vector<std::string>{"c", "d"}));
    EXPECT_EQ(committer_.values({"t", 1}), std::vector<std::string>{});
}

// Rule: a batch the committer refuses (here: frozen for a move) goes to the WAL in its order and
// completes once the WAL has it; the partition is then held by the WAL, so later requests follow
// it there.
TEST_F(DirectCommitsTest, RefusedBatchGoesToTheWalInOrder) {
    committer_.set_gate([](const FakeCommitter::Key&, size_t) {
        return Status(Errc::frozen, "frozen for a move");
    });
    start();
    std::vector<IngressRecord> records{make_record("t", 0, "a"), make_record("t", 0, "b")};
    std::promise<Status> outcome;
    ASSERT_TRUE(offer(records, outcome));
    auto future = outcome.get_future();
    ASSERT_EQ(future.wait_for(kPatience), std::future_status::ready);
    EXPECT_TRUE(future.get().is_ok());
    ASSERT_TRUE(collector_.wait_for_count(2));
    EXPECT_EQ(values_of(collector_), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(committer_.committed(), 0u);
    EXPECT_TRUE(wal_->holds("t", PartitionId(0)));
    EXPECT_EQ(commit(0, "c").code(), Errc::conflict);
    EXPECT_EQ(direct_->stats().to_wal_records, 2u);
}

// Rule: a request split over partitions completes once every part has: one part committed
// directly, the other refused and held by the WAL.
TEST_F(DirectCommitsTest, SplitRequestCompletesWhenEveryPartHas) {
    committer_.set_gate([](const FakeCommitter::Key& key, size_t) {
        return key.second == 1 ? Status(Errc::frozen, "frozen") : Status::ok();
    });
    start(splitting());
    std::vector<IngressRecord> records{make_record("t", 0, "a"), make_record("t", 1, "b"),
                                       make_record("t", 0, "c")};
    std::promise<Status> outcome;
    ASSERT_TRUE(offer(records, outcome));
    auto future = outcome.get_future();
    ASSERT_EQ(future.wait_for(kPatience), std::future_status::ready);
    EXPECT_TRUE(future.get().is_ok());
    EXPECT_EQ(committer_.values({"t", 0}), (std::vector<std::string>{"a", "c"}));
    // The WAL's answer comes once "b" is durable; its consumer may see it a moment later.
    ASSERT_TRUE(collector_.wait_for_count(1));
    EXPECT_EQ(values_of(collector_), std::vector<std::string>{"b"});
}

// Rule: when part of a split request is stored and the rest cannot be (refused here, and the WAL
// refuses it too), the answer is a 500, never a refusal: a 503 would promise nothing was kept.
TEST_F(DirectCommitsTest, PartlyStoredRequestFailsWithInternalNotARefusal) {
    committer_.set_gate([](const FakeCommitter::Key& key, size_t) {
        return key.second == 1 ? Status(Errc::frozen, "frozen") : Status::ok();
    });
    start(splitting());
    wal_->stop();  // the fallback is refused with shutting_down
    std::vector<IngressRecord> records{make_record("t", 0, "a"), make_record("t", 1, "b")};
    std::promise<Status> outcome;
    ASSERT_TRUE(offer(records, outcome));
    auto future = outcome.get_future();
    ASSERT_EQ(future.wait_for(kPatience), std::future_status::ready);
    Status status = future.get();
    EXPECT_EQ(status.code(), Errc::internal);
    EXPECT_NE(status.message().find("ingress WAL is stopped"), std::string::npos)
        << status.to_string();
    EXPECT_EQ(committer_.values({"t", 0}), std::vector<std::string>{"a"});
    // Nothing stored at all keeps the WAL's own refusal.
    EXPECT_EQ(commit(1, "c").code(), Errc::shutting_down);
}

// Rule: the "wal.direct.decline" failpoint sends every request through the WAL.
TEST_F(DirectCommitsTest, DeclineFailpointSendsEveryRequestThroughTheWal) {
    start();
    ASSERT_TRUE(failpoint::configure("wal.direct.decline=error").is_ok());
    std::vector<IngressRecord> records{make_record("t", 0, "a")};
    std::promise<Status> outcome;
    EXPECT_FALSE(offer(records, outcome));
    failpoint::clear_all();
    EXPECT_TRUE(offer(records, outcome));
    EXPECT_TRUE(outcome.get_future().get().is_ok());
}

// Rule: a topic gone completes the request with not_found (nothing to retry).
TEST_F(DirectCommitsTest, TopicGoneCompletesWithNotFound) {
    committer_.set_gate([](const FakeCommitter::Key&, size_t) {
        return Status(Errc::not_found, "topic not found");
    });
    start();
    EXPECT_EQ(commit(0, "a").code(), Errc::not_found);
    EXPECT_TRUE(collector_.records().empty());
    EXPECT_EQ(direct_->stats().dropped_records, 1u);
}

// Rule: requests that queue behind a partition's commit share the next one (one append, one
// sync), in the order they were taken.
TEST_F(DirectCommitsTest, RequestsQueuedBehindACommitShareTheNextOne) {
    hold_first_commit(0);
    start();
    std::vector<std::promise<Status>> outcomes(4);
    for (int i = 0; i < 4; ++i) {
        std::vector<IngressRecord> records{make_record("t", 0, "v" + std::to_string(i))};
        ASSERT_TRUE(offer(records, outcomes[i]));
        if (i == 0) wait_held();  // the first commit is under way
    }
    release_held();
    for (auto& outcome : outcomes) {
        auto future = outcome.get_future();
        ASSERT_EQ(future.wait_for(kPatience), std::future_status::ready);
        EXPECT_TRUE(future.get().is_ok());
    }
    EXPECT_EQ(committer_.values({"t", 0}), (std::vector<std::string>{"v0", "v1", "v2", "v3"}));
    EXPECT_EQ(committer_.batches(), 2u);
    EXPECT_EQ(committer_.max_batch(), 3u);
}

// Rule: past max_queued_bytes a request is declined (the WAL's back-pressure takes over).
TEST_F(DirectCommitsTest, QueueOverItsByteBoundDeclines) {
    hold_first_commit(0);
    DirectOptions options;
    options.max_queued_bytes = 200;  // one request is 122 bytes of key and value
    start(options);
    std::vector<IngressRecord> first{make_record("t", 0, std::string(60, 'a'))};
    std::promise<Status> first_outcome;
    ASSERT_TRUE(offer(first, first_outcome));
    wait_held();
    std::vector<IngressRecord> second{make_record("t", 1, std::string(60, 'b'))};
    std::promise<Status> second_outcome;
    EXPECT_FALSE(offer(second, second_outcome));
    EXPECT_EQ(second.front().value, std::string(60, 'b'));
    release_held();
    EXPECT_TRUE(first_outcome.get_future().get().is_ok());
    EXPECT_TRUE(commit(1, std::string(60, 'b')).is_ok());  // the bound is free again
}

// Rule: stop() lets the running commit finish and hands what is still queued to the WAL, so an
// accepted request is never dropped; a stopped path declines.
TEST_F(DirectCommitsTest, StopHandsQueuedRequestsToTheWal) {
    hold_first_commit(0);
    DirectOptions options;
    options.threads = 1;  // partition 1 waits for the only worker
    start(options);
    std::vector<IngressRecord> first{make_record("t", 0, "a")};
    std::promise<Status> first_outcome;
    ASSERT_TRUE(offer(first, first_outcome));
    wait_held();
    std::vector<IngressRecord> queued{make_record("t", 1, "b")};
    std::promise<Status> queued_outcome;
    ASSERT_TRUE(offer(queued, queued_outcome));

    std::thread stopper([&] { direct_->stop(); });
    // stop() has begun once a request is declined; until then each one queues behind "b".
    std::deque<std::promise<Status>> later_outcomes;
    std::vector<std::string> expected{"b"};
    auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (true) {
        std::string value = "later" + std::to_string(later_outcomes.size());
        std::vector<IngressRecord> probe{make_record("t", 1, value)};
        if (!offer(probe, later_outcomes.emplace_back())) {
            later_outcomes.pop_back();
            break;
        }
        expected.push_back(value);
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "stop() never began";
        std::this_thread::yield();
    }
    release_held();
    stopper.join();
    EXPECT_TRUE(first_outcome.get_future().get().is_ok());
    EXPECT_TRUE(queued_outcome.get_future().get().is_ok());
    for (auto& outcome : later_outcomes) EXPECT_TRUE(outcome.get_future().get().is_ok());
    EXPECT_EQ(committer_.values({"t", 0}), std::vector<std::string>{"a"});
    ASSERT_TRUE(collector_.wait_for_count(expected.size()));
    EXPECT_EQ(values_of(collector_), expected);
}

}  // namespace
}  // namespace narad::wal
