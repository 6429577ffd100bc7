#include <gtest/gtest.h>

#include "storage/test_util.h"

namespace narad::storage {
namespace {

using testing::LogTest;

class RecoveryTest : public LogTest {
  protected:
    void append_garbage(const std::string& path, std::string_view garbage) {
        auto file = io::posix_file_system().open(path, io::kReadWrite);
        ASSERT_TRUE(file.is_ok());
        uint64_t size = (*file)->size().value();
        ASSERT_TRUE((*file)->write_at(size, garbage).is_ok());
    }
};

// Rule: a torn frame at the end of the active segment is cut at recovery, and the HWM is the
// offset after the last good frame. (The tear is left behind by a failed truncate, after which the
// log must refuse appends until reopened.)
TEST_F(RecoveryTest, TornTailFrameIsCutAtRecovery) {
    open_log();
    append_values(0, 5);
    uint64_t good_size = file_size(segment_path(0));
    fs_.tear_next_write(".log", 30);
    fs_.fail(io::FsOp::truncate, ".log");
    std::vector<Record> one = {Record{"", "torn-record-payload", 0, {}}};
    EXPECT_EQ(log_->append(one).code(), Errc::io_error);
    EXPECT_EQ(file_size(segment_path(0)), good_size + 30);
    EXPECT_EQ(log_->append(one).code(), Errc::io_error);  // refuses: the tail is unvouched for
    EXPECT_EQ(log_->high_watermark(), Offset(5));
    EXPECT_EQ(read_all().records.size(), 5u);

    reopen();
    EXPECT_EQ(report_.tail_bytes_cut, 30u);
    EXPECT_EQ(report_.high_watermark, Offset(5));
    EXPECT_EQ(file_size(segment_path(0)), good_size);
    AppendResult result = append_values(5, 1);
    EXPECT_EQ(result.first, Offset(5));
    EXPECT_EQ(read_all().records.size(), 6u);
}

// Rule: garbage after the last frame, even garbage that starts like a frame, is cut at recovery.
TEST_F(RecoveryTest, GarbageAfterTheLastFrameIsCut) {
    open_log();
    append_values(0, 4);
    ASSERT_TRUE(log_->close().is_ok());
    uint64_t good_size = file_size(segment_path(0));
    std::string garbage = std::string("NRF\x01", 4) + std::string(96, '\x7f');
    append_garbage(segment_path(0), garbage);
    open_log();
    EXPECT_EQ(report_.tail_bytes_cut, garbage.size());
    EXPECT_EQ(report_.high_watermark, Offset(4));
    EXPECT_EQ(file_size(segment_path(0)), good_size);
    ReadResult all = read_all();
    ASSERT_EQ(all.records.size(), 4u);
    EXPECT_EQ(all.records[3].value, value_of(3));
}

// Rule: a corrupt frame in the middle of the active segment ends the log there (hidden tail cut).
TEST_F(RecoveryTest, CorruptFrameInActiveSegmentEndsTheLog) {
    open_log();
    append_values(0, 6);
    ASSERT_TRUE(log_->close().is_ok());
    auto frames = frames_of(segment_path(0));
    ASSERT_EQ(frames.size(), 6u);
    flip_byte(segment_path(0), frames[4].first + 66);
    uint64_t size_before = file_size(segment_path(0));
    open_log();
    EXPECT_EQ(report_.high_watermark, Offset(4));
    EXPECT_EQ(report_.tail_bytes_cut, size_before - frames[4].first);
    EXPECT_EQ(file_size(segment_path(0)), frames[4].first);
    EXPECT_EQ(read_all().records.size(), 4u);
}

class SealedCorruptionTest : public RecoveryTest {
  protected:
    // Three or more segments of single-record frames; returns the frames of segment 0.
    std::vector<std::pair<uint64_t, FrameHeader>> fill() {
        options_.segment_bytes_max = 1024;
        open_log();
        for (uint64_t i = 0; i < 40; ++i) append_values(i, 1);
        EXPECT_GE(log_->segments().size(), 3u);
        EXPECT_TRUE(log_->close().is_ok());
        log_.reset();
        return frames_of(segment_path(0));
    }
    void expect_all_but(const std::vector<Offset>& corrupt) {
        ReadResult all = read_all();
        EXPECT_EQ(all.corrupt, corrupt);
        EXPECT_EQ(all.records.size() + corrupt.size(), 40u);
        for (const auto& record : all.records) {
            EXPECT_EQ(record.value, value_of(record.offset.value()));
        }
    }
};

// Rule: a corrupt frame in a sealed segment is not fatal: read() reports its offset in `corrupt`,
// goes on with the next frame, and the frame is counted once.
TEST_F(SealedCorruptionTest, CorruptFrameIsSkippedByReadAndReported) {
    auto frames = fill();
    ASSERT_GT(frames.size(), 5u);
    flip_byte(segment_path(0), frames[3].first + 68);  // inside the value of offset 3
    open_log();
    EXPECT_EQ(report_.indexes_rebuilt, 0u);
    expect_all_but({Offset(3)});
    auto single = log_->read(Offset(3), 10, 1 << 20);
    ASSERT_TRUE(single.is_ok());
    EXPECT_EQ(single->corrupt, std::vector<Offset>{Offset(3)});
    ASSERT_FALSE(single->records.empty());
    EXPECT_EQ(single->records[0].offset, Offset(4));
    EXPECT_EQ(log_->stats().corrupt_frames_seen, 1u);
}

// Rule: rebuilding an index across a corrupt frame resyncs at the next frame that verifies with
// the expected offset; offsets in between are corrupt, later ones read.
TEST_F(SealedCorruptionTest, IndexRebuildResyncsAcrossCorruptFrames) {
    for (size_t damaged_at : {size_t{1}, size_t{5}, size_t{68}}) {  // magic, length, value
        SCOPED_TRACE(damaged_at);
        directory_ = io::join_path(root_, "log-" + std::to_string(damaged_at));
        auto frames = fill();
        flip_byte(segment_path(0), frames[2].first + damaged_at);
        ASSERT_TRUE(fs_.remove(segment_path(0, ".index")).is_ok());
        open_log();
        EXPECT_EQ(report_.indexes_rebuilt, 1u);
        EXPECT_EQ(report_.corrupt_frames, 1u);
        expect_all_but({Offset(2)});
        EXPECT_EQ(log_->stats().corrupt_frames_seen, 1u);
        // The rebuilt index was saved.
        reopen();
        EXPECT_EQ(report_.indexes_rebuilt, 0u);
        expect_all_but({Offset(2)});
        log_.reset();
    }
}

// Rule: a torn last frame of a sealed segment makes its offsets corrupt, not the log unusable.
TEST_F(SealedCorruptionTest, TornEndOfSealedSegmentIsCorruptOffsets) {
    auto frames = fill();
    auto file = io::posix_file_system().open(segment_path(0), io::kReadWrite);
    ASSERT_TRUE((*file)->truncate(frames.back().first + 10).is_ok());
    ASSERT_TRUE(fs_.remove(segment_path(0, ".index")).is_ok());
    open_log();
    Offset last = frames.back().second.base;
    EXPECT_EQ(report_.corrupt_frames, 1u);
    expect_all_but({last});
}

// Rule: a damaged zstd batch in a sealed segment reports all its offsets corrupt; the batches
// after it still read.
TEST_F(RecoveryTest, CorruptZstdBatchReportsAllItsOffsets) {
    options_.codec = Codec::zstd;
    options_.segment_bytes_max = 1024;
    open_log();
    for (uint64_t i = 0; i < 100; i += 10) append_values(i, 10);
    ASSERT_GE(log_->segments().size(), 2u);
    ASSERT_TRUE(log_->close().is_ok());
    auto frames = frames_of(segment_path(0));
    ASSERT_GE(frames.size(), 2u);
    const FrameHeader& victim = frames[1].second;
    flip_byte(segment_path(0), frames[1].first + victim.length - 3);
    open_log();
    ReadResult all = read_all(Offset(0), 3);
    std::vector<Offset> expected;
    for (uint64_t i = 0; i < victim.record_count; ++i) expected.push_back(victim.base + i);
    EXPECT_EQ(all.corrupt, expected);
    EXPECT_EQ(all.records.size(), 100u - victim.record_count);
    EXPECT_EQ(log_->stats().corrupt_frames_seen, 1u);
}

// Rule: a missing, short or corrupt index is rebuilt at recovery (and counted).
TEST_F(RecoveryTest, MissingShortOrCorruptIndexIsRebuilt) {
    options_.segment_bytes_max = 600;
    open_log();
    for (uint64_t i = 0; i < 30; ++i) append_values(i, 1);
    auto segments = log_->segments();
    ASSERT_GE(segments.size(), 3u);
    std::string index0 = segment_path(segments[0].base.value(), ".index");
    std::string index1 = segment_path(segments[1].base.value(), ".index");
    for (int damage = 0; damage < 3; ++damage) {
        SCOPED_TRACE(damage);
        ASSERT_TRUE(log_->close().is_ok());
        log_.reset();
        if (damage == 0) {
            ASSERT_TRUE(fs_.remove(index0).is_ok());
        }
        if (damage == 1) {
            auto file = io::posix_file_system().open(index1, io::kReadWrite);
            ASSERT_TRUE((*file)->truncate(file_size(index1) - 2).is_ok());
        }
        if (damage == 2) flip_byte(index0, 40);
        open_log();
        EXPECT_EQ(report_.indexes_rebuilt, 1u);
        ReadResult all = read_all(Offset(0), 4);
        ASSERT_EQ(all.records.size(), 30u);
        EXPECT_TRUE(all.corrupt.empty());
        reopen();
        EXPECT_EQ(report_.indexes_rebuilt, 0u);
    }
}

// Rule: an index damaged after open is rebuilt when first loaded, and reads stay correct.
TEST_F(RecoveryTest, IndexDamagedAfterOpenIsRebuiltOnLoad) {
    options_.segment_bytes_max = 600;
    options_.sealed_segments_cached = 1;
    open_log();
    for (uint64_t i = 0; i < 30; ++i) append_values(i, 1);
    ASSERT_GE(log_->segments().size(), 3u);
    reopen();  // nothing cached: sealed segments load their index on first read
    flip_byte(segment_path(0, ".index"), 36);
    ReadResult all = read_all(Offset(0), 5);
    ASSERT_EQ(all.records.size(), 30u);
    EXPECT_TRUE(all.corrupt.empty());
    reopen();
    EXPECT_EQ(report_.indexes_rebuilt, 0u);
}

// Rule: a segment whose first frame does not carry the offset in its name is refused as corrupt.
TEST_F(RecoveryTest, FirstFrameOffsetNotMatchingTheNameIsCorrupt) {
    open_log();
    append_values(0, 3);
    ASSERT_TRUE(log_->close().is_ok());
    log_.reset();
    ASSERT_TRUE(fs_.rename(segment_path(0), segment_path(7)).is_ok());
    auto opened = PartitionLog::open(fs_, clock_, directory_, options_);
    EXPECT_EQ(opened.code(), Errc::corrupt);
    EXPECT_NE(opened.status().message().find("first frame"), std::string::npos)
        << opened.status().message();
}

// Rule: a gap between segments (a missing segment) is refused as corrupt, not silently accepted.
TEST_F(RecoveryTest, GapBetweenSegmentsIsCorrupt) {
    options_.segment_bytes_max = 600;
    open_log();
    for (uint64_t i = 0; i < 40; ++i) append_values(i, 1);
    auto segments = log_->segments();
    ASSERT_GE(segments.size(), 4u);
    ASSERT_TRUE(log_->close().is_ok());
    log_.reset();
    uint64_t middle = segments[1].base.value();
    ASSERT_TRUE(fs_.remove(segment_path(middle)).is_ok());
    ASSERT_TRUE(fs_.remove(segment_path(middle, ".index")).is_ok());
    auto opened = PartitionLog::open(fs_, clock_, directory_, options_);
    EXPECT_EQ(opened.code(), Errc::corrupt);
    EXPECT_NE(opened.status().message().find("missing"), std::string::npos)
        << opened.status().message();
}

// Rule: a record whose append returned ok survives a crash (drop of unsynced data), also right
// after a segment roll.
TEST_F(RecoveryTest, CrashAfterSuccessfulAppendKeepsTheRecord) {
    options_.segment_bytes_max = 400;
    open_log();
    for (uint64_t i = 0; i < 25; ++i) {
        append_values(i, 1);
        if (i % 6 == 5) {
            crash_and_reopen();
            EXPECT_EQ(report_.high_watermark, Offset(i + 1));
            EXPECT_EQ(report_.tail_bytes_cut, 0u);
        }
    }
    crash_and_reopen();
    ReadResult all = read_all();
    ASSERT_EQ(all.records.size(), 25u);
    for (uint64_t i = 0; i < 25; ++i) EXPECT_EQ(all.records[i].value, value_of(i));
}

// Rule: a roll that fails after creating the new segment leaves the log as it was, and the log
// keeps working after a crash.
TEST_F(RecoveryTest, FailedRollLeavesNoTrace) {
    options_.segment_bytes_max = 300;
    open_log();
    append_values(0, 3);
    failpoint::set_hook("storage.roll.after_create",
                        [] { return Status(Errc::io_error, "injected roll failure"); });
    std::vector<Record> more = {Record{"", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 0, {}},
                                Record{"", "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy", 0, {}},
                                Record{"", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", 0, {}}};
    auto result = log_->append(more);
    EXPECT_EQ(result.code(), Errc::io_error);
    EXPECT_EQ(log_->high_watermark(), Offset(3));
    EXPECT_EQ(log_->segments().size(), 1u);
    failpoint::clear("storage.roll.after_create");
    crash_and_reopen();
    EXPECT_EQ(report_.high_watermark, Offset(3));
    ASSERT_TRUE(log_->append(more).is_ok());
    EXPECT_EQ(log_->segments().size(), 2u);
    EXPECT_EQ(read_all().records.size(), 6u);
}

}  // namespace
}  // namespace narad::storage
