// The bytes of HTTP/1.1 message heads, written by hand: the server's responses and the clients'
// requests are simple and fixed in shape, and formatting them into a reused buffer is much cheaper
// than Beast's generic serializer on the hot path. Parsing stays with Beast (server:
// http_server.cc, clients: response_reader.cc). Private to net/. Pure functions, callable from any
// thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "net/http.h"

namespace narad::net::wire {

// "OK", "Not Found", ...; "Unknown" for a code without a registered phrase.
std::string_view reason_phrase(int status);
// False for 1xx, 204 and 304, which never carry a body (RFC 9110 §6.4.1).
bool status_has_body(int status);
// Whether a header may be written as given: a token name, and a value without CR, LF or NUL (a
// handler's header must never be able to inject a second header or end the head early).
bool valid_header(std::string_view name, std::string_view value);

struct ResponseHead {
    int version = 11;  // of the request: 10 or 11
    bool keep_alive = true;
    // For a HEAD request the head announces the body's length, but the body is not sent.
    bool head_request = false;
};

// Appends the status line and headers for `response`: Content-Type and Content-Length (neither
// for a status without a body), Date, Connection when it differs from the version's default,
// then the response's extra headers, minus those the server owns (framing, connection, date).
void append_response_head(std::string& out, const HttpResponse& response, const ResponseHead& head);

struct RequestHead {
    std::string_view method;
    std::string_view target;
    std::string_view host;           // "host:port"
    std::string_view authorization;  // the whole header value ("Basic ..."), or empty
    std::string_view content_type;
    size_t body_bytes = 0;
    const Headers* headers = nullptr;  // extra headers, or null
    std::string_view client;           // the X-Narad-Client value, or empty for none
};

// Appends an HTTP/1.1 request line and headers. Content-Length (and Content-Type) are sent when
// there is a body or the method usually carries one.
void append_request_head(std::string& out, const RequestHead& head);

}  // namespace narad::net::wire
