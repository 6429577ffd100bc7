#include <gtest/gtest.h>

#include "storage/storage_metrics.h"
#include "storage/test_util.h"

namespace narad::storage {
namespace {

using std::chrono::hours;
using testing::LogTest;

class RetentionTest : public LogTest {
  protected:
    void fill() {
        options_.segment_bytes_max = 500;
        open_log();
        for (uint64_t i = 0; i < 40; ++i) append_values(i, 1);
        segments_ = log_->segments();
        ASSERT_GE(segments_.size(), 4u);
        for (const auto& segment : segments_) age(segment.base, hours(1));
    }
    void age(Offset base, std::chrono::nanoseconds by) {
        ASSERT_TRUE(fs_.set_modified(segment_path(base.value()), clock_.wall_now() - by).is_ok());
    }
    std::vector<SegmentInfo> segments_;
};

// Rule: retention deletes the sealed segments older than now - retention (and their indexes),
// oldest_offset advances, reads below it answer gone, and the metrics count what went.
TEST_F(RetentionTest, DeletesOnlyOldSealedSegments) {
    fill();
    age(segments_[0].base, hours(48));
    age(segments_[1].base, hours(30));
    // A log opened directly carries empty topic and partition labels.
    auto& messages = storage_metrics().retention_messages_deleted.with({"", "", "age"});
    auto& bytes = storage_metrics().retention_bytes_deleted.with({"", "", "age"});
    double messages_before = messages.value();
    double bytes_before = bytes.value();

    auto result = log_->enforce_retention(hours(24));
    ASSERT_TRUE(result.is_ok()) << result.status().to_string();
    EXPECT_EQ(result->segments_deleted, 2u);
    Offset oldest = segments_[2].base;
    EXPECT_EQ(result->records_deleted, oldest.value());
    EXPECT_EQ(result->bytes_deleted, segments_[0].size_bytes + segments_[1].size_bytes);
    EXPECT_EQ(messages.value() - messages_before, static_cast<double>(oldest.value()));
    EXPECT_EQ(bytes.value() - bytes_before, static_cast<double>(result->bytes_deleted));
    for (int i = 0; i < 2; ++i) {
        EXPECT_FALSE(fs_.exists(segment_path(segments_[i].base.value())));
        EXPECT_FALSE(fs_.exists(segment_path(segments_[i].base.value(), ".index")));
    }
    EXPECT_EQ(log_->oldest_offset(), oldest);
    EXPECT_EQ(log_->stats().oldest_offset, oldest);
    EXPECT_EQ(log_->read(Offset(0), 10, 1 << 20).code(), Errc::gone);
    EXPECT_EQ(log_->read(oldest - 1, 10, 1 << 20).code(), Errc::gone);
    EXPECT_EQ(read_all(oldest).records.size(), 40 - oldest.value());

    reopen();
    EXPECT_EQ(log_->oldest_offset(), oldest);
    EXPECT_EQ(log_->read(Offset(0), 10, 1 << 20).code(), Errc::gone);
    EXPECT_EQ(read_all(oldest).records.size(), 40 - oldest.value());
}

// Rule: only a prefix of the log goes: a young segment keeps the old ones after it.
TEST_F(RetentionTest, AYoungSegmentKeepsLaterOldOnes) {
    fill();
    age(segments_[1].base, hours(48));
    auto result = log_->enforce_retention(hours(24));
    ASSERT_TRUE(result.is_ok());
    EXPECT_EQ(result->segments_deleted, 0u);
    EXPECT_EQ(log_->oldest_offset(), Offset(0));
}

// Rule: the active segment is never deleted, however old.
TEST_F(RetentionTest, TheActiveSegmentIsNeverDeleted) {
    fill();
    for (const auto& segment : segments_) age(segment.base, hours(100));
    auto result = log_->enforce_retention(hours(1));
    ASSERT_TRUE(result.is_ok());
    EXPECT_EQ(result->segments_deleted, segments_.size() - 1);
    EXPECT_EQ(log_->segments().size(), 1u);
    EXPECT_EQ(log_->oldest_offset(), segments_.back().base);
    EXPECT_EQ(log_->high_watermark(), Offset(40));
    EXPECT_EQ(append_values(40, 1).first, Offset(40));
    EXPECT_EQ(read_all(segments_.back().base).records.size(), 41 - segments_.back().base.value());
}

}  // namespace
}  // namespace narad::storage
