// The single table of Narad's error codes. Each row names a code, the HTTP status the public API
// answers with, and a default text. Every module reports failures with these codes (through
// Status/Result); api/ is the only place that turns one into an HTTP response. Plain data, callable
// from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace narad {

// X(name, http_status, default_text)
#define NARAD_ERRC_TABLE(X)                                             \
    X(ok, 200, "ok")                                                    \
    X(invalid_argument, 400, "invalid argument")                        \
    X(unauthorized, 401, "authentication required")                     \
    X(forbidden, 403, "forbidden")                                      \
    X(not_found, 404, "not found")                                      \
    X(method_not_allowed, 405, "method not allowed")                    \
    X(already_exists, 409, "already exists")                            \
    X(conflict, 409, "conflict")                                        \
    X(gone, 410, "gone")                                                \
    X(payload_too_large, 413, "request body too large")                 \
    X(unsupported_media_type, 415, "unsupported media type")            \
    X(not_owner, 421, "this node does not own the requested partition") \
    X(frozen, 423, "partition frozen for a move")                       \
    X(too_many_requests, 429, "too many requests")                      \
    X(internal, 500, "internal error")                                  \
    X(io_error, 500, "i/o error")                                       \
    X(corrupt, 500, "corrupt data")                                     \
    X(peer_error, 502, "peer transport error")                          \
    X(unavailable, 503, "unavailable")                                  \
    X(shutting_down, 503, "shutting down")                              \
    X(unknown_outcome, 503, "outcome unknown")                          \
    X(not_implemented, 501, "not implemented")                          \
    X(timeout, 504, "timed out")                                        \
    X(no_space, 507, "no space left on device")

enum class Errc : uint8_t {
#define NARAD_ERRC_ENUM(name, http, text) name,
    NARAD_ERRC_TABLE(NARAD_ERRC_ENUM)
#undef NARAD_ERRC_ENUM
};

// The name of a code as written in the table ("not_found"), for logs and the "code" field of
// errors.
std::string_view errc_name(Errc code);
// The HTTP status the public API answers a code with.
int errc_http_status(Errc code);
// The table's default text for a code.
std::string_view errc_text(Errc code);
// Every code, in table order (for tests that walk the table).
std::span<const Errc> all_errcs();

}  // namespace narad
