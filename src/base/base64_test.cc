#include "base/base64.h"

#include <gtest/gtest.h>

namespace narad {
namespace {

// Rule: base64 round-trips every byte and refuses malformed input.
TEST(Base64Test, RoundTripsEveryByteAndRefusesMalformedInput) {
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    for (size_t n = 0; n < 5; ++n) {
        std::string sample = all.substr(0, all.size() - n);
        EXPECT_EQ(base64_decode(base64_encode(sample)), sample);
    }
    EXPECT_EQ(base64_encode("hi"), "aGk=");
    // RFC 4648's test vectors.
    EXPECT_EQ(base64_encode(""), "");
    EXPECT_EQ(base64_encode("f"), "Zg==");
    EXPECT_EQ(base64_encode("fo"), "Zm8=");
    EXPECT_EQ(base64_encode("foo"), "Zm9v");
    EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
    // Non-zero bits under the padding are refused, as Go's strict decoder does.
    EXPECT_FALSE(base64_decode("aGl=").has_value());
    EXPECT_FALSE(base64_decode("aH==").has_value());
    EXPECT_FALSE(base64_decode("aGk").has_value());
    EXPECT_FALSE(base64_decode("a=Gk").has_value());
    EXPECT_FALSE(base64_decode("aG!=").has_value());
    // Nothing is skipped: a line break or a trailing character makes the text malformed.
    EXPECT_FALSE(base64_decode("aGk=\n").has_value());
    EXPECT_FALSE(base64_decode("aG\nk=").has_value());
    EXPECT_FALSE(base64_decode("aGk=aGk=").has_value());
    EXPECT_FALSE(base64_decode("aGk= ").has_value());
    // No byte outside ASCII stands for a character of the alphabet.
    for (int byte = 0x80; byte <= 0xFF; ++byte) {
        std::string text = "aGk/";
        text[3] = static_cast<char>(byte);
        EXPECT_FALSE(base64_decode(text).has_value()) << "byte " << byte;
    }
}

}  // namespace
}  // namespace narad
