#include "auth/authenticator.h"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <deque>
#include <vector>

#include "auth/password.h"
#include "auth/sodium.h"
#include "base/base64.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/mutex.h"

namespace narad::auth {

namespace {

using Digest = std::array<unsigned char, crypto_generichash_BYTES>;

// Narad's gauge: password checks waiting for a verifier or being checked now.
metrics::Gauge& verify_queued() {
    static metrics::Gauge& gauge =
        metrics::Registry::global()
            .gauge("narad_auth_verify_queued",
                   "Password checks waiting for a verification slot or running now.")
            .get();
    return gauge;
}

// A token bucket on the authenticator's clock.
struct Bucket {
    double tokens = 0;
    MonoTime refilled;

    void refill(MonoTime now, uint32_t burst, Millis every) {
        if (now > refilled) {
            double earned = std::chrono::duration<double>(now - refilled) /
                            std::chrono::duration<double>(every);
            tokens = std::min<double>(burst, tokens + earned);
        }
        refilled = now;
    }
};

struct Failure {
    Digest digest;
    MonoTime at;
};

struct UserEntry {
    std::string verified_hash;  // the stored hash `verified` was checked against
    std::optional<Digest> verified;
    std::deque<Failure> failures;  // wrong passwords, newest last
    Bucket bucket;
    bool bucket_started = false;
    MonoTime throttle_logged;  // the last "authentication throttled" line for this user
};

}  // namespace

std::optional<BasicCredentials> parse_basic(std::string_view authorization) {
    constexpr std::string_view kScheme = "basic ";
    if (authorization.size() < kScheme.size()) return std::nullopt;
    for (size_t i = 0; i < kScheme.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) {
            return std::nullopt;
        }
    }
    // base/'s strict decoder: the standard alphabet with its padding, nothing else (libsodium's
    // 1.0.18 decoder takes some bytes outside the alphabet for '/').
    std::optional<std::string> decoded = base64_decode(authorization.substr(kScheme.size()));
    if (!decoded || decoded->empty()) return std::nullopt;
    auto colon = decoded->find(':');
    if (colon == std::string::npos) return std::nullopt;
    return BasicCredentials{decoded->substr(0, colon), decoded->substr(colon + 1)};
}

struct Authenticator::State {
    const meta::MetaStore& store;
    Clock& clock;
    AuthenticatorOptions options;
    std::array<unsigned char, crypto_generichash_KEYBYTES> key{};

    std::atomic<bool> stopping{false};  // queued checks answer `unavailable` without hashing

    Mutex mutex;
    std::map<std::string, UserEntry, std::less<>> users GUARDED_BY(mutex);
    Bucket node_budget GUARDED_BY(mutex);
    MonoTime budget_warned GUARDED_BY(mutex);

