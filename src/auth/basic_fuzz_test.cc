// The Basic credentials parser against hostile headers: random bytes, valid headers with bytes
// flipped, cut or padded, and every user:password pair it must read back. It never crashes, reads
// nothing past the header, and what it accepts re-encodes to the header it came from.
#include <gtest/gtest.h>
#include <sodium.h>

#include <cctype>
#include <random>

#include "auth/authenticator.h"

namespace narad::auth {
namespace {

std::string encode(std::string_view plain) {
    std::string out(sodium_base64_ENCODED_LEN(plain.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
    sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(plain.data()),
                      plain.size(), sodium_base64_VARIANT_ORIGINAL);
    out.resize(out.find('\0'));
    return out;
}

std::string random_bytes(std::mt19937& random, size_t size) {
    std::string bytes(size, '\0');
    for (char& c : bytes) c = static_cast<char>(random());
    return bytes;
}

// Rule: any user without ':' and any password (also empty, also with ':' or NUL) read back as sent.
TEST(BasicFuzzTest, EveryPairReadsBack) {
    std::mt19937 random(20261203);
    for (int i = 0; i < 20'000; ++i) {
        std::string user = random_bytes(random, random() % 70);
        std::erase(user, ':');
        std::string password = random_bytes(random, random() % 100);
        auto parsed = parse_basic("Basic " + encode(user + ":" + password));
        ASSERT_TRUE(parsed) << i;
        EXPECT_EQ(parsed->user, user);
        EXPECT_EQ(parsed->password, password);
    }
}

// Rule: hostile headers never crash the parser, and whatever it accepts is standard base64 (the
// alphabet, then at most two '=') of exactly what it returns: it read the whole header and
// nothing else. As Go's decoder, it does not insist that the unused bits of the last character
// are zero, so only that character may differ from the canonical encoding.
TEST(BasicFuzzTest, HostileHeadersAreRefusedOrReadExactly) {
    std::mt19937 random(7);
    const std::string valid = "Basic " + encode("alice:wonder:land");
    size_t accepted = 0;
    for (int i = 0; i < 50'000; ++i) {
        std::string header;
        switch (random() % 5) {
            case 0:
                header = random_bytes(random, random() % 200);
                break;
            case 1:
                header = valid;
                for (int k = 0, n = 1 + static_cast<int>(random() % 4); k < n; ++k) {
                    header[random() % header.size()] = static_cast<char>(random());
                }
                break;
            case 2:
                header = valid.substr(0, random() % (valid.size() + 1));
                break;
            case 3:
                header = valid + std::string(random() % 5, "=A \t\0"[random() % 5]);
                break;
            default:
                header = "bAsIc " + random_bytes(random, random() % 64);
                break;
        }
        auto parsed = parse_basic(header);
        if (!parsed) continue;
        ++accepted;
        std::string plain = parsed->user + ":" + parsed->password;
        std::string part = header.substr(6);
        std::string canonical = encode(plain);
        ASSERT_EQ(part.size(), canonical.size()) << part;
        size_t data = part.find_last_not_of('=');
        ASSERT_NE(data, std::string::npos);
        EXPECT_LE(part.size() - data - 1, 2u) << part;
        for (size_t k = 0; k < part.size(); ++k) {
            char c = part[k];
            bool alphabet = std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/';
            EXPECT_TRUE(k > data ? c == '=' : alphabet && static_cast<unsigned char>(c) < 0x80)
                << "accepted a byte outside base64 at " << k << ": " << part;
            if (k != data) {
                EXPECT_EQ(c, canonical[k]) << "read something else than sent: " << part;
            }
        }
        EXPECT_EQ(parsed->user.find(':'), std::string::npos);
    }
    EXPECT_GT(accepted, 0u) << "the generator never produced a valid header";
}

}  // namespace
}  // namespace narad::auth
