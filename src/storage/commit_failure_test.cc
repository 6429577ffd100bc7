#include <gtest/gtest.h>

#include "storage/test_util.h"

namespace narad::storage {
namespace {

using testing::LogTest;

class CommitFailureTest : public LogTest {
  protected:
    // Appends 4 records, makes the next commit fail through `inject`, and checks that the failure
    // left no trace: same HWM, same file size, the log still appends, and a reopen (also after a
    // crash) shows only the records that succeeded.
    void expect_failure_leaves_no_trace(const std::function<void()>& inject) {
        open_log();
        append_values(0, 4, /*ingress=*/9);
        uint64_t size = file_size(segment_path(0));
        inject();
        std::vector<Record> failing = {Record{"", "doomed-1", 0, {IngressId(9), WalSeq(4)}},
                                       Record{"", "doomed-2", 0, {IngressId(9), WalSeq(5)}}};
        auto result = log_->append(failing);
        EXPECT_FALSE(result.is_ok());
        failpoint::clear_all();
        fs_.heal();
        EXPECT_EQ(log_->high_watermark(), Offset(4));
        EXPECT_EQ(file_size(segment_path(0)), size);
        EXPECT_EQ(read_all().records.size(), 4u);
        // The failed records' stamps were not committed: a retry appends them.
        EXPECT_EQ(log_->committed_sequence(IngressId(9)), WalSeq(3));
        crash_and_reopen();
        EXPECT_EQ(report_.high_watermark, Offset(4));
        EXPECT_EQ(report_.tail_bytes_cut, 0u);
        auto retry = log_->append(failing);
        ASSERT_TRUE(retry.is_ok());
        EXPECT_EQ(retry->appended, 2u);
        EXPECT_EQ(retry->first, Offset(4));
        ReadResult all = read_all();
        ASSERT_EQ(all.records.size(), 6u);
        EXPECT_EQ(all.records[4].value, "doomed-1");
    }
};

// Rule: a failed write leaves no trace.
TEST_F(CommitFailureTest, FailedWriteLeavesNoTrace) {
    expect_failure_leaves_no_trace([&] { fs_.fail(io::FsOp::write, ".log"); });
}

// Rule: a torn write (part of the frames reached the file) is truncated away.
TEST_F(CommitFailureTest, TornWriteLeavesNoTrace) {
    expect_failure_leaves_no_trace([&] { fs_.tear_next_write(".log", 50); });
}

// Rule: a failed fdatasync leaves no trace: the written frames are truncated away.
TEST_F(CommitFailureTest, FailedSyncLeavesNoTrace) {
    expect_failure_leaves_no_trace([&] { fs_.fail(io::FsOp::sync, ".log"); });
}

// Rule: a failed read-back verification fails the commit and leaves no trace.
TEST_F(CommitFailureTest, FailedVerificationLeavesNoTrace) {
    expect_failure_leaves_no_trace([&] { fs_.fail(io::FsOp::read, ".log"); });
}

// Rule: an error injected between sync and the HWM advance fails the commit and leaves no trace.
TEST_F(CommitFailureTest, FailureAfterSyncLeavesNoTrace) {
    expect_failure_leaves_no_trace([&] {
        failpoint::set_hook("storage.append.after_sync",
                            [] { return Status(Errc::io_error, "injected"); });
    });
}

// Rule: after a failed truncate the log refuses appends (io_error) until reopened, while reads of
// committed records keep working; the reopen cuts what the failed commit left behind.
TEST_F(CommitFailureTest, FailedTruncateMakesTheLogRefuseAppends) {
    open_log();
    append_values(0, 3);
    fs_.tear_next_write(".log", 10);
    fs_.fail(io::FsOp::truncate, ".log");
    std::vector<Record> one = {Record{"", "a", 0, {}}};
    EXPECT_EQ(log_->append(one).code(), Errc::io_error);
    auto refused = log_->append(one);
    EXPECT_EQ(refused.code(), Errc::io_error);
    EXPECT_NE(refused.status().message().find("reopen"), std::string::npos);
    EXPECT_EQ(read_all().records.size(), 3u);
    EXPECT_EQ(log_->read(Offset(3), 10, 1 << 20)->records.size(), 0u);
    reopen();
    EXPECT_EQ(report_.high_watermark, Offset(3));
    EXPECT_EQ(report_.tail_bytes_cut, 10u);
    EXPECT_TRUE(log_->append(one).is_ok());
}

// Rule: when a commit fails and its truncate fails too, frames that reached the disk whole may
// reappear at the next open (the appender's outcome was unknown); their producer stamps make the
// retry a duplicate, so the record is still stored once.
TEST_F(CommitFailureTest, UndoneRollbackIsAnUnknownOutcomeThatDedups) {
    open_log();
    append_values(0, 3, /*ingress=*/4);
    fs_.fail(io::FsOp::sync, ".log");
    fs_.fail(io::FsOp::truncate, ".log");
    std::vector<Record> stamped = {Record{"", "maybe", 0, {IngressId(4), WalSeq(3)}}};
    EXPECT_EQ(log_->append(stamped).code(), Errc::io_error);
    EXPECT_EQ(log_->high_watermark(), Offset(3));
    reopen();
    ASSERT_EQ(report_.high_watermark, Offset(4));  // the whole frame was on disk
    auto retry = log_->append(stamped);
    ASSERT_TRUE(retry.is_ok());
    EXPECT_EQ(retry->duplicates, 1u);
    EXPECT_EQ(log_->high_watermark(), Offset(4));
}

}  // namespace
}  // namespace narad::storage
