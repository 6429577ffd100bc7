// Random identifiers: hex strings from a per-thread generator seeded by the OS. Not for secrets
// (the cluster secret is configured, never generated here). Thread-safe.
#pragma once

#include <cstddef>
#include <string>

namespace narad {

// `bytes` random bytes as 2 * bytes lower-case hex characters.
std::string random_hex(size_t bytes);

}  // namespace narad
