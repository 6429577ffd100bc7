// Plain HTTP request and response types shared by the server (net/), the handlers (api/) and the
// clients (cli/, tests). They carry no Beast types, so most of the code base never includes Beast.
// Value types.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace narad::net {

using Headers = std::vector<std::pair<std::string, std::string>>;  // names lower-cased

// What a handler's screen() reserved for one request (a slot under a cap, bytes of a budget). The
// server releases it when the request is answered, or when the request ends unanswered.
class Admission {
  public:
    virtual ~Admission() = default;
    virtual void release() = 0;  // idempotent
    // Asks to hold `units` from now on instead (a batch counts as its size once read); false
    // refuses, and what was held stays held.
    virtual bool resize(uint64_t units) {
        (void)units;
        return true;
    }
};

// What a handler keeps about one connection while it stays open (the cluster port's proof of the
// secret, auth/cluster_proof.h). HttpServer makes one per connection and hands it to every
// request on it; a connection's requests are screened and handled one after another, so it needs
// no lock.
struct ConnectionState {
    std::string client_nonce;
    std::string server_nonce;
    bool authenticated = false;
};

struct HttpRequest {
    std::string method;  // "GET", "POST", ...
    std::string target;  // as received: path and query
    std::string path;    // percent-decoded path, without the query
    std::vector<std::pair<std::string, std::string>> query;  // decoded, in order, duplicates kept
    Headers headers;
    std::string body;
    std::string remote_address;
    // The user the request authenticated as (Router::set_gate); empty with security off.
    std::string user;
    std::shared_ptr<Admission> admission;  // set by HttpHandler::screen, if anything was reserved
    std::shared_ptr<ConnectionState> connection;  // set by HttpServer

    // The first value of a header (name lower-case), if present.
    std::optional<std::string_view> header(std::string_view name) const;
    // The first value of a query parameter, if present.
    std::optional<std::string_view> query_param(std::string_view name) const;
    // How many times a query parameter appears.
    size_t query_count(std::string_view name) const;
};

struct HttpResponse {
    int status = 200;
    std::string content_type = "application/json";
    std::string body;
    Headers headers;  // extra headers
};

// Sends the response for one request. Must be called exactly once, from any thread.
using Responder = std::function<void(HttpResponse)>;

class HttpHandler {
  public:
    virtual ~HttpHandler() = default;
    // Runs on a server thread; must not block on disk or on other nodes (hand such work to another
    // thread and call `respond` from there).
    virtual void handle(HttpRequest request, Responder respond) = 0;
    // Runs on a server thread as soon as the request line and headers are in, before any byte of
    // the body is read or buffered (`head.body` is empty; path, query, remote address and
    // connection are set). A response refuses the request: it is
    // sent and the connection closed, without reading the body. It may reserve capacity for the
    // request in `head.admission`. Must not block.
    virtual std::optional<HttpResponse> screen(HttpRequest& head) {
        (void)head;
        return std::nullopt;
    }
    // Runs right after screen(): the largest body this request may carry, or nullopt for the
    // server's `body_limit_bytes`; capped at its `body_limit_ceiling_bytes`. Must not block.
    virtual std::optional<uint64_t> body_limit(const HttpRequest& head) {
        (void)head;
        return std::nullopt;
    }
};

// Splits a target into path and decoded query parameters. Returns false on a malformed escape.
bool parse_target(std::string_view target, std::string& path,
                  std::vector<std::pair<std::string, std::string>>& query);
// Percent-encodes a string for use in a path segment or query value (RFC 3986 unreserved
// characters kept; base/url.h percent_encode, named here for net callers).
std::string url_encode(std::string_view value);

}  // namespace narad::net
