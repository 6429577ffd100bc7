#include "queue/consumer_offset_file.h"

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "base/checksum.h"
#include "base/failpoint.h"
#include "io/fault_injection_fs.h"
#include "queue/temp_dir_for_test.h"

namespace narad::queue {
namespace {

const ConsumerPosition kOld{Offset(10), {Offset(12), Offset(15)}};
const ConsumerPosition kNew{Offset(20), {Offset(21), Offset(30), Offset(31)}};

class ConsumerOffsetFileTest : public ::testing::Test {
  protected:
    void TearDown() override { failpoint::clear_all(); }

    // The file's bytes, written by hand: for checks on what the reader accepts.
    static std::string encode(uint32_t magic, uint32_t version, uint64_t frontier,
                              std::vector<uint64_t> offsets, std::optional<uint32_t> count = {}) {
        std::string bytes;
        put_u32(bytes, magic);
        put_u32(bytes, version);
        put_u64(bytes, frontier);
        put_u32(bytes, count.value_or(static_cast<uint32_t>(offsets.size())));
        for (uint64_t offset : offsets) put_u64(bytes, offset);
        put_u64(bytes, checksum64(bytes));
        return bytes;
    }
    void put_raw(const std::string& bytes) {
        ASSERT_TRUE(io::write_file_atomically(fs_, path_, bytes).is_ok());
    }
    Errc read_code() { return read_consumer_position(fs_, path_).code(); }
    ConsumerPosition read() {
        auto position = read_consumer_position(fs_, path_);
        EXPECT_TRUE(position.is_ok()) << position.status().to_string();
        return position.is_ok() ? *position : ConsumerPosition{};
    }

