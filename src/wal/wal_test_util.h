// Test helpers for the wal module: a temporary directory, a synchronous append, a fixture owning a
// started IngressWal, a consumer that collects what the WAL hands over, and a fake
// PartitionCommitter that deduplicates by producer stamp the way a partition log does. Tests only;
// every helper is thread-safe.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "io/fault_injection_fs.h"
#include "io/file_system.h"
#include "wal/dispatcher.h"
#include "wal/ingress_wal.h"

namespace narad::wal::testing {

// How long a test waits for something that must happen before it fails instead of hanging.
inline constexpr auto kPatience = std::chrono::seconds(60);

class TempDir {
  public:
    TempDir() {
        char pattern[] = "/tmp/narad-wal-XXXXXX";
        path_ = ::mkdtemp(pattern);
    }
    ~TempDir() { (void)io::posix_file_system().remove_all(path_); }
    const std::string& path() const { return path_; }
    std::string file(std::string_view name) const { return io::join_path(path_, name); }

  private:
    std::string path_;
};

inline IngressRecord make_record(std::string topic, uint32_t partition, std::string value,
                                 std::string incarnation = "inc-1") {
    IngressRecord record;
    record.topic = std::move(topic);
    record.incarnation = std::move(incarnation);
    record.partition = PartitionId(partition);
    record.key = "k-" + value;
    record.value = std::move(value);
    return record;
}

// Appends and waits for the completion.
inline Status append_and_wait(IngressWal& wal, std::vector<IngressRecord> records,
                              IngressWal::Admission admission = IngressWal::Admission::normal) {
    std::promise<Status> done;
    auto future = done.get_future();
    wal.append(
        std::move(records), [&done](Status status) { done.set_value(std::move(status)); },
        admission);
    if (future.wait_for(kPatience) != std::future_status::ready) {
        ADD_FAILURE() << "append never completed";
        return Status(Errc::timeout, "append never completed");
    }
    return future.get();
}

// Fixture base: a fault-injecting file system, a fake clock and an IngressWal with default options
// in a fresh directory ("ingress" under dir_), started by SetUp. A test that must set a consumer
// first overrides SetUp and calls ASSERT_NO_FATAL_FAILURE(open_wal(consumer)) itself. Members a
// subclass adds are destroyed before wal_, so a subclass whose objects the WAL calls back stops
// the WAL in TearDown.
class IngressWalFixture : public ::testing::Test {
  protected:
    void SetUp() override { ASSERT_NO_FATAL_FAILURE(open_wal()); }

    // Opens the WAL, hands it `consumer` (when set) and starts it.
    void open_wal(IngressWal::Consumer consumer = nullptr) {
        auto wal = IngressWal::open(fs_, clock_, dir_.file("ingress"), {});
        ASSERT_TRUE(wal.is_ok()) << wal.status().to_string();
        wal_ = std::move(wal).value();
        if (consumer) wal_->set_consumer(std::move(consumer));
        wal_->start();
    }
    // Appends one record and fails the test unless it becomes durable.
    void append(const std::string& topic, uint32_t partition, const std::string& value,
                const std::string& incarnation = "inc-1") {
        ASSERT_TRUE(
            append_and_wait(*wal_, {make_record(topic, partition, value, incarnation)}).is_ok());
    }

    TempDir dir_;
    io::FaultInjectionFileSystem fs_;
    FakeClock clock_;
    std::unique_ptr<IngressWal> wal_;
};

// Files in a directory whose names end with ".wal".
inline std::vector<std::string> segment_files(const std::string& directory) {
    std::vector<std::string> out;
    auto names = io::posix_file_system().list_directory(directory);
    for (const auto& name : names.value()) {
        if (name.ends_with(".wal")) out.push_back(name);
    }
    return out;
}

// Collects what a WAL hands its consumer.
class Collector {
  public:
    IngressWal::Consumer consumer() {
        return [this](std::vector<std::shared_ptr<const IngressRecord>> records) {
            MutexLock lock(mutex_);
            for (auto& record : records) records_.push_back(std::move(record));
            changed_.notify_all();
        };
    }
    bool wait_for_count(size_t count) {
        MutexLock lock(mutex_);
        return changed_.wait_for(lock, kPatience, [&] { return records_.size() >= count; });
    }
    std::vector<std::shared_ptr<const IngressRecord>> records() const {
        MutexLock lock(mutex_);
        return records_;
    }
    std::vector<WalSeq> sequences() const {
        std::vector<WalSeq> out;
        for (const auto& record : records()) out.push_back(record->sequence);
        return out;
    }

  private:
    mutable Mutex mutex_;
    CondVar changed_;
    std::vector<std::shared_ptr<const IngressRecord>> records_;
};

// A PartitionCommitter that keeps, per partition, the values appended and the highest sequence
// committed per ingress WAL, skipping stamps at or below it as the real partition log does. It
// checks that no partition is committed by two threads at once and that no (ingress, sequence) is
// ever appended twice. Refusals and not_found answers are scripted. It expects every record to
// carry a producer stamp (the dispatcher's), or with Stamps::absent none (the direct path's: such
// records are always appended).
class FakeCommitter final : public PartitionCommitter {
  public:
    using Key = std::pair<std::string, uint32_t>;  // topic, partition
    // Decides a commit's outcome before it is applied; return ok to apply it.
    using Gate = std::function<Status(const Key& key, size_t attempt)>;
    enum class Stamps { required, absent };

