// ResponseReader: an incremental HTTP/1.1 response parser (Beast's, hidden behind this plain
// interface) that fills an HttpResponse in place. Both clients feed it the bytes they read; a
// connection keeps one reader and one HttpResponse and reuses them for every response, so a
// steady load run allocates nothing here once the buffers have grown. Private to net/. One
// instance per connection, used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "base/status.h"
#include "net/http.h"

namespace narad::net {

class ResponseReader {
  public:
    explicit ResponseReader(uint64_t body_limit_bytes);
    ~ResponseReader();
    ResponseReader(const ResponseReader&) = delete;
    ResponseReader& operator=(const ResponseReader&) = delete;

    // Starts reading a new response into `response` (cleared; its buffers are reused). For a
    // response to HEAD no body is expected whatever the head says.
    void start(HttpResponse& response, bool head_request);

    // Feeds received bytes and returns how many were consumed (the rest belongs to a later call,
    // after more bytes arrived). An error (malformed response, body over the limit) is final.
    // Interim (1xx) responses are skipped: done() means the final response is complete.
    size_t put(std::string_view bytes, Status& error);
    // The peer closed the connection: completes a response delimited by the close, else an error.
    Status put_eof();

    bool done() const;
    // Whether any byte of the response has been consumed.
    bool got_some() const;
    // Whether the connection may carry another request (valid once done()).
    bool keep_alive() const;

  private:
    class Parser;
    std::unique_ptr<Parser> parser_;
    uint64_t body_limit_bytes_;
};

}  // namespace narad::net
