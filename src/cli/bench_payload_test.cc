#include "cli/bench_payload.h"

#include <gtest/gtest.h>

#include "base/json_text.h"
#include "cli/json_text.h"

namespace narad::cli::bench {
namespace {

// Rule: a timed payload is valid JSON of exactly --size bytes carrying the run id and send time.
TEST(BenchPayload, TimedPayloadHasExactSize) {
    for (int64_t size : {44, 45, 100, 256, 4096}) {
        const BenchPayload payload(size, "abcd1234");
        ASSERT_TRUE(payload.timed());
        const std::string text = payload.make(1'783'615'560'123'456'789);
        EXPECT_EQ(text.size(), size_t(size));
        EXPECT_TRUE(is_valid_json(text)) << text;
        EXPECT_TRUE(text.starts_with("{\"bench\":\"abcd1234")) << text;
        EXPECT_TRUE(text.ends_with(",\"t\":1783615560123456789}")) << text;
        EXPECT_EQ(payload.sent_at(text), 1'783'615'560'123'456'789);
    }
}

// Rule: below 44 bytes the payload is Go's untimed {"bench":"x…"} (exact from 13 bytes up).
TEST(BenchPayload, SmallSizesFallBackToGoForm) {
    const BenchPayload exact(43, "abcd1234");
    EXPECT_FALSE(exact.timed());
    EXPECT_EQ(exact.make(5).size(), 43u);
    EXPECT_EQ(BenchPayload(13, "abcd1234").make(0), "{\"bench\":\"x\"}");
    EXPECT_EQ(BenchPayload(5, "abcd1234").make(0), "{\"bench\":\"x\"}");  // Go's max(size-12, 1)
    EXPECT_EQ(BenchPayload(20, "abcd1234").make(0), "{\"bench\":\"xxxxxxxx\"}");
    EXPECT_FALSE(exact.sent_at(exact.make(5)).has_value());
}

// Rule: payloads of another run, or not ours at all, carry no usable send time.
TEST(BenchPayload, IgnoresForeignPayloads) {
    const BenchPayload mine(100, "aaaaaaaa");
    const BenchPayload theirs(100, "bbbbbbbb");
    EXPECT_FALSE(mine.sent_at(theirs.make(1'783'615'560'000'000'000)).has_value());
    EXPECT_FALSE(mine.sent_at("{\"hello\":1}").has_value());
    EXPECT_FALSE(mine.sent_at("\"text\"").has_value());
    EXPECT_EQ(new_run_id().size(), BenchPayload::kRunIdLength);
}

}  // namespace
}  // namespace narad::cli::bench
