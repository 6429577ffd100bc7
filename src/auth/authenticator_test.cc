#include "auth/authenticator.h"

#include <gtest/gtest.h>
#include <sodium.h>

#include <future>
#include <thread>

#include "auth/password.h"
#include "meta/fake_meta_store.h"

namespace narad::auth {
namespace {

std::string basic(std::string_view user, std::string_view password) {
    std::string plain = std::string(user) + ":" + std::string(password);
    std::string out(sodium_base64_ENCODED_LEN(plain.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
    sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(plain.data()),
                      plain.size(), sodium_base64_VARIANT_ORIGINAL);
    out.resize(out.find('\0'));
    return "Basic " + out;
}

class AuthenticatorTest : public ::testing::Test {
  protected:
    void SetUp() override {
        add_user("alice", "wonderland");
        add_user("bob", "builder");
    }
    void add_user(const std::string& name, const std::string& password) {
        auto hash = hash_password(password, HashCost::minimal);
        ASSERT_TRUE(hash.is_ok());
        store_.update([&](meta::MetaState& s) {
            meta::User user;
            user.name = name;
            user.password_hash = *hash;
            s.users[name] = user;
        });
    }

    // The result, and whether it was answered on the calling thread (no hash was checked: the
    // hashes are checked on the authenticator's pool).
    std::pair<AuthResult, bool> attempt(std::optional<std::string> header) {
        std::promise<std::pair<AuthResult, bool>> promise;
        const std::thread::id caller = std::this_thread::get_id();
        auth_.authenticate(
            header ? std::optional<std::string_view>(*header) : std::nullopt,
            [&](AuthResult result) {
                promise.set_value({std::move(result), std::this_thread::get_id() == caller});
            });
        return promise.get_future().get();
    }

    meta::FakeMetaStore store_;
    FakeClock clock_;
    Authenticator auth_{store_, clock_};
};

TEST(ParseBasicTest, ReadsGosFormAndRefusesTheRest) {
    auto ok = parse_basic(basic("alice", "pa:ss"));
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->user, "alice");
    EXPECT_EQ(ok->password, "pa:ss");  // split at the first ':'
    auto lower = parse_basic("basic YTpi");
    ASSERT_TRUE(lower);
    EXPECT_EQ(lower->user, "a");
    EXPECT_FALSE(parse_basic("Bearer YTpi"));
    EXPECT_FALSE(parse_basic("Basic "));
    EXPECT_FALSE(parse_basic("Basic YTpi="));     // bad padding
    EXPECT_FALSE(parse_basic("Basic YWI="));      // no colon
    EXPECT_FALSE(parse_basic("Basic YT_i"));      // URL-safe alphabet
    EXPECT_FALSE(parse_basic("Basic YTpi\x01"));  // length
}

TEST_F(AuthenticatorTest, RightPasswordIsAcceptedAndThenRecognisedWithoutHashing) {
    auto [first, first_inline] = attempt(basic("alice", "wonderland"));
    EXPECT_EQ(first.outcome, AuthOutcome::ok);
    EXPECT_EQ(first.user, "alice");
    EXPECT_FALSE(first_inline) << "the first check hashes, on the pool";
    auto [second, second_inline] = attempt(basic("alice", "wonderland"));
    EXPECT_EQ(second.outcome, AuthOutcome::ok);
    EXPECT_TRUE(second_inline) << "verified credentials are recognised from the cache";
}

TEST_F(AuthenticatorTest, MissingMalformedAndUnknownAreRefusedAtOnce) {
    for (std::optional<std::string> header :
         {std::optional<std::string>(), std::optional<std::string>("Basic !!!!"),
          std::optional<std::string>(basic("nobody", "x"))}) {
        auto [result, inline_answer] = attempt(header);
        EXPECT_EQ(result.outcome, AuthOutcome::unauthorized);
        EXPECT_TRUE(inline_answer);
    }
}

TEST_F(AuthenticatorTest, FiveWrongPasswordsThrottleTheUserToOneAttemptPer12Seconds) {
    // Verified once, so the right password is in the cache: the throttle still comes first.
    ASSERT_EQ(attempt(basic("alice", "wonderland")).first.outcome, AuthOutcome::ok);
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(attempt(basic("alice", "guess" + std::to_string(i))).first.outcome,
                  AuthOutcome::unauthorized);
    }
    EXPECT_EQ(attempt(basic("alice", "guess5")).first.outcome, AuthOutcome::throttled);
    // Even the right (cached) password waits for a token: the throttle tells a guesser nothing.
    EXPECT_EQ(attempt(basic("alice", "wonderland")).first.outcome, AuthOutcome::throttled);
    EXPECT_EQ(attempt(basic("alice", "guess0")).first.outcome, AuthOutcome::throttled)
        << "a remembered wrong password is throttled too, not a quick 401";
    // Another user is not affected.
    EXPECT_EQ(attempt(basic("bob", "builder")).first.outcome, AuthOutcome::ok);

