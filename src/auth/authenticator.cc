#include "auth/authenticator.h"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <deque>
#include <vector>

#include "auth/password.h"
#include "base/log.h"
#include "base/metrics.h"

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
    std::string_view encoded = authorization.substr(kScheme.size());
    if (encoded.empty() || encoded.size() % 4 != 0) return std::nullopt;
    std::string decoded(encoded.size() / 4 * 3, '\0');
    size_t length = 0;
    if (sodium_base642bin(reinterpret_cast<unsigned char*>(decoded.data()), decoded.size(),
                          encoded.data(), encoded.size(), nullptr, &length, nullptr,
                          sodium_base64_VARIANT_ORIGINAL) != 0) {
        return std::nullopt;
    }
    decoded.resize(length);
    auto colon = decoded.find(':');
    if (colon == std::string::npos) return std::nullopt;
    return BasicCredentials{decoded.substr(0, colon), decoded.substr(colon + 1)};
}

struct Authenticator::State {
    const meta::MetaStore& store;
    Clock& clock;
    AuthenticatorOptions options;
    std::array<unsigned char, crypto_generichash_KEYBYTES> key{};

    std::mutex mutex;
    std::map<std::string, UserEntry, std::less<>> users;  // GUARDED_BY(mutex)
    Bucket node_budget;                                   // GUARDED_BY(mutex)
    MonoTime budget_warned;                               // GUARDED_BY(mutex)

    State(const meta::MetaStore& s, Clock& c, AuthenticatorOptions o)
        : store(s), clock(c), options(o) {
        if (sodium_init() < 0) NARAD_LOG_ERROR("libsodium failed to initialise");
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

    UserEntry& entry(const std::string& user) {
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

    // After a hash check: remember the answer, give back the token on success.
    void settle(const std::string& user, const std::string& hash, const Digest& d, bool ok) {
        std::lock_guard lock(mutex);
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

Authenticator::~Authenticator() { pool_->stop(); }

void Authenticator::authenticate(std::optional<std::string_view> authorization,
                                 std::function<void(AuthResult)> done) {
    std::optional<BasicCredentials> credentials;
    if (authorization) credentials = parse_basic(*authorization);
    if (!credentials) return done(AuthResult{AuthOutcome::unauthorized, {}});
    meta::MetaSnapshot snapshot = state_->store.snapshot();
    const meta::User* user = snapshot->find_user(credentials->user);
    if (user == nullptr) return done(AuthResult{AuthOutcome::unauthorized, {}});
    std::string hash = user->password_hash;
    Digest d = state_->digest(credentials->password);
    const AuthenticatorOptions& o = state_->options;
    {
        std::lock_guard lock(state_->mutex);
        UserEntry& e = state_->entry(credentials->user);
        MonoTime now = state_->clock.now();
        if (e.verified_hash == hash) {
            if (e.verified && sodium_memcmp(e.verified->data(), d.data(), d.size()) == 0) {
                return done(AuthResult{AuthOutcome::ok, credentials->user});
            }
            for (const Failure& f : e.failures) {
                if (now - f.at < o.negative_ttl &&
                    sodium_memcmp(f.digest.data(), d.data(), d.size()) == 0) {
                    return done(AuthResult{AuthOutcome::unauthorized, {}});
                }
            }
        }
        if (!e.bucket_started) {
            e.bucket = Bucket{static_cast<double>(o.user_burst), now};
            e.bucket_started = true;
        }
        e.bucket.refill(now, o.user_burst, o.user_refill);
        if (e.bucket.tokens < 1) {
            NARAD_LOG_WARN("authentication throttled component=audit username={}",
                           credentials->user);
            return done(AuthResult{AuthOutcome::throttled, {}});
        }
        bool suspect = e.bucket.tokens < o.user_burst;
        state_->node_budget.refill(now, o.node_burst, o.node_refill);
        if (suspect) {
            if (state_->node_budget.tokens < 1) {
                if (now - state_->budget_warned >= Millis(10'000)) {
                    state_->budget_warned = now;
                    NARAD_LOG_WARN(
                        "authentication failure budget exhausted: repeated attempts for "
                        "usernames with recent failures are refused node-wide until it refills "
                        "component=audit");
                }
                return done(AuthResult{AuthOutcome::throttled, {}});
            }
            state_->node_budget.tokens -= 1;
        }
        e.bucket.tokens -= 1;
    }
    std::weak_ptr<State> weak = state_;
    auto verify = [weak, name = credentials->user, password = std::move(credentials->password),
                   hash, d, done]() mutable {
        bool ok = verify_password(hash, password);
        verify_queued().add(-1);
        sodium_memzero(password.data(), password.size());
        if (auto state = weak.lock()) {
            state->settle(name, hash, d, ok);
            if (!ok) NARAD_LOG_WARN("authentication failed component=audit username={}", name);
        }
        done(ok ? AuthResult{AuthOutcome::ok, name} : AuthResult{AuthOutcome::unauthorized, {}});
    };
    verify_queued().add(1);
    if (!pool_->post(std::move(verify))) {
        verify_queued().add(-1);
        done(AuthResult{AuthOutcome::unavailable, {}});
    }
}

bool Authenticator::check_password(std::string_view user, std::string_view password) const {
    meta::MetaSnapshot snapshot = state_->store.snapshot();
    const meta::User* record = snapshot->find_user(user);
    return record != nullptr && verify_password(record->password_hash, password);
}

}  // namespace narad::auth
