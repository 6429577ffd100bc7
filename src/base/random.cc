#include "base/random.h"

#include <random>

namespace narad {

std::string random_hex(size_t bytes) {
    static thread_local std::mt19937_64 random{std::random_device{}()};
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes * 2);
    uint64_t word = 0;
    for (size_t i = 0; i < bytes; ++i) {
        if (i % 8 == 0) word = random();
        auto byte = static_cast<unsigned>(word & 0xff);
        word >>= 8;
        out += kDigits[byte >> 4];
        out += kDigits[byte & 0xf];
    }
    return out;
}

}  // namespace narad