    clock_.advance(std::chrono::seconds(11));
    EXPECT_EQ(attempt(basic("alice", "guess6")).first.outcome, AuthOutcome::throttled);
    clock_.advance(std::chrono::seconds(1));
    EXPECT_EQ(attempt(basic("alice", "guess7")).first.outcome, AuthOutcome::unauthorized);
    EXPECT_EQ(attempt(basic("alice", "guess8")).first.outcome, AuthOutcome::throttled);
    clock_.advance(std::chrono::seconds(12));
    EXPECT_EQ(attempt(basic("alice", "wonderland")).first.outcome, AuthOutcome::ok);
}

TEST_F(AuthenticatorTest, ARepeatedWrongPasswordIsRefusedFromMemoryWithoutSpendingATry) {
    EXPECT_EQ(attempt(basic("alice", "stale")).first.outcome, AuthOutcome::unauthorized);
    for (int i = 0; i < 10; ++i) {
        auto [result, inline_answer] = attempt(basic("alice", "stale"));
        EXPECT_EQ(result.outcome, AuthOutcome::unauthorized);
        EXPECT_TRUE(inline_answer);
    }
    EXPECT_EQ(attempt(basic("alice", "wonderland")).first.outcome, AuthOutcome::ok);
    // The memory lasts a minute; after it the password is hashed again.
    clock_.advance(std::chrono::seconds(61));
    auto [after, after_inline] = attempt(basic("alice", "stale"));
    EXPECT_EQ(after.outcome, AuthOutcome::unauthorized);
    EXPECT_FALSE(after_inline);
}

TEST_F(AuthenticatorTest, AChangedPasswordEndsTheCachedOne) {
    ASSERT_EQ(attempt(basic("alice", "wonderland")).first.outcome, AuthOutcome::ok);
    add_user("alice", "looking-glass");
    EXPECT_EQ(attempt(basic("alice", "wonderland")).first.outcome, AuthOutcome::unauthorized);
    EXPECT_EQ(attempt(basic("alice", "looking-glass")).first.outcome, AuthOutcome::ok);
    store_.update([](meta::MetaState& s) { s.users.erase("alice"); });
    EXPECT_EQ(attempt(basic("alice", "looking-glass")).first.outcome, AuthOutcome::unauthorized);
}

TEST_F(AuthenticatorTest, GuessingAcrossManyUsersIsBoundedNodeWide) {
    // 40 users with one failure each: those first, clean failures spend the node-wide budget of
    // 32 while it lasts, and the next attempts, suspect now, each need a token from it.
    for (int i = 0; i < 40; ++i) add_user("u" + std::to_string(i), "right");
    for (int i = 0; i < 40; ++i) {
        ASSERT_EQ(attempt(basic("u" + std::to_string(i), "wrong")).first.outcome,
                  AuthOutcome::unauthorized);
    }
    int throttled = 0;
    for (int i = 0; i < 40; ++i) {
        if (attempt(basic("u" + std::to_string(i), "wrong2")).first.outcome ==
            AuthOutcome::throttled) {
            ++throttled;
        }
    }
    EXPECT_EQ(throttled, 40) << "the clock stood still: the spent budget did not refill";
    clock_.advance(std::chrono::seconds(30));
    EXPECT_EQ(attempt(basic("u0", "right")).first.outcome, AuthOutcome::ok);
}

TEST_F(AuthenticatorTest, APasswordGivenApartSharesTheThrottle) {
    auto check = [&](const std::string& password) {
        std::promise<AuthResult> promise;
        auth_.check("alice", password, [&](AuthResult r) { promise.set_value(std::move(r)); });
        return promise.get_future().get().outcome;
    };
    EXPECT_EQ(check("wonderland"), AuthOutcome::ok);
    for (int i = 0; i < 5; ++i)
        EXPECT_EQ(check("nope" + std::to_string(i)), AuthOutcome::unauthorized);
    EXPECT_EQ(check("wonderland"), AuthOutcome::throttled);
    EXPECT_EQ(attempt(basic("alice", "wonderland")).first.outcome, AuthOutcome::throttled);
}

// Rule: the head alone settles what needs no hash: missing, malformed or unknown credentials are
// unauthorized, credentials verified before are that user, a wrong password seen lately is
// unauthorized again, a throttled user is throttled; anything else waits for a hash check. It
// spends nothing from the throttle.
TEST_F(AuthenticatorTest, TheHeadAloneSettlesWhatNeedsNoHash) {
    const std::string right = basic("alice", "wonderland");
    auto outcome = [&](std::optional<std::string_view> header) -> std::optional<AuthOutcome> {
        auto screened = auth_.screen(header);
        if (!screened) return std::nullopt;
        return screened->outcome;
    };
    EXPECT_EQ(outcome(std::nullopt), AuthOutcome::unauthorized);
    EXPECT_EQ(outcome("Basic !!"), AuthOutcome::unauthorized);
    EXPECT_EQ(outcome(basic("nobody", "x")), AuthOutcome::unauthorized);
    EXPECT_EQ(outcome(right), std::nullopt) << "nothing was verified yet";
    ASSERT_EQ(attempt(right).first.outcome, AuthOutcome::ok);
    auto known = auth_.screen(right);
    ASSERT_TRUE(known);
    EXPECT_EQ(known->outcome, AuthOutcome::ok);
    EXPECT_EQ(known->user, "alice");
    EXPECT_EQ(outcome(basic("alice", "other")), std::nullopt) << "never tried: must be hashed";
    ASSERT_EQ(attempt(basic("alice", "other")).first.outcome, AuthOutcome::unauthorized);
    EXPECT_EQ(outcome(basic("alice", "other")), AuthOutcome::unauthorized) << "seen lately";
    for (int i = 0; i < 10; ++i) auth_.screen(basic("alice", "guess" + std::to_string(i)));
    EXPECT_EQ(attempt(basic("alice", "guess-a")).first.outcome, AuthOutcome::unauthorized)
        << "screening spent no tokens: this is only the second failure";
    for (int i = 0; i < 4; ++i) attempt(basic("alice", "guess-b" + std::to_string(i)));
    EXPECT_EQ(outcome(right), AuthOutcome::throttled);
    EXPECT_EQ(outcome(basic("bob", "builder")), std::nullopt) << "another user is not throttled";
    add_user("alice", "looking-glass");
    clock_.advance(Millis(120'000));
    EXPECT_EQ(outcome(right), std::nullopt) << "a changed password ends the recognition";
}

TEST_F(AuthenticatorTest, AfterStopNothingIsHashed) {
    auth_.stop();
    EXPECT_EQ(attempt(basic("alice", "wonderland")).first.outcome, AuthOutcome::unavailable);
}

}  // namespace
}  // namespace narad::auth
