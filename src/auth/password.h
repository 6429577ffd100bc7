// Password hashing for stored users: libsodium's argon2id (crypto_pwhash_str), whose output
// string carries its own salt and cost parameters, so a hash made with other costs still
// verifies. Hashing and verifying cost tens of milliseconds and tens of MiB on purpose: call them
// off the HTTP threads (Authenticator bounds how many run at once). Thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace narad::auth {

// The cost of a new hash. `interactive` is libsodium's recommendation for logins; `minimal` is
// its floor, for tests that create many users.
enum class HashCost { interactive, minimal };

Result<std::string> hash_password(std::string_view password, HashCost cost = HashCost::interactive);
// True when `password` is the one `hash` was made from; false for a wrong password or a hash
// that is not an argon2id string.
bool verify_password(std::string_view hash, std::string_view password);

// A random password for the seeded root user: 24 characters of base64url (144 bits).
std::string generate_password();

}  // namespace narad::auth
