#include "auth/password.h"

#include <sodium.h>

#include <array>

#include "auth/sodium.h"
#include "base/assert.h"

namespace narad::auth {

void init_sodium() {
    static const bool ready = sodium_init() >= 0;
    NARAD_ASSERT(ready, "libsodium failed to initialise");
}

Result<std::string> hash_password(std::string_view password, HashCost cost) {
    init_sodium();
    unsigned long long ops = cost == HashCost::interactive ? crypto_pwhash_OPSLIMIT_INTERACTIVE
                                                           : crypto_pwhash_OPSLIMIT_MIN;
    size_t memory = cost == HashCost::interactive ? crypto_pwhash_MEMLIMIT_INTERACTIVE
                                                  : crypto_pwhash_MEMLIMIT_MIN;
    std::array<char, crypto_pwhash_STRBYTES> out{};
    if (crypto_pwhash_str_alg(out.data(), password.data(), password.size(), ops, memory,
                              crypto_pwhash_ALG_ARGON2ID13) != 0) {
        return Status(Errc::internal, "hashing the password ran out of memory");
    }
    return std::string(out.data());
}

bool verify_password(std::string_view hash, std::string_view password) {
    init_sodium();
    if (hash.empty() || hash.size() >= crypto_pwhash_STRBYTES) return false;
    std::array<char, crypto_pwhash_STRBYTES> stored{};
    hash.copy(stored.data(), hash.size());
    return crypto_pwhash_str_verify(stored.data(), password.data(), password.size()) == 0;
}

std::string generate_password() {
    init_sodium();
    std::array<unsigned char, 18> random{};
    randombytes_buf(random.data(), random.size());
    std::array<char, 32> text{};
    sodium_bin2base64(text.data(), text.size(), random.data(), random.size(),
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    return std::string(text.data());
}

}  // namespace narad::auth
