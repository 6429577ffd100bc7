// Building responses: JSON bodies, Narad's `{"error":"..."}` errors (the only place an error code
// of base/errc.h becomes an HTTP status), and empty 202/204 answers (pure functions); and
// answer_on_pool, the one way a handler hands blocking work to a pool.
#pragma once

#include <string>

#include "base/status.h"
#include "base/thread_pool.h"
#include "net/http.h"

namespace narad::api {

// The `{"error":"..."}\n` body every API error carries.
std::string error_body(std::string_view message);

// The HTTP status an error of `code` is answered with (base/errc.h's table).
int http_status(Errc code);

net::HttpResponse json_response(int status, std::string body);
// An error answered with its code's status and `{"error":"<message>"}`.
net::HttpResponse error_response(const Status& status);
net::HttpResponse error_response(Errc code, std::string_view message);
// An error whose body says more than its message (a refusal's reasons): `body` goes as it is,
// with the code's status.
net::HttpResponse error_json_response(Errc code, std::string body);
// The answer to an error from a domain service, as Narad maps its broker errors: a code naming a
// condition the client can act on keeps its status and message; a metastore or peer that did not
// answer (in time), or an unknown outcome, is 503 "control plane temporarily unavailable: ..."
// (retryable); anything else (an I/O error, a corrupt file, a bug) is logged and answered 500
// "<operation> failed", as Narad does.
net::HttpResponse domain_error_response(const Status& status, std::string_view operation);
net::HttpResponse empty_response(int status);
net::HttpResponse text_response(int status, std::string body);

// Runs `work` on `pool` and answers with the response it returns: 503 "server busy" when the pool
// is saturated. Work that throws is contained there: the exception is logged and the request gets
// 502 when a peer's reply could not be decoded (a JSON type or parse error), else 503; the node
// stays up.
void answer_on_pool(ThreadPool& pool, net::Responder respond,
                    std::function<net::HttpResponse()> work);

}  // namespace narad::api
