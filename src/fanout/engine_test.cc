#include "fanout/engine.h"

#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "base/checksum.h"
#include "base/mutex.h"
#include "fanout/cursor_file.h"
#include "io/fault_injection_fs.h"
#include "meta/fake_meta_store.h"
#include "queue/temp_dir_for_test.h"
#include "storage/topic_directory.h"

namespace narad::fanout {
namespace {

using namespace std::chrono_literals;

// Appends copies straight to this node's child logs (which skip a stamp they hold, as every
// partition log does), refusing while a test says a child partition is down.
class LogCommitter final : public storage::PartitionCommitter {
  public:
    LogCommitter(storage::LogManager& logs, Clock& clock) : logs_(logs), clock_(clock) {}
    Status commit(const std::string& topic, const std::string&, PartitionId partition,
                  std::span<const storage::Record> records) override {
        {
            MutexLock lock(mutex_);
            ++calls_;
            if (down_.count(partition.value()) > 0) {
                return Status(Errc::unavailable, "child partition owner is down");
            }
        }
        std::vector<storage::Record> stamped(records.begin(), records.end());
        for (auto& record : stamped) record.timestamp_ms = clock_.wall_ms();  // commit time
        NARAD_ASSIGN_OR_RETURN(auto log,
                               logs_.get(topic, partition, storage::CreateIfMissing::yes));
        return log->append(stamped).status();
    }
    void set_down(uint32_t partition, bool down) {
        MutexLock lock(mutex_);
        if (down) {
            down_.insert(partition);
        } else {
            down_.erase(partition);
        }
    }
    int calls() const {
        MutexLock lock(mutex_);
        return calls_;
    }

  private:
    storage::LogManager& logs_;
    Clock& clock_;
    mutable Mutex mutex_;
    std::set<uint32_t> down_;
    int calls_ = 0;
};

class FanoutEngineTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(store_.create_topic_owned_by("orders", {"n1", "n1", "n1"}, "p-inc").is_ok());
        ASSERT_TRUE(store_.create_topic_owned_by("copy", {"n1", "n1", "n1"}, "c-inc").is_ok());
        logs_.set_append_listener([this](const std::string& topic, PartitionId partition, Offset) {
            if (engine_) engine_->on_append(topic, partition);
        });
    }
    void TearDown() override {
        if (engine_) engine_->stop();
        logs_.close_all();
    }

    void attach(const std::string& epoch, int64_t delay_ms = 0) {
        store_.update([&](meta::MetaState& state) {
            meta::Topic& parent = state.topics.at("orders");
            meta::Topic& child = state.topics.at("copy");
            if (child.role == meta::TopicRole::child) meta::unlink_child(parent, child);
            meta::link_child(parent, child, epoch, delay_ms);
        });
    }

    void start() {
        FanoutOptions options;
        options.threads = 1;
        options.linger = Millis(0);
        options.owns = [](const meta::MetaState&, std::string_view, PartitionId) { return true; };
        options.installed_links = [this](std::string_view, PartitionId) {
            MutexLock lock(marker_mutex_);
            return marker_links_;
        };
        engine_ = std::make_unique<FanoutEngine>(clock_, fs_, store_, logs_, committer_, options);
        engine_->start();
        engine_->poke();
    }
    void restart() {
        engine_->stop();
        engine_.reset();
        start();
    }

    // As the owner's commit does: the topic directory's incarnation marker first.
    void produce(uint32_t partition, const std::string& key, const std::string& value) {
        ASSERT_TRUE(storage::prepare_topic_directory(io::posix_file_system(),
                                                     logs_.topic_directory("orders"),
                                                     IncarnationId("p-inc"))
                        .is_ok());
        auto log = logs_.get("orders", PartitionId(partition), storage::CreateIfMissing::yes);
        ASSERT_TRUE(log.is_ok());
        storage::Record record{key, value, clock_.wall_ms(), {}};
        ASSERT_TRUE((*log)->append(std::span(&record, 1)).is_ok());
    }

