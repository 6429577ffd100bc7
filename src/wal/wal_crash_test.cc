// Crash tests for the WAL and the dispatcher together: the partition logs are modelled by a
// FakeCommitter that survives the "crash" (it deduplicates by producer stamp as they do), the WAL's
// disk by a FaultInjectionFileSystem whose unsynced data a crash drops.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <tuple>

#include "base/mutex.h"
#include "io/fault_injection_fs.h"
#include "wal/dispatcher.h"
#include "wal/wal_test_util.h"

namespace narad::wal {
namespace {

using io::FsOp;
using testing::append_and_wait;
using testing::FakeCommitter;
using testing::make_record;

class WalCrashTest : public ::testing::Test {
  protected:
    std::unique_ptr<IngressWal> open(WalOptions options = {}) {
        auto wal = IngressWal::open(fs_, clock_, dir_.file("ingress"), options);
        EXPECT_TRUE(wal.is_ok()) << wal.status().to_string();
        return wal.is_ok() ? std::move(wal).value() : nullptr;
    }

    testing::TempDir dir_;
    io::FaultInjectionFileSystem fs_;
    FakeClock clock_;
    FakeCommitter committer_;
};

// Rule: after a crash, replaying the WAL commits every record exactly once: those committed before
// it are skipped by the partitions' dedup, the rest are committed.
TEST_F(WalCrashTest, ReplayAfterCrashCommitsEachRecordOnce) {
    committer_.set_gate([](const FakeCommitter::Key& key, size_t) {
        return key.second == 1 ? Status(Errc::unavailable, "owner unreachable") : Status::ok();
    });
    std::vector<std::string> expected[2];
    {
        auto wal = open();
        Dispatcher dispatcher(clock_, *wal, committer_, {});
        dispatcher.start();
        wal->start();
        for (int i = 0; i < 10; ++i) {
            std::string value = "v" + std::to_string(i);
            expected[i % 2].push_back(value);
            ASSERT_TRUE(append_and_wait(*wal, {make_record("t", i % 2, value)}).is_ok());
        }
        ASSERT_TRUE(committer_.wait_until([&]() REQUIRES(committer_.mutex()) {
            return committer_.values_locked({"t", 0}).size() == 5;
        }));
        EXPECT_TRUE(committer_.values({"t", 1}).empty());
        // Crash: the objects go without a clean shutdown of the node, then unsynced data goes.
    }
    ASSERT_TRUE(fs_.drop_unsynced_data().is_ok());

    committer_.set_gate(nullptr);
    auto wal = open();
    Dispatcher dispatcher(clock_, *wal, committer_, {});
    dispatcher.start();
    ASSERT_TRUE(committer_.wait_until(
        [&]() REQUIRES(committer_.mutex()) { return committer_.committed_locked() == 10; }));
    dispatcher.stop();
    EXPECT_EQ(committer_.values({"t", 0}), expected[0]);
    EXPECT_EQ(committer_.values({"t", 1}), expected[1]);
    EXPECT_EQ(committer_.duplicates(), 5u);  // partition 0's records, sent again and skipped
    EXPECT_EQ(wal->stats().pending_records, 0u);
}

// Rule: across many rounds of random appends, injected write/sync failures, partitions that refuse
// commits and crashes that drop unsynced data, every append acknowledged ok is eventually
// committed, no record is committed twice, and each partition receives records in append order.
TEST_F(WalCrashTest, RandomizedCrashesLoseNoAcknowledgedRecordAndCommitNoneTwice) {
    constexpr uint32_t kSeed = 20240611;
    constexpr int kRounds = 40;
    constexpr uint32_t kPartitions = 4;
    SCOPED_TRACE("seed " + std::to_string(kSeed));
    std::mt19937 random(kSeed);
    auto chance = [&](uint32_t one_in) { return random() % one_in == 0; };

    WalOptions wal_options;
    wal_options.segment_bytes_max = 1024;
    wal_options.early_roll_bytes = 512;
    DispatcherOptions dispatcher_options;
    dispatcher_options.threads = 2;
    dispatcher_options.max_batch_records = 4;

    Mutex mutex;
    CondVar completed;
    std::set<std::string> acked;      // under mutex
    std::set<std::string> attempted;  // under mutex
    int outstanding = 0;              // under mutex
    IngressId id;

    for (int round = 0; round <= kRounds; ++round) {
        bool final_round = round == kRounds;
        // A draining round commits everything before its crash, so the next one may start with
        // every segment deleted but the empty active one.
        bool drain = final_round || chance(4);
        std::set<uint32_t> down;  // partitions whose owner refuses every commit this round
        Mutex gate_mutex;
        std::mt19937 gate_random(kSeed + round);
        if (!drain) {
            for (uint32_t p = 0; p < kPartitions; ++p) {
                if (chance(3)) down.insert(p);
            }
        }
        committer_.set_gate([&, drain](const FakeCommitter::Key& key, size_t) {
            if (drain) return Status::ok();
            if (down.contains(key.second)) return Status(Errc::unavailable, "owner down");
            MutexLock lock(gate_mutex);
            return gate_random() % 5 == 0 ? Status(Errc::peer_error, "flaky") : Status::ok();
        });

        auto wal = open(wal_options);
        ASSERT_NE(wal, nullptr);
        if (round == 0) id = wal->id();
        EXPECT_EQ(wal->id(), id);
        auto dispatcher =
            std::make_unique<Dispatcher>(clock_, *wal, committer_, dispatcher_options);
        dispatcher->start();
        wal->start();

        int appends = final_round || chance(6) ? 0 : 5 + static_cast<int>(random() % 25);
        for (int i = 0; i < appends; ++i) {
            if (chance(12)) fs_.fail(FsOp::sync, ".wal", 1);
            if (chance(15)) fs_.tear_next_write(".wal", random() % 100);
            if (chance(150)) {
                fs_.fail(FsOp::write, ".wal", 1);
                fs_.fail(FsOp::truncate, ".wal", 1);  // the WAL gives up until reopened
            }
            std::vector<IngressRecord> records;
            std::vector<std::string> values;
            int count = 1 + static_cast<int>(random() % 4);
            for (int r = 0; r < count; ++r) {
                std::string value =
                    "r" + std::to_string(round) + "-" + std::to_string(i) + "-" + std::to_string(r);
                values.push_back(value);
                records.push_back(make_record("t", random() % kPartitions, value));
            }
            {
                MutexLock lock(mutex);
                attempted.insert(values.begin(), values.end());
                ++outstanding;
            }
            wal->append(std::move(records), [&, values](Status status) {
                MutexLock lock(mutex);
                if (status.is_ok()) acked.insert(values.begin(), values.end());
                --outstanding;
                completed.notify_all();
            });
            if (chance(4)) {
                MutexLock lock(mutex);
                ASSERT_TRUE(
                    completed.wait_for(lock, testing::kPatience, [&] { return outstanding == 0; }));
            }
            clock_.advance(dispatcher_options.retry_interval);  // flaky partitions retry
        }

        if (drain) {
            std::set<std::string> must_commit;
            {
                MutexLock lock(mutex);
                ASSERT_TRUE(
                    completed.wait_for(lock, testing::kPatience, [&] { return outstanding == 0; }));
                must_commit = acked;
            }
            ASSERT_TRUE(committer_.wait_until([&]() REQUIRES(committer_.mutex()) {
                auto values = committer_.all_values_locked();
                for (const auto& value : must_commit) {
                    if (!values.contains(value)) return false;
                }
                return true;
            })) << "acknowledged records never committed";
        }
        // Crash: the node goes (the WAL finishes the group it is writing, queued appends fail),
        // then the machine loses everything not synced.
        dispatcher.reset();
        wal.reset();
        {
            MutexLock lock(mutex);
            ASSERT_EQ(outstanding, 0);
        }
        fs_.heal();
        ASSERT_TRUE(fs_.drop_unsynced_data().is_ok());
    }

    auto committed = committer_.all_values();
    for (const auto& value : acked) {
        EXPECT_EQ(committed.count(value), 1u) << value << " was acknowledged but never committed";
    }
    for (const auto& [value, times] : committed) {
        EXPECT_EQ(times, 1) << value << " committed " << times << " times";
        EXPECT_TRUE(attempted.contains(value)) << value << " was never produced";
    }
    // Per partition, records arrive in append order: rounds and appends in increasing order.
    auto position = [](const std::string& value) {
        int round = 0, append = 0, record = 0;
        std::sscanf(value.c_str(), "r%d-%d-%d", &round, &append, &record);
        return std::tuple(round, append, record);
    };
    for (uint32_t p = 0; p < kPartitions; ++p) {
        auto values = committer_.values({"t", p});
        for (size_t i = 1; i < values.size(); ++i) {
            EXPECT_LT(position(values[i - 1]), position(values[i]))
                << "partition " << p << ": " << values[i - 1] << " before " << values[i];
        }
    }
    EXPECT_GT(acked.size(), 0u);
    EXPECT_LT(acked.size(), attempted.size());  // the faults did fail some appends
}

}  // namespace
}  // namespace narad::wal
