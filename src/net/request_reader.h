// RequestReader: the server's incremental HTTP/1.1 request parser (Beast's, behind this plain
// interface), writing straight into an HttpRequest with lower-cased header names. It enforces
// the head and body limits as bytes arrive: a Content-Length over the body limit is refused as
// soon as the head is complete, before any of the body is read; and it stops once after the head
// (head_done) so the server can screen a request before reading its body. Private to net/. One
// instance per connection, used by one thread at a time; start() before each request.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "net/http.h"

namespace narad::net {

class RequestReader {
  public:
    RequestReader();
    ~RequestReader();
    RequestReader(const RequestReader&) = delete;
    RequestReader& operator=(const RequestReader&) = delete;

    struct Limits {
        uint64_t body_bytes = 0;
        uint32_t header_bytes = 0;
    };
    // Starts a new request, written into `request` (which must outlive the reading).
    void start(HttpRequest& request, Limits limits);

    enum class Outcome { need_more, head_done, done, body_too_large, header_too_large, malformed };
    // Parses as much of `bytes` as it can; `used` says how many were consumed (the rest must be
    // offered again, with more after it). head_done is returned once, when the head is complete
    // and the request has a body still to read: nothing of the body has been consumed then.
    // Anything but need_more, head_done and done is final.
    Outcome put(std::string_view bytes, size_t& used);

    // Once the head is done and before any of the body is read: lowers the body limit to
    // `bytes`. False when the request's Content-Length is already over it.
    bool limit_body(uint64_t bytes);

    bool header_done() const;
    // Whether the client waits for "100 Continue" before sending the body (valid once the head
    // is done).
    bool expects_continue() const;
    // Whether the connection may carry another request (valid once done).
    bool keep_alive() const;
    int version() const;  // 10 or 11

  private:
    class Parser;
    std::unique_ptr<Parser> parser_;
    bool head_reported_ = false;
};

}  // namespace narad::net
