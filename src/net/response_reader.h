// ResponseReader: an incremental HTTP/1.1 response parser (Beast's, hidden behind this plain
// interface) that fills an HttpResponse in place. ClientConnection feeds it the bytes it reads; a
// connection keeps one reader and reuses it for every response (and the load client its
// HttpResponse too), so a steady load run allocates nothing here once the buffers have grown.
// Private to net/. One instance per connection, used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "base/status.h"
#include "net/http.h"

namespace narad::net {

class ResponseReader {
  public:
    ResponseReader();
    ~ResponseReader();
    ResponseReader(const ResponseReader&) = delete;
    ResponseReader& operator=(const ResponseReader&) = delete;

    // Starts reading a new response into `response` (cleared; its buffers are reused). For a
    // response to HEAD no body is expected whatever the head says. A body over
    // `body_limit_bytes` fails the response.
    void start(HttpResponse& response, bool head_request, uint64_t body_limit_bytes);

    // Feeds received bytes and returns how many were consumed (the rest belongs to a later call,
    // after more bytes arrived). An error (malformed response, body over the limit) is final.
    // Interim (1xx) responses are skipped: done() means the final response is complete.
    size_t put(std::string_view bytes, Status& error);
    // The peer closed the connection: completes a response delimited by the close, else an error.
    Status put_eof();

    bool done() const;
    // Whether the connection may carry another request (valid once done()).
    bool keep_alive() const;

  private:
    class Parser;
    std::unique_ptr<Parser> parser_;
};

}  // namespace narad::net
