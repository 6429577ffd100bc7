// Percent-encoding for URL components, shared by net (url_encode) and wal (the internal commit
// target) so every node builds and reads peer URLs the same way. Pure functions, any thread.
#pragma once

#include <string>
#include <string_view>

namespace narad {

// Escapes every byte but RFC 3986's unreserved characters (ASCII letters and digits, '-', '.',
// '_', '~') as %XX with upper-case hex, so the result is safe both in a path segment and in a
// query value. The test is on ASCII, not the C locale, so no locale can widen the kept set.
std::string percent_encode(std::string_view value);

}  // namespace narad
