#include <gtest/gtest.h>

#include "io/fault_injection_fs.h"
#include "wal/ingress_wal.h"
#include "wal/wal_format.h"
#include "wal/wal_test_util.h"

namespace narad::wal {
namespace {

using testing::append_and_wait;
using testing::Collector;
using testing::make_record;
using testing::segment_files;

class IngressWalRecoveryTest : public ::testing::Test {
  protected:
    std::unique_ptr<IngressWal> open(WalOptions options = {}) {
        auto wal = IngressWal::open(fs_, clock_, directory_, options);
        EXPECT_TRUE(wal.is_ok()) << wal.status().to_string();
        return wal.is_ok() ? std::move(wal).value() : nullptr;
    }
    // Appends each value as its own group and closes the WAL.
    void write_values(const std::vector<std::string>& values, WalOptions options = {}) {
        auto wal = open(options);
        wal->start();
        for (const auto& value : values) {
            ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, value)}).is_ok());
        }
    }
    // The values a reopened WAL hands its consumer.
    std::vector<std::string> recovered_values(IngressWal& wal) {
        Collector collector;
        wal.set_consumer(collector.consumer());
        std::vector<std::string> values;
        for (const auto& record : collector.records()) values.push_back(record->value);
        wal.set_consumer(nullptr);  // the collector is going away
        return values;
    }
    std::string segment_path(uint64_t first) {
        return io::join_path(directory_, format::segment_file_name(WalSeq(first)));
    }
    uint64_t size_of(const std::string& path) {
        return io::posix_file_system().stat(path).value().size;
    }
    void truncate_file(const std::string& path, uint64_t size) {
        auto file = io::posix_file_system().open(path, io::kReadWrite).value();
        ASSERT_TRUE(file->truncate(size).is_ok());
    }
    void flip_byte(const std::string& path, uint64_t offset) {
        auto file = io::posix_file_system().open(path, io::kReadWrite).value();
        char byte = 0;
        ASSERT_EQ(file->read_at(offset, &byte, 1).value(), 1u);
        byte ^= 0x40;
        ASSERT_TRUE(file->write_at(offset, std::string_view(&byte, 1)).is_ok());
    }
    uint64_t frame_size(const std::string& value) {
        return format::frame_bytes(make_record("t", 0, value));
    }

    testing::TempDir dir_;
    std::string directory_ = dir_.file("ingress");
    io::FaultInjectionFileSystem fs_;
    FakeClock clock_;
};

// Rule: a torn last record is cut at recovery, the good records before it are recovered, and the
// next sequence skips every number the cut bytes could have held.
TEST_F(IngressWalRecoveryTest, TornTailIsCutAndGoodRecordsRecovered) {
    write_values({"r1", "r2", "r3"});
    std::string path = segment_path(1);
    uint64_t full = size_of(path);
    truncate_file(path, full - 5);  // the middle of r3

    auto wal = open();
    EXPECT_EQ(recovered_values(*wal), (std::vector<std::string>{"r1", "r2"}));
    EXPECT_EQ(size_of(path), full - frame_size("r3"));
    uint64_t cut = frame_size("r3") - 5;
    uint64_t skipped = (cut + format::kMinFrameBytes - 1) / format::kMinFrameBytes;
    EXPECT_EQ(wal->stats().next_sequence, WalSeq(3 + skipped));

    wal->start();
    ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "r4")}).is_ok());
    wal.reset();
    auto again = open();
    EXPECT_EQ(recovered_values(*again), (std::vector<std::string>{"r1", "r2", "r4"}));
}

// Rule: a corrupt record in the last segment ends the log there, even with whole records after it.
TEST_F(IngressWalRecoveryTest, CorruptRecordInLastSegmentEndsTheLog) {
    write_values({"r1", "r2", "r3"});
    std::string path = segment_path(1);
    uint64_t r2_value = format::kSegmentHeaderBytes + frame_size("r1") + frame_size("r2") - 1;
    flip_byte(path, r2_value);

    auto wal = open();
    EXPECT_EQ(recovered_values(*wal), (std::vector<std::string>{"r1"}));
    EXPECT_EQ(size_of(path), format::kSegmentHeaderBytes + frame_size("r1"));
    // r2 and r3 had sequences 2 and 3: neither may be issued again.
    EXPECT_GT(wal->stats().next_sequence, WalSeq(3));
}

