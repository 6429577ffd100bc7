#include "base/failpoint.h"

#include <gtest/gtest.h>

namespace narad {
namespace {

Status guarded_step() {
    NARAD_FAILPOINT_RETURN("test.step");
    return Status::ok();
}

class FailpointTest : public ::testing::Test {
  protected:
    void TearDown() override { failpoint::clear_all(); }
};

// Rule: an unarmed failpoint does nothing; an "error" failpoint makes its site return an error.
TEST_F(FailpointTest, ErrorActionFailsTheSiteOnlyWhileArmed) {
    EXPECT_TRUE(guarded_step().is_ok());
    ASSERT_TRUE(failpoint::configure("test.step=error").is_ok());
    EXPECT_EQ(guarded_step().code(), Errc::io_error);
    failpoint::clear("test.step");
    EXPECT_TRUE(guarded_step().is_ok());
}

// Rule: "@N" fires on the Nth hit only.
TEST_F(FailpointTest, NthHitModifierFiresOnce) {
    ASSERT_TRUE(failpoint::configure("test.step=error@3").is_ok());
    EXPECT_TRUE(guarded_step().is_ok());
    EXPECT_TRUE(guarded_step().is_ok());
    EXPECT_FALSE(guarded_step().is_ok());
    EXPECT_TRUE(guarded_step().is_ok());
    EXPECT_EQ(failpoint::hits("test.step"), 4u);
}

// Rule: a hook runs at the failpoint and its error is what the site returns.
TEST_F(FailpointTest, HookRunsAtTheSite) {
    int calls = 0;
    failpoint::set_hook("test.step", [&] {
        ++calls;
        return Status(Errc::unavailable, "hooked");
    });
    EXPECT_EQ(guarded_step().code(), Errc::unavailable);
    EXPECT_EQ(calls, 1);
}

// Rule: a malformed spec is refused and arms nothing.
TEST_F(FailpointTest, MalformedSpecArmsNothing) {
    EXPECT_FALSE(failpoint::configure("test.step=explode").is_ok());
    EXPECT_FALSE(failpoint::configure("test.step").is_ok());
    EXPECT_FALSE(failpoint::configure("a=error;test.step=sleep(x)").is_ok());
    EXPECT_TRUE(guarded_step().is_ok());
}

// Rule: "crash" kills the process as SIGKILL would.
TEST_F(FailpointTest, CrashActionKillsTheProcess) {
    EXPECT_EXIT(
        {
            (void)failpoint::configure("test.step=crash");
            (void)guarded_step();
        },
        ::testing::KilledBySignal(SIGKILL), "");
}

}  // namespace
}  // namespace narad
