#include "wal/commit_codec.h"

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "base/checksum.h"

namespace narad::wal {
namespace {

std::vector<storage::Record> sample() {
    return {
        {"k1", "hello", 1234, {IngressId(7), WalSeq(10)}},
        {"", "", -5, {IngressId(7), WalSeq(11)}},
        {"key-3", std::string_view("\0binary\xff", 8), 99, {IngressId(0), WalSeq(0)}},
    };
}

// Re-seals a tampered body with a valid checksum, so the structural checks are what refuses it.
std::string reseal(std::string body) {
    body.resize(body.size() - commit_codec::kTrailerBytes);
    put_u64(body, checksum64(body));
    return body;
}

// Rule: what is encoded decodes to the same records, keys, values, timestamps and stamps.
TEST(CommitCodecTest, RoundTripKeepsEveryField) {
    auto records = sample();
    auto body = commit_codec::encode(records);
    ASSERT_TRUE(body.is_ok());
    EXPECT_EQ(body->size(), commit_codec::encoded_size(records));
    auto decoded = commit_codec::decode(*body);
    ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
    ASSERT_EQ(decoded->size(), records.size());
    for (size_t i = 0; i < records.size(); ++i) {
        EXPECT_EQ((*decoded)[i].key, records[i].key);
        EXPECT_EQ((*decoded)[i].value, records[i].value);
        EXPECT_EQ((*decoded)[i].timestamp_ms, records[i].timestamp_ms);
        EXPECT_EQ((*decoded)[i].producer.ingress, records[i].producer.ingress);
        EXPECT_EQ((*decoded)[i].producer.sequence, records[i].producer.sequence);
    }
}

// Rule: any single flipped byte anywhere in the body is refused.
TEST(CommitCodecTest, EveryFlippedByteIsRefused) {
    auto body = commit_codec::encode(sample()).value();
    for (size_t i = 0; i < body.size(); ++i) {
        std::string bad = body;
        bad[i] = static_cast<char>(bad[i] ^ 0x01);
        EXPECT_EQ(commit_codec::decode(bad).code(), Errc::invalid_argument) << "byte " << i;
    }
}

// Rule: every truncation of a body is refused, and so is a body with trailing bytes.
TEST(CommitCodecTest, TruncatedOrExtendedBodyIsRefused) {
    auto body = commit_codec::encode(sample()).value();
    for (size_t n = 0; n < body.size(); ++n) {
        EXPECT_FALSE(commit_codec::decode(std::string_view(body).substr(0, n)).is_ok()) << n;
    }
    EXPECT_FALSE(commit_codec::decode(body + "x").is_ok());
    // Trailing bytes inside the checksummed part are refused too.
    std::string inner = body.substr(0, body.size() - 8) + "junk";
    put_u64(inner, checksum64(inner));
    auto decoded = commit_codec::decode(inner);
    ASSERT_FALSE(decoded.is_ok());
    EXPECT_NE(decoded.status().message().find("trailing"), std::string::npos);
}

// Rule: lengths and counts past the limits are refused even with a valid checksum, before any
// allocation sized by them.
TEST(CommitCodecTest, BoundsAreCheckedWithValidChecksum) {
    auto body = commit_codec::encode(sample()).value();
    std::string huge_count = body;
    store_u32(huge_count.data() + 8, commit_codec::kMaxRecords + 1);
    EXPECT_FALSE(commit_codec::decode(reseal(huge_count)).is_ok());
    std::string big_count = body;
    store_u32(big_count.data() + 8, 50'000);  // within the cap, but the body cannot hold them
    auto refused = commit_codec::decode(reseal(big_count));
    ASSERT_FALSE(refused.is_ok());
    std::string zero = body;
    store_u32(zero.data() + 8, 0);
    EXPECT_FALSE(commit_codec::decode(reseal(zero)).is_ok());
    std::string long_key = body;
    store_u32(long_key.data() + commit_codec::kHeaderBytes, 0xffffffffu);
    EXPECT_FALSE(commit_codec::decode(reseal(long_key)).is_ok());
    std::string version = body;
    version[4] = 2;
    EXPECT_FALSE(commit_codec::decode(reseal(version)).is_ok());
}

// Rule: an empty batch is never encoded.
TEST(CommitCodecTest, EmptyBatchIsNotEncoded) {
    EXPECT_EQ(commit_codec::encode({}).code(), Errc::invalid_argument);
}

}  // namespace
}  // namespace narad::wal
