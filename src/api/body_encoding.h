// Request bodies sent with a Content-Encoding (the batch produce route): zstd and gzip are
// decoded, stopping at a limit so a small compressed body cannot expand past what a plain body
// may be (a compression bomb costs no more than a body at the cap). Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace narad::api {

// `encoding` as the header gives it ("" or "identity" for none). Errc::unsupported_media_type for
// another encoding, payload_too_large past `limit` decoded bytes, invalid_argument for a body
// that does not decode (with Narad's "invalid json" prefix: to a client it is an unreadable body).
Result<std::string> decode_body(std::string_view encoding, std::string body, uint64_t limit);

}  // namespace narad::api
