#include "storage/partition_log.h"

#include <gtest/gtest.h>

#include "storage/test_util.h"

namespace narad::storage {
namespace {

using testing::LogTest;

class PartitionLogTest : public LogTest {};

// Rule (the owner's self-fence): a commit whose before_publish check fails after its fsync is
// rolled back: it fails with that status, the high watermark does not move, nothing of it is
// readable, and it is gone after a reopen; the next commit goes on normally.
TEST_F(PartitionLogTest, CommitRefusedAfterItsSyncIsRolledBack) {
    bool allowed = true;
    options_.before_publish = [&allowed] {
        return allowed ? Status::ok() : Status(Errc::unavailable, "lease not known valid");
    };
    open_log();
    append_values(0, 3);
    allowed = false;
    std::vector<Record> records = {Record{.key = "k", .value = "refused"}};
    auto refused = log_->append(records);
    EXPECT_EQ(refused.code(), Errc::unavailable);
    EXPECT_EQ(log_->high_watermark(), Offset(3));
    EXPECT_EQ(read_all().records.size(), 3u);
    allowed = true;
    AppendResult next = append_values(3, 2);
    EXPECT_EQ(next.first, Offset(3));
    reopen();
    ReadResult all = read_all();
    ASSERT_EQ(all.records.size(), 5u);
    for (const auto& record : all.records) EXPECT_NE(record.value, "refused");
}

// Rule: records read back exactly as appended, with dense offsets, across many segment rolls and
// across a reopen.
TEST_F(PartitionLogTest, AppendReadRoundTripAcrossSegmentRolls) {
    options_.segment_bytes_max = 1024;
    open_log();
    uint64_t next = 0;
    for (int batch = 0; batch < 40; ++batch) {
        size_t count = 1 + batch % 5;
        AppendResult result = append_values(next, count);
        EXPECT_EQ(result.first, Offset(next));
        EXPECT_EQ(result.appended, count);
        next += count;
        EXPECT_EQ(result.high_watermark, Offset(next));
    }
    EXPECT_GT(log_->segments().size(), 5u);
    for (int pass = 0; pass < 2; ++pass) {
        ReadResult all = read_all(Offset(0), 7);
        ASSERT_EQ(all.records.size(), next);
        EXPECT_TRUE(all.corrupt.empty());
        for (uint64_t i = 0; i < next; ++i) {
            EXPECT_EQ(all.records[i].offset, Offset(i));
            EXPECT_EQ(all.records[i].value, value_of(i));
            EXPECT_EQ(all.records[i].key, "k");
            EXPECT_EQ(all.records[i].timestamp_ms, 1000 + static_cast<int64_t>(i));
        }
        reopen();
        EXPECT_EQ(report_.high_watermark, Offset(next));
        EXPECT_EQ(report_.tail_bytes_cut, 0u);
        EXPECT_EQ(report_.indexes_rebuilt, 0u);
    }
    // Every segment but the last is sealed and holds a whole number of frames.
    auto segments = log_->segments();
    for (size_t i = 0; i + 1 < segments.size(); ++i) EXPECT_TRUE(segments[i].sealed);
    EXPECT_FALSE(segments.back().sealed);
}

// Rule: a read from any offset, including the middle of a sealed segment, starts exactly there.
TEST_F(PartitionLogTest, ReadFromAnyOffsetStartsThere) {
    options_.segment_bytes_max = 700;
    open_log();
    append_values(0, 60);
    for (uint64_t from = 0; from < 60; from += 7) {
        auto result = log_->read(Offset(from), 3, 1 << 20);
        ASSERT_TRUE(result.is_ok());
        ASSERT_EQ(result->records.size(), 3u) << from;
        EXPECT_EQ(result->records[0].offset, Offset(from));
        EXPECT_EQ(result->records[0].value, value_of(from));
        EXPECT_EQ(result->next, Offset(from + 3));
    }
}

// Rule: reads stop at max_records and max_bytes but always return at least one record; reads at
// or past the HWM return nothing with next = from.
TEST_F(PartitionLogTest, ReadLimitsAndTheHighWatermark) {
    open_log();
    append_values(0, 10);
    auto limited = log_->read(Offset(0), 4, 1 << 20);
    ASSERT_TRUE(limited.is_ok());
    EXPECT_EQ(limited->records.size(), 4u);
    // Each record has 1 key byte + 7 value bytes: 20 bytes fit two of them.
    auto by_bytes = log_->read(Offset(0), 100, 20);
    ASSERT_TRUE(by_bytes.is_ok());
    EXPECT_EQ(by_bytes->records.size(), 2u);
    auto tiny = log_->read(Offset(3), 100, 1);
    ASSERT_TRUE(tiny.is_ok());
    EXPECT_EQ(tiny->records.size(), 1u);
    EXPECT_EQ(tiny->next, Offset(4));
    for (uint64_t from : {10, 11, 1000}) {
        auto past = log_->read(Offset(from), 10, 1 << 20);
        ASSERT_TRUE(past.is_ok());
        EXPECT_TRUE(past->records.empty());
        EXPECT_EQ(past->next, Offset(from));
    }
}

// Rule: a read takes from the file about what the records it returns occupy. A few small records
// are not read with a whole chunk (up to 1 MiB under a consume's 4 MiB byte budget), and a read of
// many records still returns every one of them.
TEST_F(PartitionLogTest, ReadTakesFromTheFileWhatItsRecordsOccupy) {
    open_log();
    append_values(0, 2000);
    const uint64_t before = fs_.bytes_read();
    auto few = log_->read(Offset(0), 10, 4 << 20);
    ASSERT_TRUE(few.is_ok());
    ASSERT_EQ(few->records.size(), 10u);
    EXPECT_LT(fs_.bytes_read() - before, 4096u) << "bytes read for 10 records of 8 bytes";
    auto rest = log_->read(Offset(10), 5000, 4 << 20);
    ASSERT_TRUE(rest.is_ok());
    ASSERT_EQ(rest->records.size(), 1990u);
    for (size_t i = 0; i < rest->records.size(); ++i) {
        ASSERT_EQ(rest->records[i].value, value_of(10 + i));
    }
}

// Rule: an empty append changes nothing and reports the HWM.
TEST_F(PartitionLogTest, EmptyAppendIsANoOp) {
    open_log();
    append_values(0, 3);
    auto result = log_->append({});
    ASSERT_TRUE(result.is_ok());
    EXPECT_EQ(result->appended, 0u);
    EXPECT_EQ(result->high_watermark, Offset(3));
    EXPECT_EQ(log_->high_watermark(), Offset(3));
}

// Rule: while an append's frames are written and synced but the HWM is not yet advanced, reads
// do not see them.
TEST_F(PartitionLogTest, ReadsNeverSeeRecordsBeyondTheHighWatermark) {
    open_log();
    append_values(0, 5);
    int checks = 0;
    failpoint::set_hook("storage.append.after_sync", [&]() -> Status {
        ++checks;
        EXPECT_EQ(log_->high_watermark(), Offset(5));
        EXPECT_GT(file_size(segment_path(0)), 0u);
        auto during = log_->read(Offset(5), 100, 1 << 20);
        EXPECT_TRUE(during.is_ok());
        EXPECT_TRUE(during->records.empty());
        EXPECT_EQ(during->next, Offset(5));
        auto all = log_->read(Offset(0), 100, 1 << 20);
        EXPECT_EQ(all->records.size(), 5u);
        EXPECT_EQ(all->next, Offset(5));
        return Status::ok();
    });
    append_values(5, 3);
    failpoint::clear("storage.append.after_sync");
    EXPECT_EQ(checks, 1);
    EXPECT_EQ(log_->read(Offset(5), 100, 1 << 20)->records.size(), 3u);
}

// Rule: the append listener hears the new HWM after each successful append, and only then.
TEST_F(PartitionLogTest, AppendListenerHearsTheNewHighWatermark) {
    open_log();
    std::vector<Offset> heard;
    log_->set_append_listener([&](Offset hwm) { heard.push_back(hwm); });
    append_values(0, 2);
    append_values(2, 3);
    fs_.fail(io::FsOp::write, ".log");
    EXPECT_FALSE(log_->append(std::vector<Record>{Record{"", "x", 0, {}}}).is_ok());
    EXPECT_EQ(heard, (std::vector<Offset>{Offset(2), Offset(5)}));
}

// Rule: zstd frames round-trip across rolls and reopen, from any offset, batches included.
TEST_F(PartitionLogTest, ZstdRoundTripAcrossRolls) {
    options_.codec = Codec::zstd;
    options_.segment_bytes_max = 2048;
    open_log();
    uint64_t next = 0;
    for (int batch = 0; batch < 30; ++batch) {
        size_t count = 1 + (batch * 7) % 40;
        append_values(next, count);
        next += count;
    }
    EXPECT_GT(log_->segments().size(), 2u);
    reopen();
    ReadResult all = read_all(Offset(0), 13);
    ASSERT_EQ(all.records.size(), next);
    for (uint64_t i = 0; i < next; ++i) EXPECT_EQ(all.records[i].value, value_of(i));
    for (uint64_t from = 3; from < next; from += 11) {
        auto one = log_->read(Offset(from), 1, 1 << 20);
        ASSERT_TRUE(one.is_ok());
        ASSERT_EQ(one->records.size(), 1u);
        EXPECT_EQ(one->records[0].offset, Offset(from));
        EXPECT_EQ(one->records[0].value, value_of(from));
    }
}

// Rule: sequential single-record reads inside one zstd batch read and decompress it once.
TEST_F(PartitionLogTest, ZstdSequentialReadsUseTheDecodeCache) {
    options_.codec = Codec::zstd;
    open_log();
    append_values(0, 200);
    ASSERT_EQ(log_->read(Offset(0), 1, 1 << 20)->records.size(), 1u);
    int reads_before = fs_.count(io::FsOp::read);
    for (uint64_t i = 1; i < 200; ++i) {
        auto one = log_->read(Offset(i), 1, 1 << 20);
        ASSERT_TRUE(one.is_ok());
        ASSERT_EQ(one->records.size(), 1u);
        EXPECT_EQ(one->records[0].value, value_of(i));
    }
    EXPECT_EQ(fs_.count(io::FsOp::read), reads_before);
}

// Rule: a sealed segment's index is held in memory only for a log someone reads. A log that is
// only written (a backlog nobody consumes) holds no sealed index however many segments it seals;
// once read, the segment sealed next is kept for the reader near the tail, up to the cache size.
TEST_F(PartitionLogTest, OnlyALogThatIsReadHoldsSealedIndexes) {
    options_.segment_bytes_max = 700;
    options_.sealed_segments_cached = 3;
    open_log();
    uint64_t next = 0;
    for (; next < 60; ++next) append_values(next, 1);
    ASSERT_GT(log_->stats().segments, 5u);
    EXPECT_EQ(log_->stats().sealed_segments_cached, 0u);

    uint32_t sealed = log_->stats().segments;
    ASSERT_TRUE(log_->read(Offset(next), 10, 1 << 20).is_ok());  // a reader at the tail
    while (log_->stats().segments == sealed) append_values(next++, 1);
    EXPECT_EQ(log_->stats().sealed_segments_cached, 1u);

    sealed = log_->stats().segments;  // nobody read since that seal: the next one is not kept
    while (log_->stats().segments == sealed) append_values(next++, 1);
    EXPECT_EQ(log_->stats().sealed_segments_cached, 1u);

    ReadResult all = read_all(Offset(0), 7);  // reading the old segments loads them, up to 3
    EXPECT_EQ(all.records.size(), next);
    EXPECT_EQ(log_->stats().sealed_segments_cached, 3u);
}

// Rule: a log that is closed refuses appends and reads with shutting_down.
TEST_F(PartitionLogTest, ClosedLogRefusesWork) {
    open_log();
    append_values(0, 1);
    ASSERT_TRUE(log_->close().is_ok());
    EXPECT_EQ(log_->append(std::vector<Record>{Record{"", "x", 0, {}}}).code(),
              Errc::shutting_down);
    EXPECT_EQ(log_->read(Offset(0), 1, 100).code(), Errc::shutting_down);
}

// Rule: options out of range are refused at open.
TEST_F(PartitionLogTest, BadOptionsAreRefused) {
    options_.segment_bytes_max = 0;
    EXPECT_EQ(PartitionLog::open(fs_, clock_, directory_, options_).code(), Errc::invalid_argument);
    options_.segment_bytes_max = 2ull << 30;
    EXPECT_EQ(PartitionLog::open(fs_, clock_, directory_, options_).code(), Errc::invalid_argument);
}

}  // namespace
}  // namespace narad::storage
