#include "base/utf8.h"

#include <gtest/gtest.h>

namespace narad {
namespace {

// Rule: UTF-8 validation rejects overlongs, surrogates, code points past U+10FFFF and truncated
// sequences.
TEST(Utf8Test, ValidationRejectsWhatGoRejects) {
    EXPECT_TRUE(is_valid_utf8("plain ascii"));
    EXPECT_TRUE(is_valid_utf8("\xf0\x9f\x98\x80"));
    EXPECT_TRUE(is_valid_utf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF
    EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));
    EXPECT_FALSE(is_valid_utf8("\xe0\x80\xaf"));
    EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));
    EXPECT_FALSE(is_valid_utf8("\xe2\x82"));
    EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));
    EXPECT_FALSE(is_valid_utf8("\xf5\x80\x80\x80"));
}

// Rule: a valid sequence decodes to its code point and length; an invalid byte is one byte of
// RuneError, so a decoder walking the text never skips a valid sequence after it.
TEST(Utf8Test, DecodeTakesOneByteOfAnInvalidSequence) {
    std::string text = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    std::vector<int32_t> runes;
    for (size_t i = 0; i < text.size();) {
        DecodedRune decoded = decode_rune(text, i);
        runes.push_back(decoded.rune);
        i += decoded.length;
    }
    EXPECT_EQ(runes, (std::vector<int32_t>{'a', 0xE9, 0x20AC, 0x1F600}));

    DecodedRune cut = decode_rune(
        "\xe2\x82"
        "a",
        0);
    EXPECT_EQ(cut.rune, DecodedRune::kInvalid);
    EXPECT_EQ(cut.length, 1u);
    EXPECT_EQ(utf8_sequence_length("\xe2\x82"
                                   "a",
                                   0),
              0u);
    EXPECT_EQ(decode_rune("\xe2\x82"
                          "a",
                          2)
                  .rune,
              'a');
}

// Rule: encoding a code point and decoding it again gives it back, at every length boundary.
TEST(Utf8Test, EncodeRoundTripsAtEveryLengthBoundary) {
    for (uint32_t rune : {0x0u, 0x7Fu, 0x80u, 0x7FFu, 0x800u, 0xFFFFu, 0x10000u, 0x10FFFFu}) {
        std::string encoded;
        append_utf8(encoded, rune);
        DecodedRune decoded = decode_rune(encoded, 0);
        EXPECT_EQ(decoded.rune, static_cast<int32_t>(rune)) << std::hex << rune;
        EXPECT_EQ(decoded.length, encoded.size()) << std::hex << rune;
    }
}

}  // namespace
}  // namespace narad