    std::vector<storage::StoredRecord> records_of(const std::string& topic, uint32_t partition) {
        auto log = logs_.get(topic, PartitionId(partition), storage::CreateIfMissing::no);
        if (!log.is_ok()) return {};
        auto read = (*log)->read(Offset(0), 100'000, 64 << 20);
        return read.is_ok() ? read->records : std::vector<storage::StoredRecord>{};
    }
    size_t child_count() {
        size_t total = 0;
        for (uint32_t p = 0; p < 3; ++p) total += records_of("copy", p).size();
        return total;
    }

    // Bounded wait on a condition the engine's threads make true.
    bool eventually(const std::function<bool()>& done) {
        for (int i = 0; i < 5000; ++i) {
            if (done()) return true;
            std::this_thread::sleep_for(1ms);
        }
        return done();
    }
    bool anchored_everywhere() {
        auto stats = engine_->cursor_stats("orders");
        if (stats.size() != 3) return false;
        for (const auto& stat : stats) {
            if (!stat.anchored) return false;
        }
        return true;
    }
    bool lag_zero() {
        auto stats = engine_->cursor_stats("orders");
        for (const auto& stat : stats) {
            if (!stat.anchored || stat.next != stat.high_watermark) return false;
        }
        return stats.size() == 3;
    }

    queue::TempDirForTest dir_;
    io::FaultInjectionFileSystem fs_;
    FakeClock clock_;
    meta::FakeMetaStore store_;
    storage::LogManager logs_{io::posix_file_system(), clock_, dir_.path(), storage::LogOptions{}};
    LogCommitter committer_{logs_, clock_};
    Mutex marker_mutex_;
    std::vector<LinkRef> marker_links_;
    std::unique_ptr<FanoutEngine> engine_;
};

// Rule: after attach, every record committed to the parent reaches the child exactly once, with
// its key and value, in the partition its key hashes to; records from before the attach do not
// (no backfill); the lag goes to 0.
TEST_F(FanoutEngineTest, CopiesEveryRecordOnceWithItsKey) {
    produce(0, "early", "before attach");
    attach("epoch-1");
    start();
    ASSERT_TRUE(eventually([&] { return anchored_everywhere(); }));
    std::multiset<std::pair<std::string, std::string>> produced;
    for (int i = 0; i < 30; ++i) {
        std::string key = "key-" + std::to_string(i % 7);
        std::string value = "v" + std::to_string(i);
        produce(static_cast<uint32_t>(i % 3), key, value);
        produced.insert({key, value});
    }
    ASSERT_TRUE(eventually([&] { return child_count() >= 30; }));
    ASSERT_TRUE(eventually([&] { return lag_zero(); }));
    std::multiset<std::pair<std::string, std::string>> copied;
    for (uint32_t p = 0; p < 3; ++p) {
        for (const auto& record : records_of("copy", p)) {
            EXPECT_EQ(fnv1a32(record.key) % 3, p) << record.key;
            copied.insert({record.key, record.value});
        }
    }
    EXPECT_EQ(copied, produced);
}

// Rule: a keyless copy keeps its parent partition's index when the partition counts match.
TEST_F(FanoutEngineTest, KeylessCopyKeepsThePartitionIndex) {
    attach("epoch-1");
    start();
    ASSERT_TRUE(eventually([&] { return anchored_everywhere(); }));
    produce(2, "", "no key");
    ASSERT_TRUE(eventually([&] { return child_count() == 1; }));
    ASSERT_EQ(records_of("copy", 2).size(), 1u);
    EXPECT_EQ(records_of("copy", 2)[0].value, "no key");
}

// Rule: a child partition that refuses holds the cursor (nothing skipped); the copies the other
// partitions already took are not landed twice when the slab is sent again; a restart from an
// older cursor file lands nothing twice either.
TEST_F(FanoutEngineTest, RetriesAndRestartsNeverLandACopyTwice) {
    attach("epoch-1");
    start();
    ASSERT_TRUE(eventually([&] { return anchored_everywhere(); }));
    committer_.set_down(1, true);
    // Produced while the engine is stopped, so the first slab holds them all.
    engine_->stop();
    std::map<uint32_t, int> per_child;
    for (int i = 0; i < 40; ++i) {
        std::string key = "k" + std::to_string(i);
        ++per_child[fnv1a32(key) % 3];
        produce(0, key, "v" + std::to_string(i));
    }
    ASSERT_GT(per_child[1], 0);
    start();
    // Partitions 0 and 2 take their copies; the cursor of parent partition 0 stays where it was.
    ASSERT_TRUE(eventually([&] {
        return records_of("copy", 0).size() == static_cast<size_t>(per_child[0]) &&
               records_of("copy", 2).size() == static_cast<size_t>(per_child[2]);
    }));
    int calls = committer_.calls();
    ASSERT_TRUE(eventually([&] {
        clock_.advance(1s);
        engine_->poke();
        return committer_.calls() > calls + 2;
    }));
    EXPECT_TRUE(records_of("copy", 1).empty());
    for (const auto& stat : engine_->cursor_stats("orders")) {
        if (stat.partition == PartitionId(0)) {
            EXPECT_EQ(stat.next, Offset(0));
        }
    }
    committer_.set_down(1, false);
    clock_.advance(1s);
    engine_->poke();
    ASSERT_TRUE(eventually([&] { return lag_zero(); }));
    EXPECT_EQ(child_count(), 40u);

    // An older cursor (a crash before the cursor write, or a moved copy's cursor) resends.
    engine_->stop();
    std::string path = io::join_path(logs_.partition_directory("orders", PartitionId(0)),
                                     cursor_file_name("copy"));
    ASSERT_TRUE(write_cursor(io::posix_file_system(), path, {"epoch-1", Offset(0)}).is_ok());
    start();
    ASSERT_TRUE(eventually([&] { return lag_zero(); }));
    EXPECT_EQ(child_count(), 40u);
    produce(0, "after", "restart");
    ASSERT_TRUE(eventually([&] { return child_count() == 41; }));
}

// Rule: a delay child's copy is committed no earlier than parent commit time + delay (each
// copy's commit time is checked against its parent record's), and every copy arrives.
TEST_F(FanoutEngineTest, DelayNeverEarly) {
    const int64_t delay_ms = 60'000;
    attach("epoch-1", delay_ms);
    start();
    ASSERT_TRUE(eventually([&] { return anchored_everywhere(); }));
    std::map<std::string, int64_t> committed_at;
    for (int i = 0; i < 6; ++i) {
        std::string key = "k" + std::to_string(i);
        produce(0, key, "v");
        committed_at[key] = records_of("orders", 0).back().timestamp_ms;
        clock_.advance(7s);
    }
    for (int second = 0; second < 120 && child_count() < 6; ++second) {
        clock_.advance(1s);
        engine_->poke();
        // Let the worker look at the new time before moving it again.
        (void)eventually([&] { return clock_.waiters() >= 2; });
    }
    ASSERT_TRUE(eventually([&] { return child_count() == 6; }));
    for (uint32_t p = 0; p < 3; ++p) {
        for (const auto& copy : records_of("copy", p)) {
            EXPECT_GE(copy.timestamp_ms, committed_at.at(copy.key) + delay_ms) << copy.key;
        }
    }
}

// Rule: a delay link survives a restart with its pending window: records not yet due when the
// engine stopped are all delivered, none early.
TEST_F(FanoutEngineTest, DelayPendingWindowSurvivesRestart) {
    const int64_t delay_ms = 10'000;
    attach("epoch-1", delay_ms);
    start();
    ASSERT_TRUE(eventually([&] { return anchored_everywhere(); }));
    for (int i = 0; i < 5; ++i) produce(1, "k" + std::to_string(i), "v");
    int64_t produced_at = clock_.wall_ms();
    restart();
    for (int second = 0; second < 60 && child_count() < 5; ++second) {
        clock_.advance(1s);
        engine_->poke();
        (void)eventually([&] { return clock_.waiters() >= 2; });
    }
    ASSERT_TRUE(eventually([&] { return child_count() == 5; }));
    for (uint32_t p = 0; p < 3; ++p) {
        for (const auto& copy : records_of("copy", p)) {
            EXPECT_GE(copy.timestamp_ms, produced_at + delay_ms);
        }
    }
}

// Rule: a link the partition's move marker names, whose cursor file is missing, resumes from
// the oldest retained offset, never the tail; a fresh attach starts at the tail.
TEST_F(FanoutEngineTest, MissingCursorOfAnInstalledLinkResumesFromTheOldest) {
    for (int i = 0; i < 4; ++i) produce(0, "k" + std::to_string(i), "old");
    attach("epoch-1");
    {
        MutexLock lock(marker_mutex_);
        marker_links_ = {LinkRef{"copy", "epoch-1"}};
    }
    start();
    ASSERT_TRUE(eventually([&] { return child_count() == 4; }));
    ASSERT_TRUE(eventually([&] { return lag_zero(); }));
}

TEST_F(FanoutEngineTest, FreshAttachStartsAtTheTail) {
    for (int i = 0; i < 4; ++i) produce(0, "k" + std::to_string(i), "old");
    attach("epoch-1");
    start();
    ASSERT_TRUE(eventually([&] { return anchored_everywhere(); }));
    produce(0, "new", "after attach");
    ASSERT_TRUE(eventually([&] { return child_count() == 1; }));
    ASSERT_TRUE(eventually([&] { return lag_zero(); }));
    EXPECT_EQ(child_count(), 1u);
}

// Rule: a damaged cursor file is never taken as a position: the link resumes from the oldest
// offset, and copies the child holds already are not landed twice.
TEST_F(FanoutEngineTest, DamagedCursorResumesFromTheOldest) {
    attach("epoch-1");
    start();
    ASSERT_TRUE(eventually([&] { return anchored_everywhere(); }));
    for (int i = 0; i < 5; ++i) produce(0, "k" + std::to_string(i), "v");
    ASSERT_TRUE(eventually([&] { return lag_zero() && child_count() == 5; }));
    engine_->stop();
    std::string path = io::join_path(logs_.partition_directory("orders", PartitionId(0)),
                                     cursor_file_name("copy"));
    std::string bytes = encode_cursor({"epoch-1", Offset(5)});
    bytes[6] ^= 0x1;
    ASSERT_TRUE(io::write_file_atomically(io::posix_file_system(), path, bytes).is_ok());
    produce(0, "k5", "while stopped");
    start();
    ASSERT_TRUE(eventually([&] { return child_count() == 6; }));
    ASSERT_TRUE(eventually([&] { return lag_zero(); }));
    EXPECT_EQ(child_count(), 6u);
    EXPECT_EQ(read_cursor(io::posix_file_system(), path).value().next, Offset(6));
}

// Rule: detach then attach is a fresh start with a new epoch: the old epoch's cursor is not
// resumed and the records of the detached window are not sent.
TEST_F(FanoutEngineTest, ReattachIsAFreshStart) {
    attach("epoch-1");
    start();
    ASSERT_TRUE(eventually([&] { return anchored_everywhere(); }));
    produce(0, "a", "attached");
    ASSERT_TRUE(eventually([&] { return child_count() == 1 && lag_zero(); }));
    store_.update([](meta::MetaState& state) {
        meta::unlink_child(state.topics.at("orders"), state.topics.at("copy"));
    });
    engine_->poke();
    ASSERT_TRUE(eventually([&] { return engine_->cursor_stats("orders").empty(); }));
    produce(0, "b", "detached window");
    attach("epoch-2");
    engine_->poke();
    ASSERT_TRUE(eventually([&] { return anchored_everywhere(); }));
    produce(0, "c", "attached again");
    ASSERT_TRUE(eventually([&] { return child_count() == 2 && lag_zero(); }));
    std::set<std::string> keys;
    for (uint32_t p = 0; p < 3; ++p) {
        for (const auto& record : records_of("copy", p)) keys.insert(record.key);
    }
    EXPECT_EQ(keys, (std::set<std::string>{"a", "c"}));
}

// Rule: a cursor file the disk fails to read is never taken for a missing one: the link waits and
// resumes from the file, not from the tail.
TEST_F(FanoutEngineTest, UnreadableCursorIsNotAFreshAttach) {
    attach("epoch-1");
    start();
    ASSERT_TRUE(eventually([&] { return anchored_everywhere(); }));
    produce(0, "a", "1");
    ASSERT_TRUE(eventually([&] { return child_count() == 1 && lag_zero(); }));
    engine_->stop();
    for (int i = 0; i < 3; ++i) produce(0, "k" + std::to_string(i), "while stopped");
    fs_.fail(io::FsOp::open, "fanout-copy.offset", 1);
    start();
    ASSERT_TRUE(eventually([&] {
        clock_.advance(1s);
        engine_->poke();
        return child_count() == 4;
    }));
    ASSERT_TRUE(eventually([&] { return lag_zero(); }));
    EXPECT_EQ(child_count(), 4u);
}

}  // namespace
}  // namespace narad::fanout
