// libsodium's one-time initialisation, for this module's files only. Thread-safe.
#pragma once

namespace narad::auth {

// Initialises libsodium once per process (sodium_init); aborts if it cannot.
void init_sodium();

}  // namespace narad::auth
