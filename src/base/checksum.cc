#include "base/checksum.h"

#include <xxhash.h>

namespace narad {

uint64_t checksum64(const void* data, size_t size) { return XXH3_64bits(data, size); }

Checksummer::Checksummer() : state_(XXH3_createState()) {
    XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
}
Checksummer::~Checksummer() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }
void Checksummer::update(const void* data, size_t size) {
    XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), data, size);
}
uint64_t Checksummer::digest() const {
    return XXH3_64bits_digest(static_cast<XXH3_state_t*>(state_));
}

}  // namespace narad
