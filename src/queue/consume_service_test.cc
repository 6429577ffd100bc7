#include "queue/consume_service.h"

#include <gtest/gtest.h>

#include <deque>
#include <thread>

#include "base/mutex.h"
#include "base/thread_pool.h"
#include "meta/local_meta_store.h"
#include "queue/consume_metrics.h"
#include "queue/dead_letter.h"
#include "queue/temp_dir_for_test.h"

namespace narad::queue {
namespace {

class ConsumeServiceTest : public ::testing::Test {
  protected:
    void SetUp() override {
        // Small segments, so a few records seal a segment (for corruption and retention cases).
        storage::LogOptions options;
        options.segment_bytes_max = 4096;
        logs_ = std::make_unique<storage::LogManager>(io::posix_file_system(), clock_, dir_.path(),
                                                      options);
        service_ =
            std::make_unique<ConsumeService>(io::posix_file_system(), clock_, *store_, *logs_,
                                             guards_, committer_, ConsumeOptions{kReaperInterval});
        logs_->set_append_listener([this](const std::string& topic, PartitionId p, Offset hwm) {
            service_->on_append(topic, p, hwm);
        });
        if (auto run = readers()) service_->set_readers(std::move(run));
        service_->start();
    }
    // The readers the service is given before it starts (none: reads run where they are asked).
    virtual ConsumeService::Readers readers() { return nullptr; }
    void TearDown() override { service_->stop(); }

    void create_topic(const std::string& name, uint32_t partitions,
                      int64_t visibility_ms = 30'000) {
        meta::Topic topic;
        topic.name = name;
        topic.partitions = partitions;
        topic.incarnation = IncarnationId("inc-" + name);
        topic.visibility_timeout_ms = visibility_ms;
        ASSERT_TRUE(store_->create_topic_on(topic, NodeId("n1")).is_ok());
    }
    void append(const std::string& topic, uint32_t partition, int count) {
        auto log = logs_->get(topic, PartitionId(partition), storage::CreateIfMissing::yes).value();
        std::vector<std::string> values;
        for (int i = 0; i < count; ++i) values.push_back("v" + std::to_string(i));
        std::vector<storage::Record> records;
        for (auto& v : values) records.push_back(storage::Record{.key = "", .value = v});
        ASSERT_TRUE(log->append(records).is_ok());
    }
    // Consumes and waits for the answer.
    Result<std::vector<Delivery>> consume(ConsumeRequest request) {
        Mutex mutex;
        CondVar done;
        std::optional<Result<std::vector<Delivery>>> result;
        service_->consume(std::move(request), [&](Result<std::vector<Delivery>> r) {
            MutexLock lock(mutex);
            result = std::move(r);
            done.notify_all();
        });
        MutexLock lock(mutex);
        done.wait(lock, [&] { return result.has_value(); });
        return std::move(*result);
    }

