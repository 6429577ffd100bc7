// Percent-encoding for URL components, shared by net (url_encode) and wal (the internal commit
// target) so every node builds and reads peer URLs the same way; and the host:port addresses of
// the configuration. Pure functions, any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"

namespace narad {

// Escapes every byte but RFC 3986's unreserved characters (ASCII letters and digits, '-', '.',
// '_', '~') as %XX with upper-case hex, so the result is safe both in a path segment and in a
// query value. The test is on ASCII, not the C locale, so no locale can widen the kept set.
std::string percent_encode(std::string_view value);

// "host:port", "[v6]:port" or ":port" (any address) into host (brackets removed, maybe empty) and
// port; invalid_argument naming the address when there is no colon or no port in 0..65535.
Result<std::pair<std::string, uint16_t>> split_host_port(std::string_view address);

// Whether `host` is an IPv4 or IPv6 address (without brackets) rather than a name to resolve.
bool is_ip_address(std::string_view host);

}  // namespace narad
