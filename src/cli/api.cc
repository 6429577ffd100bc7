#include "cli/api.h"

#include <arpa/inet.h>

#include <cctype>

#include "cli/json_text.h"
#include "cli/text.h"

namespace narad::cli {
namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
    return text;
}

// An IPv4 address in 127.0.0.0/8 or the IPv6 ::1, written as a literal.
bool is_loopback_literal(const std::string& host) {
    in_addr v4{};
    if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
    in6_addr v6{};
    return ::inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

}  // namespace

std::string format_error_body(std::string_view body) {
    const std::string_view trimmed = trim(body);
    if (trimmed.empty()) return "<empty body>";
    if (auto members = object_members(body)) {
        if (auto raw = find_member(*members, "error")) {
            if (auto text = decode_json_string(*raw); text && !text->empty()) return *text;
        }
    }
    return std::string(trimmed);
}

Errc errc_for_http_status(int code) {
    switch (code) {
        case 400:
            return Errc::invalid_argument;
        case 401:
            return Errc::unauthorized;
        case 403:
            return Errc::forbidden;
        case 404:
            return Errc::not_found;
        case 405:
            return Errc::method_not_allowed;
        case 409:
            return Errc::conflict;
        case 410:
            return Errc::gone;
        case 413:
            return Errc::payload_too_large;
        case 421:
            return Errc::not_owner;
        case 429:
            return Errc::too_many_requests;
        case 502:
            return Errc::peer_error;
        case 503:
            return Errc::unavailable;
        case 504:
            return Errc::timeout;
        default:
            return code >= 500 ? Errc::internal : Errc::invalid_argument;
    }
}

Result<net::HttpResponse> send(Api& api, std::string_view method, std::string_view target,
                               std::string_view body, std::string_view content_type) {
    auto response = api.call(method, target, body, content_type);
    if (!response.is_ok()) return response.status();
    if (response->status >= 400) {
        return Status(
            errc_for_http_status(response->status),
            "http " + std::to_string(response->status) + ": " + format_error_body(response->body));
    }
    return response;
}

bool is_http_error(const Status& status, int code) {
    const std::string prefix = "http " + std::to_string(code) + ":";
    return !status.is_ok() && status.message().starts_with(prefix);
}

Result<ServerAddress> parse_server_url(std::string_view server) {
    std::string_view rest = server;
    bool https = false;
    while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
    const auto bad = [&](std::string_view why) {
        return Status(Errc::invalid_argument,
                      "invalid server URL \"" + std::string(server) + "\": " + std::string(why));
    };
    if (const size_t scheme_end = rest.find("://"); scheme_end != std::string_view::npos) {
        std::string scheme(rest.substr(0, scheme_end));  // case-insensitive, as Go's url.Parse
        for (char& c : scheme) c = char(std::tolower(static_cast<unsigned char>(c)));
        if (scheme != "http" && scheme != "https") return bad("unsupported protocol scheme");
        https = scheme == "https";
        rest.remove_prefix(scheme_end + 3);
    }
    ServerAddress address;
    address.https = https;
    if (https) address.port = 443;
    const size_t slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    if (slash != std::string_view::npos) address.base_path = std::string(rest.substr(slash));
    if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
        return bad("put credentials in --user/--password, not in the URL");
    }
    std::string_view port_text;
    if (!authority.empty() && authority.front() == '[') {
        const size_t close = authority.find(']');
        if (close == std::string_view::npos) return bad("missing ']' in host");
        address.host = std::string(authority.substr(1, close - 1));
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return bad("garbage after host");
            port_text = after.substr(1);
        }
    } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
        address.host = std::string(authority.substr(0, colon));
        port_text = authority.substr(colon + 1);
    } else {
        address.host = std::string(authority);
    }
    if (address.host.empty()) return bad("missing host");
    if (!port_text.empty()) {
        uint32_t port = 0;
        for (char c : port_text) {
            if (c < '0' || c > '9') return bad("invalid port");
            port = port * 10 + uint32_t(c - '0');
            if (port > 65535) return bad("invalid port");
        }
        if (port == 0) return bad("invalid port");
        address.port = uint16_t(port);
    }
    return address;
}

std::string plaintext_credentials_warning(const CliContext& connection) {
    if (connection.user.empty() && connection.password.empty()) return "";
    // A URL this client refuses sends nothing.
    auto address = parse_server_url(connection.server);
    if (!address.is_ok() || address->https || address->host == "localhost" ||
        is_loopback_literal(address->host)) {
        return "";
    }
    return "warning: sending credentials for " + go_quote(connection.user) +
           " over plain http to " + address->host + "; use an https:// server URL\n";
}

}  // namespace narad::cli
