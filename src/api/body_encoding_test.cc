#include "api/body_encoding.h"

#include <gtest/gtest.h>

#include "api/compress_test_support.h"

namespace narad::api {
namespace {

using testing::gzip_of;
using testing::zstd_of;

constexpr uint64_t kLimit = 16ull << 20;

// Rule: zstd and gzip bodies decode to what was compressed; no encoding passes the body through.
TEST(BodyEncodingTest, DecodesZstdAndGzip) {
    std::string plain = R"({"messages":[{"payload":{"k":"v"}}]})";
    EXPECT_EQ(decode_body("zstd", zstd_of(plain), kLimit).value(), plain);
    EXPECT_EQ(decode_body("gzip", gzip_of(plain), kLimit).value(), plain);
    EXPECT_EQ(decode_body("", plain, kLimit).value(), plain);
    EXPECT_EQ(decode_body("identity", plain, kLimit).value(), plain);
    // Two zstd frames back to back are one body.
    EXPECT_EQ(decode_body("zstd", zstd_of("ab") + zstd_of("cd"), kLimit).value(), "abcd");
}

// Rule: another encoding is 415; a body that does not decode is a 400 "invalid json".
TEST(BodyEncodingTest, RefusesUnknownAndCorruptBodies) {
    EXPECT_EQ(decode_body("br", "x", kLimit).code(), Errc::unsupported_media_type);
    for (const char* encoding : {"zstd", "gzip"}) {
        auto garbage = decode_body(encoding, "not compressed at all", kLimit);
        EXPECT_EQ(garbage.code(), Errc::invalid_argument) << encoding;
        EXPECT_TRUE(garbage.status().message().starts_with("invalid json")) << encoding;
        EXPECT_EQ(decode_body(encoding, "", kLimit).code(), Errc::invalid_argument) << encoding;
    }
    std::string cut = zstd_of(std::string(100'000, 'x') + "tail");
    EXPECT_EQ(decode_body("zstd", cut.substr(0, cut.size() - 3), kLimit).code(),
              Errc::invalid_argument);
    std::string gz = gzip_of(std::string(100'000, 'x'));
    EXPECT_EQ(decode_body("gzip", gz.substr(0, gz.size() - 6), kLimit).code(),
              Errc::invalid_argument);
}

// Rule: a compression bomb stops at the limit with 413, whichever frame carries the bulk.
TEST(BodyEncodingTest, StopsAtTheLimit) {
    std::string bomb(64ull << 20, '\0');
    for (const char* encoding : {"zstd", "gzip"}) {
        std::string body = std::string(encoding) == "zstd" ? zstd_of(bomb) : gzip_of(bomb);
        ASSERT_LT(body.size(), 1u << 20);
        EXPECT_EQ(decode_body(encoding, body, kLimit).code(), Errc::payload_too_large) << encoding;
    }
    // A tiny first frame cannot carry a large second one past the limit.
    std::string frames = zstd_of("") + zstd_of(std::string(kLimit + 1, 'p'));
    EXPECT_EQ(decode_body("zstd", frames, kLimit).code(), Errc::payload_too_large);
    EXPECT_EQ(decode_body("zstd", zstd_of(std::string(kLimit, 'p')), kLimit).value().size(),
              kLimit);
}

}  // namespace
}  // namespace narad::api
