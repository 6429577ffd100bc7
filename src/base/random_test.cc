#include "base/random.h"

#include <gtest/gtest.h>

namespace narad {
namespace {

// Rule: random_hex(n) is 2n lower-case hex characters, and two draws differ.
TEST(RandomHex, IsLowerCaseHexOfTwiceTheLengthAndVaries) {
    for (size_t bytes : {0u, 1u, 8u, 9u, 16u}) {
        std::string text = random_hex(bytes);
        EXPECT_EQ(text.size(), bytes * 2);
        EXPECT_EQ(text.find_first_not_of("0123456789abcdef"), std::string::npos) << text;
    }
    EXPECT_NE(random_hex(16), random_hex(16));
}

}  // namespace
}  // namespace narad