    State(const meta::MetaStore& s, Clock& c, AuthenticatorOptions o)
        : store(s), clock(c), options(o) {
        init_sodium();
        randombytes_buf(key.data(), key.size());
        node_budget.tokens = options.node_burst;
        node_budget.refilled = clock.now();
        budget_warned = clock.now() - Millis(60'000);
    }

    Digest digest(std::string_view password) const {
        Digest out{};
        crypto_generichash(out.data(), out.size(),
                           reinterpret_cast<const unsigned char*>(password.data()), password.size(),
                           key.data(), key.size());
        return out;
    }

    UserEntry& entry(const std::string& user) REQUIRES(mutex) {
        auto it = users.find(user);
        if (it != users.end()) return it->second;
        if (users.size() >= options.max_cached_users) {
            // Forget a user with nothing pending against it: one whose bucket is full.
            for (auto victim = users.begin(); victim != users.end(); ++victim) {
                if (victim->second.bucket.tokens >= options.user_burst) {
                    users.erase(victim);
                    break;
                }
            }
        }
        return users[user];
    }

    // The answer that needs no hash check, if there is one; otherwise the attempt's tokens are
    // taken and `suspect` says whether it also took from the node-wide budget. The throttle comes
    // first: a throttled name is refused whatever the password, cached or not. Caller holds mutex.
    // decide() without changing anything: only what it answers before a hash would be checked,
    // and nullopt where it would check one. Caller holds the mutex.
    std::optional<AuthResult> peek(const std::string& name, const std::string& hash,
                                   const Digest& d) const REQUIRES(mutex) {
        auto it = users.find(name);
        if (it == users.end()) return std::nullopt;
        const UserEntry& e = it->second;
        if (e.bucket_started) {
            Bucket bucket = e.bucket;
            bucket.refill(clock.now(), options.user_burst, options.user_refill);
            if (bucket.tokens < 1) return AuthResult{AuthOutcome::throttled, {}};
        }
        return known_answer(name, e, hash, d, clock.now());
    }

    // The answer the cache holds for these credentials, if any. Caller holds the mutex.
    std::optional<AuthResult> known_answer(const std::string& name, const UserEntry& e,
                                           const std::string& hash, const Digest& d,
                                           MonoTime now) const REQUIRES(mutex) {
        if (e.verified_hash != hash) return std::nullopt;
        if (e.verified && sodium_memcmp(e.verified->data(), d.data(), d.size()) == 0) {
            return AuthResult{AuthOutcome::ok, name};
        }
        for (const Failure& f : e.failures) {
            if (now - f.at < options.negative_ttl &&
                sodium_memcmp(f.digest.data(), d.data(), d.size()) == 0) {
                return AuthResult{AuthOutcome::unauthorized, {}};
            }
        }
        return std::nullopt;
    }

    std::optional<AuthResult> decide(const std::string& name, const std::string& hash,
                                     const Digest& d, bool& suspect) REQUIRES(mutex) {
        UserEntry& e = entry(name);
        MonoTime now = clock.now();
        if (!e.bucket_started) {
            e.bucket = Bucket{static_cast<double>(options.user_burst), now};
            e.bucket_started = true;
        }
        e.bucket.refill(now, options.user_burst, options.user_refill);
        if (e.bucket.tokens < 1) {
            if (now - e.throttle_logged >= options.user_refill) {
                e.throttle_logged = now;
                NARAD_LOG_WARN("authentication throttled component=audit username={}", name);
            }
            return AuthResult{AuthOutcome::throttled, {}};
        }
        if (auto known = known_answer(name, e, hash, d, now)) return known;
        suspect = e.bucket.tokens < options.user_burst;
        node_budget.refill(now, options.node_burst, options.node_refill);
        if (suspect) {
            if (node_budget.tokens < 1) {
                if (now - budget_warned >= Millis(10'000)) {
                    budget_warned = now;
                    NARAD_LOG_WARN(
                        "authentication failure budget exhausted: repeated attempts for "
                        "usernames with recent failures are refused node-wide until it refills "
                        "component=audit");
                }
                return AuthResult{AuthOutcome::throttled, {}};
            }
            node_budget.tokens -= 1;
        }
        e.bucket.tokens -= 1;
        return std::nullopt;
    }

    // After a hash check: remember the answer; a success gives the user's token back, a failure
    // of a clean attempt (which took nothing from the node-wide budget) takes one from it if one
    // is left, so one guess per name across many names is bounded too.
    void settle(const std::string& user, const std::string& hash, const Digest& d, bool ok,
                bool suspect) {
        MutexLock lock(mutex);
        UserEntry& e = entry(user);
        if (e.verified_hash != hash) {
            e.verified.reset();
            e.failures.clear();
            e.verified_hash = hash;
        }
        if (ok) {
            e.verified = d;
            e.bucket.tokens = std::min<double>(options.user_burst, e.bucket.tokens + 1);
            return;
        }
        if (!suspect) {
            node_budget.refill(clock.now(), options.node_burst, options.node_refill);
            if (node_budget.tokens >= 1) node_budget.tokens -= 1;
        }
        e.failures.push_back(Failure{d, clock.now()});
        while (e.failures.size() > options.negative_per_user) e.failures.pop_front();
    }
};

Authenticator::Authenticator(const meta::MetaStore& store, Clock& clock,
                             AuthenticatorOptions options)
    : state_(std::make_shared<State>(store, clock, options)),
      pool_(std::make_unique<ThreadPool>("auth", options.max_concurrent, options.max_queued)) {
    verify_queued();  // exported from the start, at 0
}

Authenticator::~Authenticator() { stop(); }

void Authenticator::stop() {
    state_->stopping = true;
    pool_->stop();
}

void Authenticator::authenticate(std::optional<std::string_view> authorization,
                                 std::function<void(AuthResult)> done) {
    std::optional<BasicCredentials> credentials;
    if (authorization) credentials = parse_basic(*authorization);
    if (!credentials) return done(AuthResult{AuthOutcome::unauthorized, {}});
    check(credentials->user, std::move(credentials->password), std::move(done));
}

std::optional<AuthResult> Authenticator::screen(
    std::optional<std::string_view> authorization) const {
    std::optional<BasicCredentials> credentials;
    if (authorization) credentials = parse_basic(*authorization);
    if (!credentials) return AuthResult{AuthOutcome::unauthorized, {}};
    meta::MetaSnapshot snapshot = state_->store.snapshot();
    const meta::User* user = snapshot->find_user(credentials->user);
    if (user == nullptr) return AuthResult{AuthOutcome::unauthorized, {}};
    const Digest d = state_->digest(credentials->password);
    MutexLock lock(state_->mutex);
    return state_->peek(credentials->user, user->password_hash, d);
}

void Authenticator::check(const std::string& name, std::string password,
                          std::function<void(AuthResult)> done) {
    meta::MetaSnapshot snapshot = state_->store.snapshot();
    const meta::User* user = snapshot->find_user(name);
    if (user == nullptr) return done(AuthResult{AuthOutcome::unauthorized, {}});
    const std::string hash = user->password_hash;
    const Digest d = state_->digest(password);
    // Decided under the lock, answered after it: `done` may route the request.
    std::optional<AuthResult> answer;
    bool suspect = false;
    {
        MutexLock lock(state_->mutex);
        answer = state_->decide(name, hash, d, suspect);
    }
    if (answer) return done(std::move(*answer));
    std::weak_ptr<State> weak = state_;
    auto verify = [weak, name, password = std::move(password), hash, d, suspect, done]() mutable {
        auto state = weak.lock();
        if (!state || state->stopping.load()) {
            verify_queued().add(-1);
            return done(AuthResult{AuthOutcome::unavailable, {}});
        }
        bool ok = verify_password(hash, password);
        verify_queued().add(-1);
        sodium_memzero(password.data(), password.size());
        state->settle(name, hash, d, ok, suspect);
        if (!ok) NARAD_LOG_WARN("authentication failed component=audit username={}", name);
        done(ok ? AuthResult{AuthOutcome::ok, name} : AuthResult{AuthOutcome::unauthorized, {}});
    };
    verify_queued().add(1);
    if (pool_->post(std::move(verify)) != ThreadPool::Posted::queued) {
        verify_queued().add(-1);
        done(AuthResult{AuthOutcome::unavailable, {}});
    }
}

}  // namespace narad::auth
