#include "base/url.h"

namespace narad {
namespace {

bool is_unreserved(char c) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    return alnum || c == '-' || c == '.' || c == '_' || c == '~';
}

}  // namespace

std::string percent_encode(std::string_view value) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        if (is_unreserved(c)) {
            out.push_back(c);
            continue;
        }
        auto u = static_cast<unsigned char>(c);
        out.push_back('%');
        out.push_back(kHex[u >> 4]);
        out.push_back(kHex[u & 0xF]);
    }
    return out;
}

}  // namespace narad