    explicit FakeCommitter(Stamps stamps = Stamps::required) : stamps_expected_(stamps) {}

    Status commit(const std::string& topic, const std::string& incarnation, PartitionId partition,
                  std::span<const storage::Record> records) override {
        Key key{topic, partition.value()};
        Gate gate;
        size_t attempt = 0;
        {
            MutexLock lock(mutex_);
            EXPECT_TRUE(in_flight_.insert(key).second)
                << "partition " << topic << "/" << partition.value() << " committed concurrently";
            attempt = ++attempts_[key];
            gate = gate_;
        }
        Status status = gate ? gate(key, attempt) : Status::ok();
        MutexLock lock(mutex_);
        in_flight_.erase(key);
        if (status.is_ok()) {
            Partition& log = partitions_[key];
            for (const auto& record : records) {
                EXPECT_EQ(record.producer.empty(), stamps_expected_ == Stamps::absent);
                if (record.producer.empty()) {
                    log.values.emplace_back(record.value);
                    log.incarnations.push_back(incarnation);
                    ++committed_;
                    continue;
                }
                auto& highest = log.highest[record.producer.ingress.value()];
                if (record.producer.sequence.value() <= highest) {
                    ++duplicates_;
                    continue;
                }
                highest = record.producer.sequence.value();
                EXPECT_TRUE(
                    stamps_
                        .emplace(record.producer.ingress.value(), record.producer.sequence.value())
                        .second)
                    << "stamp committed twice";
                log.values.emplace_back(record.value);
                log.incarnations.push_back(incarnation);
                ++committed_;
            }
            ++batches_;
            max_batch_ = std::max(max_batch_, records.size());
        }
        changed_.notify_all();
        return status;
    }

    void set_gate(Gate gate) {
        MutexLock lock(mutex_);
        gate_ = std::move(gate);
    }

    // The committer's lock, for a wait_until predicate to name: [&]() REQUIRES(c.mutex()) {...}.
    Mutex& mutex() RETURN_CAPABILITY(mutex_) { return mutex_; }

    // Waits until `predicate` (called under the committer's lock) holds; false after kPatience.
    bool wait_until(const std::function<bool()>& predicate) {
        MutexLock lock(mutex_);
        return changed_.wait_for(lock, kPatience, predicate);
    }

    // The calls below take the lock; inside wait_until's predicate use the *_locked forms.
    size_t attempts(const Key& key) {
        MutexLock lock(mutex_);
        return attempts_locked(key);
    }
    size_t attempts_locked(const Key& key) REQUIRES(mutex_) {
        auto it = attempts_.find(key);
        return it == attempts_.end() ? 0 : it->second;
    }
    std::vector<std::string> values(const Key& key) {
        MutexLock lock(mutex_);
        return values_locked(key);
    }
    std::vector<std::string> values_locked(const Key& key) REQUIRES(mutex_) {
        auto it = partitions_.find(key);
        return it == partitions_.end() ? std::vector<std::string>() : it->second.values;
    }
    std::vector<std::string> incarnations(const Key& key) {
        MutexLock lock(mutex_);
        auto it = partitions_.find(key);
        return it == partitions_.end() ? std::vector<std::string>() : it->second.incarnations;
    }
    size_t committed_locked() const REQUIRES(mutex_) { return committed_; }
    size_t committed() {
        MutexLock lock(mutex_);
        return committed_;
    }
    size_t duplicates() {
        MutexLock lock(mutex_);
        return duplicates_;
    }
    size_t max_batch() {
        MutexLock lock(mutex_);
        return max_batch_;
    }
    size_t batches() {
        MutexLock lock(mutex_);
        return batches_;
    }
    // Every value appended to any partition, with how many times it was appended.
    std::map<std::string, int> all_values() {
        MutexLock lock(mutex_);
        return all_values_locked();
    }
    std::map<std::string, int> all_values_locked() REQUIRES(mutex_) {
        std::map<std::string, int> out;
        for (const auto& [key, log] : partitions_) {
            for (const auto& value : log.values) ++out[value];
        }
        return out;
    }

  private:
    struct Partition {
        std::map<uint64_t, uint64_t> highest;  // ingress -> highest committed sequence
        std::vector<std::string> values;
        std::vector<std::string> incarnations;
    };

    const Stamps stamps_expected_;
    Mutex mutex_;
    CondVar changed_;
    Gate gate_ GUARDED_BY(mutex_);
    std::map<Key, Partition> partitions_ GUARDED_BY(mutex_);
    std::map<Key, size_t> attempts_ GUARDED_BY(mutex_);
    std::set<Key> in_flight_ GUARDED_BY(mutex_);
    std::set<std::pair<uint64_t, uint64_t>> stamps_ GUARDED_BY(mutex_);
    size_t committed_ GUARDED_BY(mutex_) = 0;
    size_t duplicates_ GUARDED_BY(mutex_) = 0;
    size_t batches_ GUARDED_BY(mutex_) = 0;
    size_t max_batch_ GUARDED_BY(mutex_) = 0;
};

}  // namespace narad::wal::testing
