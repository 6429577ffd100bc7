#include "base/base64.h"

#include <sodium.h>

namespace narad {

std::string base64_encode(std::string_view bytes) {
    constexpr int kVariant = sodium_base64_VARIANT_ORIGINAL;
    // The encoded length plus the terminating NUL libsodium writes.
    std::string out(sodium_base64_encoded_len(bytes.size(), kVariant), '\0');
    sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()),
                      bytes.size(), kVariant);
    out.pop_back();
    return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
    // libsodium's constant-time character test reads a byte above 0x7F, sign-extended, as one of
    // the alphabet's ('\xd6' passes for '/'): only ASCII reaches it.
    for (char c : text) {
        if (static_cast<unsigned char>(c) >= 0x80) return std::nullopt;
    }
    std::string out(text.size() / 4 * 3 + 3, '\0');
    size_t length = 0;
    const char* end = nullptr;
    int failed = sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(),
                                   text.data(), text.size(), /*ignore=*/nullptr, &length, &end,
                                   sodium_base64_VARIANT_ORIGINAL);
    // libsodium stops at the first character it cannot take and reports success for what came
    // before it: only a decode that used the whole text is one.
    if (failed != 0 || end != text.data() + text.size()) return std::nullopt;
    out.resize(length);
    return out;
}

}  // namespace narad
