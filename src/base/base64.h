// Base64 with the standard alphabet and padding (RFC 4648), as Narad's API, the etcd gateway and
// HTTP Basic credentials use it; libsodium does the coding. Pure functions, any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace narad {

std::string base64_encode(std::string_view bytes);
// nullopt on anything but canonical base64: a character outside the alphabet (line breaks
// included), missing or misplaced padding, or non-zero bits under the padding (as Go's decoder).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace narad
