#include "net/http_wire.h"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <ctime>

namespace narad::net::wire {
namespace {

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
        char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
        if (x != y) return false;
    }
    return true;
}

bool is_token_char(char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    std::string_view specials = "!#$%&'*+-.^_`|~";
    return specials.find(c) != std::string_view::npos;
}

void append_number(std::string& out, uint64_t value) {
    char digits[24];
    auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), value);
    (void)ec;  // 24 characters always hold a uint64_t
    out.append(digits, end);
}

// The Date header changes once a second; each thread formats it at most that often.
std::string_view http_date() {
    struct Cache {
        std::time_t second = -1;
        char text[32] = {};
        size_t size = 0;
    };
    thread_local Cache cache;
    std::time_t now = std::time(nullptr);
    if (now != cache.second) {
        static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
        static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
        std::tm tm{};
        gmtime_r(&now, &tm);
        int n = std::snprintf(cache.text, sizeof(cache.text), "%s, %02d %s %04d %02d:%02d:%02d GMT",
                              kDays[tm.tm_wday % 7], tm.tm_mday, kMonths[tm.tm_mon % 12],
                              tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
        cache.size = n > 0 ? static_cast<size_t>(n) : 0;
        cache.second = now;
    }
    return std::string_view(cache.text, cache.size);
}

// Headers the server writes itself; a handler's copy would break framing or contradict ours.
bool server_owned(std::string_view name) {
    return iequals(name, "content-length") || iequals(name, "transfer-encoding") ||
           iequals(name, "connection") || iequals(name, "content-type") || iequals(name, "date");
}

void append_header(std::string& out, std::string_view name, std::string_view value) {
    out.append(name);
    out.append(": ");
    out.append(value);
    out.append("\r\n");
}

}  // namespace

std::string_view reason_phrase(int status) {
    switch (status) {
        case 100:
            return "Continue";
        case 101:
            return "Switching Protocols";
        case 200:
            return "OK";
        case 201:
            return "Created";
        case 202:
            return "Accepted";
        case 204:
            return "No Content";
        case 206:
            return "Partial Content";
        case 301:
            return "Moved Permanently";
        case 302:
            return "Found";
        case 303:
            return "See Other";
        case 304:
            return "Not Modified";
        case 307:
            return "Temporary Redirect";
        case 308:
            return "Permanent Redirect";
        case 400:
            return "Bad Request";
        case 401:
            return "Unauthorized";
        case 403:
            return "Forbidden";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 406:
            return "Not Acceptable";
        case 408:
            return "Request Timeout";
        case 409:
            return "Conflict";
        case 410:
            return "Gone";
        case 411:
            return "Length Required";
        case 412:
            return "Precondition Failed";
        case 413:
            return "Payload Too Large";
        case 414:
            return "URI Too Long";
        case 415:
            return "Unsupported Media Type";
        case 416:
            return "Range Not Satisfiable";
        case 421:
            return "Misdirected Request";
        case 422:
            return "Unprocessable Entity";
        case 425:
            return "Too Early";
        case 428:
            return "Precondition Required";
        case 429:
            return "Too Many Requests";
        case 431:
            return "Request Header Fields Too Large";
        case 500:
            return "Internal Server Error";
        case 501:
            return "Not Implemented";
        case 502:
            return "Bad Gateway";
        case 503:
            return "Service Unavailable";
        case 504:
            return "Gateway Timeout";
        case 505:
            return "HTTP Version Not Supported";
        case 507:
            return "Insufficient Storage";
        default:
            return "Unknown";
    }
}

bool status_has_body(int status) { return status >= 200 && status != 204 && status != 304; }

bool valid_header(std::string_view name, std::string_view value) {
    if (name.empty()) return false;
    for (char c : name) {
        if (!is_token_char(c)) return false;
    }
    for (char c : value) {
        if (c == '\r' || c == '\n' || c == '\0') return false;
    }
    return true;
}

void append_response_head(std::string& out, const HttpResponse& response,
                          const ResponseHead& head) {
    // A handler's status outside 200..999 cannot be a final response.
    int status = response.status >= 200 && response.status <= 999 ? response.status : 500;
    out.append(head.version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
    append_number(out, static_cast<uint64_t>(status));
    out.push_back(' ');
    out.append(reason_phrase(status));
    out.append("\r\n");
    if (status_has_body(status)) {
        if (!response.content_type.empty() && valid_header("content-type", response.content_type)) {
            append_header(out, "Content-Type", response.content_type);
        }
        out.append("Content-Length: ");
        append_number(out, response.body.size());
        out.append("\r\n");
    }
    append_header(out, "Date", http_date());
    if (head.version == 10) {
        if (head.keep_alive) append_header(out, "Connection", "keep-alive");
    } else if (!head.keep_alive) {
        append_header(out, "Connection", "close");
    }
    for (const auto& [name, value] : response.headers) {
        if (!server_owned(name) && valid_header(name, value)) append_header(out, name, value);
    }
    out.append("\r\n");
}

void append_request_head(std::string& out, const RequestHead& head) {
    out.append(head.method);
    out.push_back(' ');
    out.append(head.target.empty() ? std::string_view("/") : head.target);
    out.append(" HTTP/1.1\r\n");
    append_header(out, "Host", head.host);
    if (!head.authorization.empty()) append_header(out, "Authorization", head.authorization);
    if (!head.client.empty()) append_header(out, "X-Narad-Client", head.client);
    bool carries_body = head.body_bytes > 0 || head.method == "POST" || head.method == "PUT" ||
                        head.method == "PATCH";
    if (carries_body) {
        if (!head.content_type.empty()) append_header(out, "Content-Type", head.content_type);
        out.append("Content-Length: ");
        append_number(out, head.body_bytes);
        out.append("\r\n");
    }
    if (head.headers != nullptr) {
        for (const auto& [name, value] : *head.headers) {
            bool owned = iequals(name, "content-length") || iequals(name, "transfer-encoding") ||
                         iequals(name, "host") || (carries_body && iequals(name, "content-type"));
            if (!owned && valid_header(name, value)) append_header(out, name, value);
        }
    }
    out.append("\r\n");
}

}  // namespace narad::net::wire