    TempDirForTest dir_;
    io::FaultInjectionFileSystem fs_;
    std::string path_ = dir_.file(kConsumerOffsetFile);
};

constexpr uint32_t kMagic = 0x4643524e;

// Rule: a written position reads back exactly, and each write replaces the previous one.
TEST_F(ConsumerOffsetFileTest, PositionRoundTrips) {
    ASSERT_TRUE(write_consumer_position(fs_, path_, ConsumerPosition{}).is_ok());
    EXPECT_EQ(read(), ConsumerPosition{});
    ASSERT_TRUE(write_consumer_position(fs_, path_, kOld).is_ok());
    EXPECT_EQ(read(), kOld);
    ASSERT_TRUE(write_consumer_position(fs_, path_, kNew).is_ok());
    EXPECT_EQ(read(), kNew);
    ConsumerPosition at_frontier{Offset(7), {Offset(7), Offset(UINT64_MAX)}};
    ASSERT_TRUE(write_consumer_position(fs_, path_, at_frontier).is_ok());
    EXPECT_EQ(read(), at_frontier);
}

// Rule: a partition that never had a position reads as not_found, not as corrupt.
TEST_F(ConsumerOffsetFileTest, MissingFileIsNotFound) { EXPECT_EQ(read_code(), Errc::not_found); }

// Rule: a crash after the new file is written but before the rename leaves the previous position.
TEST_F(ConsumerOffsetFileTest, CrashBeforeRenameKeepsThePreviousPosition) {
#ifndef NARAD_FAILPOINTS
    GTEST_SKIP() << "failpoints are compiled out";
#endif
    ASSERT_TRUE(write_consumer_position(fs_, path_, kOld).is_ok());
    ASSERT_TRUE(failpoint::configure("io.atomic_write.before_rename=error").is_ok());
    EXPECT_FALSE(write_consumer_position(fs_, path_, kNew).is_ok());
    failpoint::clear_all();
    EXPECT_EQ(read(), kOld);
    ASSERT_TRUE(fs_.drop_unsynced_data().is_ok());
    EXPECT_EQ(read(), kOld);
    // The leftover temporary file does not get in the way of the next write.
    ASSERT_TRUE(write_consumer_position(fs_, path_, kNew).is_ok());
    EXPECT_EQ(read(), kNew);
}

// Rule: a crash after the rename but before the directory sync reads back the previous position
// intact, never a mix of the two.
TEST_F(ConsumerOffsetFileTest, CrashBeforeDirectorySyncKeepsThePreviousPosition) {
    ASSERT_TRUE(write_consumer_position(fs_, path_, kOld).is_ok());
    fs_.fail(io::FsOp::sync_directory, dir_.path());
    EXPECT_FALSE(write_consumer_position(fs_, path_, kNew).is_ok());
    ASSERT_TRUE(fs_.drop_unsynced_data().is_ok());
    EXPECT_EQ(read(), kOld);
}

// Rule: a torn write of the new file (disk full, crash mid-write) leaves the previous position.
TEST_F(ConsumerOffsetFileTest, TornWriteKeepsThePreviousPosition) {
    ASSERT_TRUE(write_consumer_position(fs_, path_, kOld).is_ok());
    fs_.tear_next_write(kConsumerOffsetFile, 13);
    EXPECT_FALSE(write_consumer_position(fs_, path_, kNew).is_ok());
    EXPECT_EQ(read(), kOld);
    ASSERT_TRUE(fs_.drop_unsynced_data().is_ok());
    EXPECT_EQ(read(), kOld);
}

// Rule: a failed fsync of the new file leaves the previous position, before and after a crash.
TEST_F(ConsumerOffsetFileTest, FailedSyncKeepsThePreviousPosition) {
    ASSERT_TRUE(write_consumer_position(fs_, path_, kOld).is_ok());
    fs_.fail(io::FsOp::sync, kConsumerOffsetFile);
    EXPECT_FALSE(write_consumer_position(fs_, path_, kNew).is_ok());
    ASSERT_TRUE(fs_.drop_unsynced_data().is_ok());
    EXPECT_EQ(read(), kOld);
}

// Rule: once a write returned ok, the new position survives a crash.
TEST_F(ConsumerOffsetFileTest, CompletedWriteSurvivesACrash) {
    ASSERT_TRUE(write_consumer_position(fs_, path_, kOld).is_ok());
    ASSERT_TRUE(write_consumer_position(fs_, path_, kNew).is_ok());
    ASSERT_TRUE(fs_.drop_unsynced_data().is_ok());
    EXPECT_EQ(read(), kNew);
}

// Rule: any flipped byte makes the file read as corrupt.
TEST_F(ConsumerOffsetFileTest, FlippedByteIsCorrupt) {
    ASSERT_TRUE(write_consumer_position(fs_, path_, kNew).is_ok());
    std::string good = io::read_file(fs_, path_).value();
    for (size_t i = 0; i < good.size(); ++i) {
        std::string bad = good;
        bad[i] = static_cast<char>(bad[i] ^ 0x10);
        put_raw(bad);
        EXPECT_EQ(read_code(), Errc::corrupt) << "byte " << i;
    }
}

// Rule: a file cut short (or empty, or with bytes appended) is corrupt.
TEST_F(ConsumerOffsetFileTest, WrongLengthIsCorrupt) {
    ASSERT_TRUE(write_consumer_position(fs_, path_, kNew).is_ok());
    std::string good = io::read_file(fs_, path_).value();
    for (size_t length = 0; length < good.size(); ++length) {
        put_raw(good.substr(0, length));
        EXPECT_EQ(read_code(), Errc::corrupt) << "length " << length;
    }
    put_raw(good + "x");
    EXPECT_EQ(read_code(), Errc::corrupt);
}

// Rule: a file whose checksum matches but whose contents break the format is still corrupt: bad
// magic, unknown version, a count that disagrees with the length, offsets out of order, repeated
// or below the frontier.
TEST_F(ConsumerOffsetFileTest, WellChecksummedButInvalidContentIsCorrupt) {
    put_raw(encode(kMagic, 1, 5, {6, 9}));
    EXPECT_EQ(read(), (ConsumerPosition{Offset(5), {Offset(6), Offset(9)}}));

    const std::string cases[] = {
        encode(kMagic + 1, 1, 5, {6, 9}),
        encode(kMagic, 2, 5, {6, 9}),
        encode(kMagic, 1, 5, {6, 9}, 3),
        encode(kMagic, 1, 5, {6, 9}, 1),
        encode(kMagic, 1, 5, {6, 9}, kMaxPersistedAckedAhead + 1),
        encode(kMagic, 1, 5, {9, 6}),
        encode(kMagic, 1, 5, {6, 6}),
        encode(kMagic, 1, 5, {4, 6}),
    };
    for (size_t i = 0; i < std::size(cases); ++i) {
        put_raw(cases[i]);
        EXPECT_EQ(read_code(), Errc::corrupt) << "case " << i;
    }
}

// Rule: the writer refuses a position the reader would call corrupt, and leaves the file alone.
TEST_F(ConsumerOffsetFileTest, WriterRefusesUnsortedOrBelowFrontierOffsets) {
    ASSERT_TRUE(write_consumer_position(fs_, path_, kOld).is_ok());
    EXPECT_EQ(write_consumer_position(fs_, path_, {Offset(5), {Offset(9), Offset(7)}}).code(),
              Errc::invalid_argument);
    EXPECT_EQ(write_consumer_position(fs_, path_, {Offset(5), {Offset(4)}}).code(),
              Errc::invalid_argument);
    EXPECT_EQ(write_consumer_position(fs_, path_, {Offset(5), {Offset(6), Offset(6)}}).code(),
              Errc::invalid_argument);
    EXPECT_EQ(read(), kOld);
}

// Rule: beyond kMaxPersistedAckedAhead the writer keeps the lowest acked-ahead offsets, so the
// dropped ones are redelivered after a restart rather than lost.
TEST_F(ConsumerOffsetFileTest, WriterKeepsTheLowestAckedAheadOffsetsAtTheCap) {
    ConsumerPosition big{Offset(3), {}};
    for (uint64_t i = 0; i < kMaxPersistedAckedAhead + 5; ++i) {
        big.acked_ahead.push_back(Offset(10 + 2 * i));
    }
    ASSERT_TRUE(write_consumer_position(fs_, path_, big).is_ok());
    ConsumerPosition back = read();
    EXPECT_EQ(back.frontier, Offset(3));
    ASSERT_EQ(back.acked_ahead.size(), kMaxPersistedAckedAhead);
    EXPECT_TRUE(
        std::equal(back.acked_ahead.begin(), back.acked_ahead.end(), big.acked_ahead.begin()));
}

}  // namespace
}  // namespace narad::queue
