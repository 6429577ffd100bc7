#include "base/url.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

namespace narad {
namespace {

// Rule: RFC 3986 unreserved characters (ASCII letters, digits, - . _ ~) pass through unchanged.
TEST(PercentEncodeTest, KeepsUnreservedCharacters) {
    std::string unreserved = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~";
    EXPECT_EQ(percent_encode(unreserved), unreserved);
    EXPECT_EQ(percent_encode(""), "");
}

// Rule: every other byte, reserved, control or non-ASCII, becomes %XX with upper-case hex.
TEST(PercentEncodeTest, EscapesEveryOtherByteAsUpperCaseHex) {
    EXPECT_EQ(percent_encode("a b+c/d&e=f%?#"), "a%20b%2Bc%2Fd%26e%3Df%25%3F%23");
    EXPECT_EQ(percent_encode(std::string("\0\x1f\x7f", 3)), "%00%1F%7F");
    EXPECT_EQ(percent_encode("\xc3\xa9\xff"), "%C3%A9%FF");  // "é" in UTF-8, then a stray byte
    for (int byte = 0; byte < 256; ++byte) {
        char c = static_cast<char>(byte);
        bool unreserved = std::isalnum(byte) || c == '-' || c == '.' || c == '_' || c == '~';
        EXPECT_EQ(percent_encode(std::string(1, c)).size(), unreserved ? 1u : 3u) << byte;
    }
}

// Rule: IPv4 and IPv6 addresses are told apart from host names, and nothing else passes (a
// bracketed address, a port, an empty string).
TEST(IsIpAddressTest, TellsAddressesFromNames) {
    EXPECT_TRUE(is_ip_address("127.0.0.1"));
    EXPECT_TRUE(is_ip_address("10.1.2.3"));
    EXPECT_TRUE(is_ip_address("::1"));
    EXPECT_TRUE(is_ip_address("fe80::1"));
    EXPECT_FALSE(is_ip_address("localhost"));
    EXPECT_FALSE(is_ip_address("node-1.example.com"));
    EXPECT_FALSE(is_ip_address("[::1]"));
    EXPECT_FALSE(is_ip_address("127.0.0.1:80"));
    EXPECT_FALSE(is_ip_address(""));
}

}  // namespace
}  // namespace narad
