// Authenticator: decides who a request is from its Basic credentials, as Narad's node does.
// - An unknown user is refused at once (no hash is checked).
// - Credentials verified before are recognised by a keyed digest of the password, held per user
//   while the stored hash is unchanged, so a client sending the same header pays the argon2id
//   cost once; a wrong password seen within the last minute is refused without hashing again.
// - Every password that must be hashed takes a token from the user's bucket (5, one more every
//   12 s; a success gives it back): after 5 wrong passwords a user gets one attempt per 12 s and
//   is answered `throttled` meanwhile. A user with recent failures also needs a token from a
//   node-wide budget (32, one more every 250 ms), so guessing across many names is bounded too.
// - Hashes are checked on a pool of `max_concurrent` threads, never on the caller's thread; a
//   full queue answers `unavailable`.
// - The throttle is decided first: a throttled name is refused even with a password verified
//   before, so a guesser learns nothing from it. A clean attempt that fails also spends from the
//   node-wide budget if anything is left in it.
// Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/thread_pool.h"
#include "meta/meta_store.h"

namespace narad::auth {

struct AuthenticatorOptions {
    size_t max_concurrent = 4;
    size_t max_queued = 1024;
    uint32_t user_burst = 5;
    Millis user_refill{12'000};
    uint32_t node_burst = 32;
    Millis node_refill{250};
    Millis negative_ttl{60'000};
    size_t negative_per_user = 16;
    size_t max_cached_users = 4096;
};

enum class AuthOutcome { ok, unauthorized, throttled, unavailable };

struct AuthResult {
    AuthOutcome outcome = AuthOutcome::unauthorized;
    std::string user;  // ok: who
};

// The user and password of an `Authorization: Basic ...` value (scheme case-insensitive, standard
// base64 with padding, split at the first ':'); nullopt when it is not one.
struct BasicCredentials {
    std::string user;
    std::string password;
};
std::optional<BasicCredentials> parse_basic(std::string_view authorization);

class Authenticator {
  public:
    Authenticator(const meta::MetaStore& store, Clock& clock, AuthenticatorOptions options = {});
    ~Authenticator();  // stop()

    // Calls `done` exactly once: on this thread when no hash needs checking, else on the pool
    // (with `unavailable` when the pool is full or stopping).
    void authenticate(std::optional<std::string_view> authorization,
                      std::function<void(AuthResult)> done);
    // The same decision for a user and password given apart (the proof of a current password
    // when a user changes its own): the same throttle, cache and pool.
    void check(const std::string& user, std::string password, std::function<void(AuthResult)> done);

    // What the head's `authorization` alone decides, with no hash checked and nothing spent from
    // a bucket (the server asks before it reads a body): `unauthorized` for no Basic credentials,
    // an unknown user or a wrong password seen lately; `throttled` for a throttled user; `ok`
    // with the user for exactly the credentials verified before. nullopt: the password must be
    // checked (authenticate()).
    std::optional<AuthResult> screen(std::optional<std::string_view> authorization) const;

    // Queued checks answer `unavailable` without hashing; the pool's threads are joined. Call
    // before what the callbacks use is destroyed.
    void stop();

  private:
    struct State;
    std::shared_ptr<State> state_;
    std::unique_ptr<ThreadPool> pool_;
};

}  // namespace narad::auth
