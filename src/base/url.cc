#include "base/url.h"

#include <arpa/inet.h>

#include <cstdlib>

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

Result<std::pair<std::string, uint16_t>> split_host_port(std::string_view address) {
    auto colon = address.rfind(':');
    if (colon == std::string_view::npos) {
        return Status(Errc::invalid_argument,
                      "address \"" + std::string(address) + "\" is not host:port");
    }
    std::string host(address.substr(0, colon));
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    std::string port_text(address.substr(colon + 1));
    char* end = nullptr;
    long port = std::strtol(port_text.c_str(), &end, 10);
    if (port_text.empty() || *end != '\0' || port < 0 || port > 65535) {
        return Status(Errc::invalid_argument,
                      "address \"" + std::string(address) + "\" has no valid port");
    }
    return std::make_pair(host, static_cast<uint16_t>(port));
}

bool is_ip_address(std::string_view host) {
    std::string text(host);  // inet_pton reads a NUL-terminated string
    in_addr v4{};
    in6_addr v6{};
    return inet_pton(AF_INET, text.c_str(), &v4) == 1 ||
           inet_pton(AF_INET6, text.c_str(), &v6) == 1;
}

}  // namespace narad