    static constexpr Millis kReaperInterval{20};
    // Drives every wait and timer of the service: long-poll deadlines, leases, the reaper.
    FakeClock clock_;
    TempDirForTest dir_;
    std::unique_ptr<meta::LocalMetaStore> store_ = meta::LocalMetaStore::in_memory();
    storage::TopicGuards guards_;
    OffsetCommitter committer_{io::posix_file_system(), clock_, Millis(100)};
    std::unique_ptr<storage::LogManager> logs_;
    std::unique_ptr<ConsumeService> service_;
};

// Rule: a topic-wide consume gathers messages from every partition, and an unknown topic or a
// partition out of range is refused.
TEST_F(ConsumeServiceTest, BatchConsumeSpansPartitions) {
    create_topic("t", 3);
    for (uint32_t p = 0; p < 3; ++p) append("t", p, 5);
    auto got = consume({.topic = "t", .max = 100}).value();
    EXPECT_EQ(got.size(), 15u);
    EXPECT_TRUE(consume({.topic = "t", .max = 100})->empty());
    EXPECT_EQ(consume({.topic = "nope"}).code(), Errc::not_found);
    EXPECT_EQ(consume({.topic = "t", .partition = PartitionId(3)}).code(), Errc::invalid_argument);
}

// Rule: a parked long-poll is answered as soon as a message is committed.
TEST_F(ConsumeServiceTest, LongPollIsWokenByAnAppend) {
    create_topic("t", 3);
    std::thread producer([&] {
        // Append once the consume is parked: nothing else could satisfy it.
        append("t", 1, 1);
    });
    auto got = consume({.topic = "t", .wait = Millis(10'000)}).value();
    producer.join();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].partition.value(), 1u);
}

// Rule: each appended record wakes a parked consumer, and none is left waiting while a record it
// could take is there: N consumers parked with long waits all get one record each as N records
// are appended one at a time.
TEST_F(ConsumeServiceTest, EachAppendWakesAParkedConsumer) {
    create_topic("t", 3);
    constexpr int kConsumers = 8;
    Mutex mutex;
    CondVar changed;
    int answered = 0;
    int parked_messages = 0;
    for (int i = 0; i < kConsumers; ++i) {
        service_->consume({.topic = "t", .wait = Millis(60'000)},
                          [&](Result<std::vector<Delivery>> r) {
                              MutexLock lock(mutex);
                              ++answered;
                              if (r.is_ok()) parked_messages += static_cast<int>(r->size());
                              changed.notify_all();
                          });
    }
    for (int i = 0; i < kConsumers; ++i) append("t", static_cast<uint32_t>(i % 3), 1);
    MutexLock lock(mutex);
    ASSERT_TRUE(
        changed.wait_for(lock, std::chrono::seconds(30), [&] { return answered == kConsumers; }))
        << "only " << answered << " of " << kConsumers << " parked consumers were answered";
    EXPECT_EQ(parked_messages, kConsumers);
}

// Rule: a long-poll with nothing to deliver answers empty once its wait has passed on the clock,
// not before.
TEST_F(ConsumeServiceTest, LongPollTimesOutEmpty) {
    create_topic("t", 3);
    std::optional<Result<std::vector<Delivery>>> answer;  // set by the timer advance() runs
    service_->consume({.topic = "t", .wait = Millis(50)},
                      [&](Result<std::vector<Delivery>> r) { answer = std::move(r); });
    clock_.advance(Millis(49));
    EXPECT_FALSE(answer.has_value()) << "the long-poll ended before its wait";
    clock_.advance(Millis(1));
    ASSERT_TRUE(answer.has_value());
    EXPECT_TRUE(answer->is_ok() && answer->value().empty());
}

// Rule: while its lease holds, a message is handed to one consumer only, however many consumers
// long-poll concurrently and however the wake-ups and deadlines interleave.
TEST_F(ConsumeServiceTest, NoMessageIsDeliveredTwiceWhileLeased) {
    create_topic("t", 3, /*visibility_ms=*/3'600'000);
    constexpr int kConsumers = 6;
    constexpr int kMessages = 600;
    Mutex mutex;
    std::map<std::pair<uint32_t, uint64_t>, int> deliveries;
    std::atomic<int> delivered{0};
    std::vector<std::thread> consumers;
    // Time moves on beside the consumers, about 25 times faster than real time, so their
    // deadlines fire amid the wake-ups while every lease holds (an hour).
    std::atomic<bool> consumed{false};
    std::thread ticker([&] {
        while (!consumed.load()) {
            clock_.advance(Millis(5));
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    });
    for (int c = 0; c < kConsumers; ++c) {
        consumers.emplace_back([&] {
            while (delivered.load() < kMessages) {
                auto got = consume({.topic = "t", .max = 7, .wait = Millis(15)});
                ASSERT_TRUE(got.is_ok());
                MutexLock lock(mutex);
                for (const Delivery& d : *got) {
                    ++deliveries[{d.partition.value(), d.offset.value()}];
                    ++delivered;
                }
            }
        });
    }
    for (int i = 0; i < kMessages / 3; ++i) {
        for (uint32_t p = 0; p < 3; ++p) append("t", p, 1);
    }
    for (auto& t : consumers) t.join();
    consumed = true;
    ticker.join();
    EXPECT_EQ(deliveries.size(), static_cast<size_t>(kMessages));
    for (const auto& [key, count] : deliveries) {
        EXPECT_EQ(count, 1) << "partition " << key.first << " offset " << key.second;
    }
}

// Rule: acks settle messages; a lapsed lease brings the message back; a stale handle is refused.
TEST_F(ConsumeServiceTest, SettleAndRedeliver) {
    create_topic("t", 3, /*visibility_ms=*/50);
    append("t", 0, 2);
    auto first = consume({.topic = "t", .partition = PartitionId(0), .max = 2}).value();
    ASSERT_EQ(first.size(), 2u);
    ASSERT_TRUE(
        service_->settle("t", PartitionId(0), first[0].offset, first[0].lease_id, Settle::ack)
            .is_ok());
    // The second lease lapses; a long-poll gets it again once the reaper has seen it lapse.
    clock_.advance(Millis(50) + kReaperInterval);
    auto again =
        consume({.topic = "t", .partition = PartitionId(0), .wait = Millis(5'000)}).value();
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0].offset, first[1].offset);
    EXPECT_NE(again[0].lease_id, first[1].lease_id);
    EXPECT_EQ(service_->settle("t", PartitionId(0), first[1].offset, first[1].lease_id, Settle::ack)
                  .code(),
              Errc::gone);
    EXPECT_EQ(service_->settle("t", PartitionId(0), first[0].offset, first[0].lease_id, Settle::ack)
                  .code(),
              Errc::gone);
}

// Rule: the reaper hands a leased message out again only once the clock has passed its
// visibility timeout: a long-poll parked before then gets it from the first reaper pass after.
TEST_F(ConsumeServiceTest, ReaperReclaimsALeaseOnlyOnceItsVisibilityTimeoutPassed) {
    ASSERT_TRUE(clock_.await_waiters(1));  // the reaper's first wait counts from here
    create_topic("t", 1, /*visibility_ms=*/1'000);
    append("t", 0, 1);
    auto first = consume({.topic = "t"}).value();
    ASSERT_EQ(first.size(), 1u);
    Mutex mutex;
    std::optional<Result<std::vector<Delivery>>> again;  // under mutex
    service_->consume({.topic = "t", .wait = std::chrono::hours(1)},
                      [&](Result<std::vector<Delivery>> r) {
                          MutexLock lock(mutex);
                          again = std::move(r);
                      });
    auto answered = [&] {
        clock_.advance(Millis(0));  // runs the wake-ups the reaper's passes queued
        MutexLock lock(mutex);
        return again.has_value();
    };
    // Every reaper pass before the timeout: the reaper is the clock's only waiter, so once it
    // waits again at the new time its pass is over.
    for (Millis passed = kReaperInterval; passed < Millis(1'000); passed += kReaperInterval) {
        clock_.advance(kReaperInterval);
        ASSERT_TRUE(clock_.await_waiters(1));
    }
    EXPECT_FALSE(answered()) << "the lease was reclaimed before its visibility timeout";
    EXPECT_EQ(service_->stats("t", PartitionId(0))->in_flight, 1u);
    clock_.advance(kReaperInterval);
    ASSERT_TRUE(clock_.await_waiters(1));
    ASSERT_TRUE(answered());
    MutexLock lock(mutex);
    ASSERT_EQ(again->value().size(), 1u);
    EXPECT_EQ(again->value()[0].offset, first[0].offset);
    EXPECT_NE(again->value()[0].lease_id, first[0].lease_id);
}

// Rule: replay reads without reserving, and answers nothing past the high watermark.
TEST_F(ConsumeServiceTest, ReplayDoesNotReserve) {
    create_topic("t", 3);
    append("t", 2, 1);
    auto read = service_->replay("t", PartitionId(2), Offset(0)).value();
    ASSERT_TRUE(read.has_value());
    EXPECT_EQ(read->value, "v0");
    EXPECT_EQ(read->lease_id, LeaseId(0));
    EXPECT_FALSE(service_->replay("t", PartitionId(2), Offset(1))->has_value());
    EXPECT_EQ(consume({.topic = "t"})->size(), 1u);
}

// Rule: a corrupt frame in a sealed segment is skipped by consume and counted; the records around
// it are delivered.
TEST_F(ConsumeServiceTest, CorruptSealedFrameIsSkippedAndCounted) {
    create_topic("t", 3);
    std::string big(500, 'x');
    auto log = logs_->get("t", PartitionId(0), storage::CreateIfMissing::yes).value();
    for (int i = 0; i < 20; ++i) {
        storage::Record record{.key = "", .value = big};
        ASSERT_TRUE(log->append(std::span(&record, 1)).is_ok());
    }
    auto segments = log->segments();
    ASSERT_GE(segments.size(), 2u);
    ASSERT_TRUE(segments[0].sealed);
    // Flip a byte inside the value of the second record of the first (sealed) segment.
    std::string path =
        io::join_path(logs_->partition_directory("t", PartitionId(0)), "00000000000000000000.log");
    auto file = io::posix_file_system().open(path, io::kReadWrite).value();
    // Frames are a 64-byte header and the value (docs/formats/frame.md): land inside the second
    // record's value.
    uint64_t frame_bytes = 64 + big.size();
    uint64_t position = frame_bytes + 64 + 100;
    char byte = 0;
    ASSERT_EQ(file->read_at(position, &byte, 1).value(), 1u);
    byte = static_cast<char>(byte ^ 0x5a);
    ASSERT_TRUE(file->write_at(position, std::string_view(&byte, 1)).is_ok());
    auto& corrupt = consume_metrics().corrupt.with({"t", "0"});
    double corrupt_before = corrupt.value();
    auto got = consume({.topic = "t", .partition = PartitionId(0), .max = 100}).value();
    EXPECT_EQ(got.size(), 19u);
    EXPECT_EQ(corrupt.value() - corrupt_before, 1);
    for (const Delivery& d : got) EXPECT_EQ(d.value, big);
    // The skipped offset is settled: acking everything delivered empties the partition for good.
    for (const Delivery& d : got) {
        ASSERT_TRUE(service_->settle("t", d.partition, d.offset, d.lease_id, Settle::ack).is_ok());
    }
    EXPECT_EQ(service_->stats("t", PartitionId(0))->frontier, Offset(20));
}

// Rule: records retention deleted before they were consumed are skipped (counted as dropped), and
// consumption continues with the oldest retained record.
TEST_F(ConsumeServiceTest, RetentionDeletedRecordsAreSkippedAsDropped) {
    create_topic("t", 3);
    std::string big(500, 'y');
    auto log = logs_->get("t", PartitionId(1), storage::CreateIfMissing::yes).value();
    for (int i = 0; i < 20; ++i) {
        storage::Record record{.key = "", .value = big};
        ASSERT_TRUE(log->append(std::span(&record, 1)).is_ok());
    }
    // Load the partition's consumer state before retention runs, as a live consumer would have.
    auto first = consume({.topic = "t", .partition = PartitionId(1)}).value();
    ASSERT_EQ(first.size(), 1u);
    ASSERT_TRUE(
        service_->settle("t", PartitionId(1), first[0].offset, first[0].lease_id, Settle::ack)
            .is_ok());
    auto segments = log->segments();
    ASSERT_GE(segments.size(), 2u);
    std::string directory = logs_->partition_directory("t", PartitionId(1));
    char name[32];
    std::snprintf(name, sizeof name, "%020llu.log",
                  static_cast<unsigned long long>(segments[0].base.value()));
    ASSERT_TRUE(io::posix_file_system()
                    .set_modified(io::join_path(directory, name),
                                  clock_.wall_now() - std::chrono::hours(48))
                    .is_ok());
    auto retention = log->enforce_retention(Millis(3'600'000)).value();
    ASSERT_EQ(retention.segments_deleted, 1u);
    Offset oldest = log->oldest_offset();
    auto rest = consume({.topic = "t", .partition = PartitionId(1), .max = 100}).value();
    ASSERT_FALSE(rest.empty());
    EXPECT_EQ(rest.front().offset, oldest);
    EXPECT_EQ(rest.size(), 20 - oldest.value());
    // Offset 0 was acked; 1 .. oldest-1 were deleted unconsumed.
    std::string scrape = metrics::Registry::global().render();
    std::string expected = "narad_consumer_dropped_messages{topic=\"t\",partition=\"1\"} " +
                           std::to_string(oldest.value() - 1) + "\n";
    EXPECT_NE(scrape.find(expected), std::string::npos) << expected;
}

// Rule: stop answers every parked long-poll at once with nothing.
TEST_F(ConsumeServiceTest, StopAnswersParkedLongPolls) {
    create_topic("t", 3);
    std::atomic<int> answered{0};
    for (int i = 0; i < 3; ++i) {
        service_->consume({.topic = "t", .wait = Millis(60'000)},
                          [&](Result<std::vector<Delivery>> r) {
                              EXPECT_TRUE(r.is_ok() && r->empty());
                              ++answered;
                          });
    }
    service_->stop();
    EXPECT_EQ(answered.load(), 3);
}

// Readers that only queue what they are given, so a test runs each read when it chooses (or
// refuses them all, as a full or a stopping pool would).
struct QueuedReaders {
    Mutex mutex;
    CondVar given;
    std::deque<std::function<void()>> reads GUARDED_BY(mutex);
    ThreadPool::Posted answer GUARDED_BY(mutex) = ThreadPool::Posted::queued;
    ConsumeService::Readers run() {
        return [this](std::function<void()> read) {
            MutexLock lock(mutex);
            if (answer != ThreadPool::Posted::queued) return answer;
            reads.push_back(std::move(read));
            given.notify_all();
            return ThreadPool::Posted::queued;
        };
    }
    void answer_with(ThreadPool::Posted posted) {
        MutexLock lock(mutex);
        answer = posted;
    }
    // Waits (bounded) until a read is queued.
    bool wait_queued() {
        MutexLock lock(mutex);
        return given.wait_for(lock, std::chrono::seconds(10),
                              [&]() REQUIRES(mutex) { return !reads.empty(); });
    }
    size_t queued() {
        MutexLock lock(mutex);
        return reads.size();
    }
    // Runs the oldest queued read on this thread; false if none was queued.
    bool run_one() {
        std::function<void()> read;
        {
            MutexLock lock(mutex);
            if (reads.empty()) return false;
            read = std::move(reads.front());
            reads.pop_front();
        }
        read();
        return true;
    }
};

class ConsumeReadersTest : public ConsumeServiceTest {
  protected:
    ConsumeService::Readers readers() override { return queued_.run(); }

    // With the readers taking work again, the next consume hands out `value`: proof that a
    // refused consume before it reserved nothing.
    void expect_next_consume_takes(const std::string& value) {
        queued_.answer_with(ThreadPool::Posted::queued);
        std::optional<Result<std::vector<Delivery>>> taken;
        service_->consume({.topic = "t"}, [&](Result<std::vector<Delivery>> r) { taken = r; });
        ASSERT_TRUE(queued_.run_one());
        ASSERT_TRUE(taken.has_value() && taken->is_ok());
        ASSERT_EQ(taken->value().size(), 1u) << "the refused consume reserved the message";
        EXPECT_EQ(taken->value()[0].value, value);
    }

    QueuedReaders queued_;
};

// Rule: with readers set, a consume's log read runs on them and never on the caller's thread,
// both the first attempt and the attempt of a parked long-poll woken by an append; the caller is
// answered only once a reader has run it.
TEST_F(ConsumeReadersTest, AttemptsRunOnTheReadersNotTheCallingThread) {
    create_topic("t", 1);
    append("t", 0, 1);
    Mutex mutex;
    CondVar answered;
    std::vector<std::string> got;  // under mutex
    auto done = [&](Result<std::vector<Delivery>> r) {
        MutexLock lock(mutex);
        got.push_back(r.is_ok() && !r->empty() ? r->front().value : "<none>");
        answered.notify_all();
    };
    service_->consume({.topic = "t"}, done);
    EXPECT_EQ(queued_.queued(), 1u);
    {
        MutexLock lock(mutex);
        EXPECT_TRUE(got.empty()) << "the consume was answered before a reader ran it";
    }
    ASSERT_TRUE(queued_.run_one());
    {
        MutexLock lock(mutex);
        ASSERT_EQ(got, std::vector<std::string>{"v0"});
    }

    // A long-poll parks (its attempt ran on a reader and found nothing); the append's wake-up
    // goes through the clock's timer thread to the readers again.
    service_->consume({.topic = "t", .wait = Millis(60'000)}, done);
    ASSERT_TRUE(queued_.run_one());
    append("t", 0, 1);
    ASSERT_TRUE(queued_.wait_queued()) << "the append woke no read on the readers";
    {
        MutexLock lock(mutex);
        EXPECT_EQ(got.size(), 1u) << "the woken long-poll was read outside the readers";
    }
    ASSERT_TRUE(queued_.run_one());
    MutexLock lock(mutex);
    ASSERT_TRUE(answered.wait_for(lock, std::chrono::seconds(10), [&] { return got.size() == 2; }));
    EXPECT_EQ(got[1], "v0");  // the second append's first record
}

// Rule: when the readers can take no more, a new consume is refused as unavailable at once and
// reserves nothing: the message is handed out by the next consume the readers take.
TEST_F(ConsumeReadersTest, BusyReadersRefuseANewConsumeAndReserveNothing) {
    create_topic("t", 1);
    append("t", 0, 1);
    queued_.answer_with(ThreadPool::Posted::full);
    std::optional<Result<std::vector<Delivery>>> refused;
    service_->consume({.topic = "t"}, [&](Result<std::vector<Delivery>> r) { refused = r; });
    ASSERT_TRUE(refused.has_value()) << "a refused consume must be answered at once";
    EXPECT_EQ(refused->code(), Errc::unavailable);
    EXPECT_NE(refused->status().message().find("busy"), std::string::npos)
        << refused->status().to_string();
    expect_next_consume_takes("v0");
}

// Rule: readers that refuse because they are stopping (the node is shutting down) refuse a new
// consume as unavailable saying so, not as busy, and reserve nothing.
TEST_F(ConsumeReadersTest, StoppingReadersSayTheNodeIsShuttingDown) {
    create_topic("t", 1);
    append("t", 0, 1);
    queued_.answer_with(ThreadPool::Posted::stopping);
    std::optional<Result<std::vector<Delivery>>> refused;
    service_->consume({.topic = "t"}, [&](Result<std::vector<Delivery>> r) { refused = r; });
    ASSERT_TRUE(refused.has_value()) << "a refused consume must be answered at once";
    EXPECT_EQ(refused->code(), Errc::unavailable);
    EXPECT_EQ(refused->status().message(), kShuttingDownText);
    Status by_offset = service_->run_read([] {});
    EXPECT_EQ(by_offset.code(), Errc::unavailable);
    EXPECT_EQ(by_offset.message(), kShuttingDownText);
    expect_next_consume_takes("v0");
}

// Dead letters go straight into this node's logs (which skip a stamp they hold).
class LogSink final : public storage::PartitionCommitter {
  public:
    explicit LogSink(storage::LogManager& logs) : logs_(logs) {}
    Status commit(const std::string& topic, const std::string&, PartitionId partition,
                  std::span<const storage::Record> records) override {
        if (refuse) return Status(Errc::unavailable, "dead-letter owner is down");
        NARAD_ASSIGN_OR_RETURN(auto log,
                               logs_.get(topic, partition, storage::CreateIfMissing::yes));
        return log->append(records).status();
    }
    bool refuse = false;

  private:
    storage::LogManager& logs_;
};

// Rule: a message nacked max_deliveries times is committed once to the dead-letter topic (its
// key, payload and origin), then settled, and the partition moves on; while the dead-letter topic
// refuses, the message waits and nothing is lost; a crash between the dead-letter commit and the
// settle (the message is delivered again and exhausted again) does not land it twice.
TEST_F(ConsumeServiceTest, PoisonMessageIsDeadLetteredOnceAndThePartitionMovesOn) {
    meta::Topic dlq;
    dlq.name = "dlq";
    dlq.partitions = 3;
    dlq.incarnation = IncarnationId("inc-dlq");
    ASSERT_TRUE(store_->create_topic_on(dlq, NodeId("n1")).is_ok());
    meta::Topic topic;
    topic.name = "t";
    topic.partitions = 1;
    topic.incarnation = IncarnationId("inc-t");
    topic.max_deliveries = 2;
    topic.dead_letter_topic = "dlq";
    ASSERT_TRUE(store_->create_topic_on(topic, NodeId("n1")).is_ok());
    {
        auto log = logs_->get("t", PartitionId(0), storage::CreateIfMissing::yes).value();
        std::vector<storage::Record> records{{.key = "k", .value = R"({"poison":true})"},
                                             {.key = "", .value = "fine"}};
        ASSERT_TRUE(log->append(records).is_ok());
    }
    LogSink sink(*logs_);
    DeadLetterer dead_letters(clock_, *store_, *service_, sink);
    auto poison_twice = [&] {
        for (int i = 0; i < 2; ++i) {
            auto got = consume({.topic = "t", .partition = PartitionId(0)}).value();
            ASSERT_EQ(got.size(), 1u);
            ASSERT_EQ(got[0].offset, Offset(0));
            ASSERT_TRUE(service_
                            ->settle("t", PartitionId(0), got[0].offset, got[0].lease_id,
                                     Settle::nack, "cannot parse")
                            .is_ok());
        }
    };
    ASSERT_NO_FATAL_FAILURE(poison_twice());
    sink.refuse = true;
    EXPECT_EQ(dead_letters.run_once(), 0u);
    EXPECT_EQ(service_->exhausted().size(), 1u);
    sink.refuse = false;
    EXPECT_EQ(dead_letters.run_once(), 1u);
    auto dlq_records = [&] {
        std::vector<storage::StoredRecord> all;
        for (uint32_t p = 0; p < 3; ++p) {
            auto log = logs_->get("dlq", PartitionId(p), storage::CreateIfMissing::no);
            if (!log.is_ok()) continue;
            auto read = (*log)->read(Offset(0), 100, 1 << 20).value();
            all.insert(all.end(), read.records.begin(), read.records.end());
        }
        return all;
    };
    auto letters = dlq_records();
    ASSERT_EQ(letters.size(), 1u);
    EXPECT_EQ(letters[0].key, "k");
    EXPECT_NE(letters[0].value.find(R"("origin":{"topic":"t","partition":0,"offset":0,)"
                                    R"("deliveries":2,"reason":"cannot parse")"),
              std::string::npos)
        << letters[0].value;
    EXPECT_NE(letters[0].value.find(R"("key":"k","payload":{"poison":true}})"), std::string::npos)
        << letters[0].value;
    auto next = consume({.topic = "t", .partition = PartitionId(0)}).value();
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].offset, Offset(1));
    // A later poison message waits for the messages before it: dead letters go in offset order.
    {
        auto log = logs_->get("t", PartitionId(0), storage::CreateIfMissing::yes).value();
        storage::Record late{.key = "", .value = "late poison"};
        ASSERT_TRUE(log->append(std::span(&late, 1)).is_ok());
    }
    for (int i = 0; i < 2; ++i) {
        auto got = consume({.topic = "t", .partition = PartitionId(0)}).value();
        ASSERT_EQ(got.size(), 1u);
        ASSERT_EQ(got[0].offset, Offset(2));
        ASSERT_TRUE(service_->settle("t", PartitionId(0), Offset(2), got[0].lease_id, Settle::nack)
                        .is_ok());
    }
    EXPECT_EQ(dead_letters.run_once(), 0u);  // offset 1 is still out
    ASSERT_TRUE(
        service_->settle("t", PartitionId(0), Offset(1), next[0].lease_id, Settle::ack).is_ok());
    EXPECT_EQ(dead_letters.run_once(), 1u);
    EXPECT_EQ(dlq_records().size(), 2u);

    // The settle is lost (a crash right after the commit): a fresh service delivers it again.
    service_->stop();
    service_ =
        std::make_unique<ConsumeService>(io::posix_file_system(), clock_, *store_, *logs_, guards_,
                                         committer_, ConsumeOptions{kReaperInterval});
    service_->start();
    DeadLetterer after_crash(clock_, *store_, *service_, sink);
    ASSERT_NO_FATAL_FAILURE(poison_twice());
    EXPECT_EQ(after_crash.run_once(), 1u);
    EXPECT_EQ(dlq_records().size(), 2u);
}

}  // namespace
}  // namespace narad::queue
