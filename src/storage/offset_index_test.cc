#include "storage/offset_index.h"

#include <gtest/gtest.h>

namespace narad::storage {
namespace {

// Rule: an index round-trips when it describes the expected segment.
TEST(OffsetIndexTest, RoundTrips) {
    std::vector<uint32_t> positions = {0, 73, 73, 73, 200};
    std::string bytes = encode_index(Offset(10), 300, positions);
    auto decoded = decode_index(bytes, Offset(10), 300, 5);
    ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
    EXPECT_EQ(*decoded, positions);
}

// Rule: a short, damaged or stale index is refused (so recovery rebuilds it).
TEST(OffsetIndexTest, ShortDamagedOrStaleIndexIsRefused) {
    std::vector<uint32_t> positions = {0, 73, 146};
    std::string bytes = encode_index(Offset(10), 300, positions);
    EXPECT_EQ(decode_index(bytes.substr(0, bytes.size() - 1), Offset(10), 300, 3).code(),
              Errc::corrupt);
    EXPECT_EQ(decode_index(bytes.substr(0, 10), Offset(10), 300, 3).code(), Errc::corrupt);
    for (size_t i = 0; i < bytes.size(); ++i) {
        std::string damaged = bytes;
        damaged[i] = static_cast<char>(damaged[i] ^ 0x10);
        EXPECT_FALSE(decode_index(damaged, Offset(10), 300, 3).is_ok()) << "byte " << i;
    }
    EXPECT_FALSE(decode_index(bytes, Offset(11), 300, 3).is_ok());  // another segment
    EXPECT_FALSE(decode_index(bytes, Offset(10), 301, 3).is_ok());  // the segment changed
    EXPECT_FALSE(decode_index(bytes, Offset(10), 300, 4).is_ok());  // wrong offset count
}

}  // namespace
}  // namespace narad::storage