// Rule: a corrupt record in an earlier segment skips only the rest of that segment; the records
// of later segments are still recovered.
TEST_F(IngressWalRecoveryTest, CorruptRecordInEarlierSegmentSkipsOnlyTheRestOfIt) {
    WalOptions options;
    options.segment_bytes_max = 1;  // one group per segment
    {
        auto wal = open(options);
        wal->start();
        for (int group = 0; group < 3; ++group) {
            std::string a = "g" + std::to_string(group) + "a";
            std::string b = "g" + std::to_string(group) + "b";
            ASSERT_TRUE(
                append_and_wait(*wal, {make_record("t", 0, a), make_record("t", 1, b)}).is_ok());
        }
    }
    ASSERT_EQ(segment_files(directory_).size(), 3u);
    // Segments are named 1, 3 and 5; damage the second record of the first.
    flip_byte(segment_path(1), format::kSegmentHeaderBytes + frame_size("g0a") + 20);

    auto wal = open(options);
    EXPECT_EQ(recovered_values(*wal),
              (std::vector<std::string>{"g0a", "g1a", "g1b", "g2a", "g2b"}));
    EXPECT_EQ(wal->stats().next_sequence, WalSeq(7));
}

// Rule: a last segment whose header never made it to disk holds no records and becomes the active
// segment again; appends and a later recovery work.
TEST_F(IngressWalRecoveryTest, TornSegmentHeaderIsRewritten) {
    write_values({});
    truncate_file(segment_path(1), 10);
    auto wal = open();
    EXPECT_TRUE(recovered_values(*wal).empty());
    EXPECT_EQ(wal->stats().next_sequence, WalSeq(1));
    wal->start();
    ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "a")}).is_ok());
    wal.reset();
    auto again = open();
    EXPECT_EQ(recovered_values(*again), std::vector<std::string>{"a"});
}

// Rule: once every record is committed and its segment deleted, the empty active segment's name
// still keeps the next sequence above every one issued, so a restart never reuses a sequence a
// partition has already deduplicated against.
TEST_F(IngressWalRecoveryTest, SequencesAreNotReusedAfterEveryRecordIsCommitted) {
    write_values({"r1", "r2", "r3"});
    {
        Collector collector;
        auto wal = open();  // r1..r3 recovered; a new active segment named 4
        wal->set_consumer(collector.consumer());
        wal->mark_committed(collector.sequences());
    }
    EXPECT_EQ(segment_files(directory_),
              std::vector<std::string>{format::segment_file_name(WalSeq(4))});
    Collector collector;
    auto wal = open();
    EXPECT_EQ(wal->stats().next_sequence, WalSeq(4));
    wal->start();
    ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "r4")}).is_ok());
    wal->set_consumer(collector.consumer());
    EXPECT_EQ(collector.sequences(), std::vector<WalSeq>{WalSeq(4)});
}

// Rule: after a machine crash only synced records come back, and records acknowledged before it
// all do.
TEST_F(IngressWalRecoveryTest, CrashKeepsExactlyTheAcknowledgedRecords) {
    {
        auto wal = open();
        wal->start();
        ASSERT_TRUE(append_and_wait(*wal, {make_record("t", 0, "acked")}).is_ok());
        // The next group is written but its sync and the truncate both fail: its bytes sit in the
        // page cache, unsynced, when the machine dies.
        fs_.fail(io::FsOp::sync, ".wal", 1);
        fs_.fail(io::FsOp::truncate, ".wal", 1);
        EXPECT_FALSE(append_and_wait(*wal, {make_record("t", 0, "unsynced")}).is_ok());
    }
    ASSERT_TRUE(fs_.drop_unsynced_data().is_ok());
    auto wal = open();
    EXPECT_EQ(recovered_values(*wal), std::vector<std::string>{"acked"});
}

}  // namespace
}  // namespace narad::wal
