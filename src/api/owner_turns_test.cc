#include "api/owner_turns.h"

#include <gtest/gtest.h>

namespace narad::api {
namespace {

constexpr size_t kLocal = OwnerTurns::kLocal;

// Rule: an owner never asked goes before this node's partitions; once asked it waits behind them
// until kRemoteTurn has passed since, and then goes first again. Owners keep their turns apart,
// and so do topics.
TEST(OwnerTurnsTest, AnOwnerGoesFirstOnceItsTurnIsDue) {
    FakeClock clock;
    OwnerTurns turns;
    const std::vector<NodeId> owners = {NodeId("n2"), NodeId("n3")};
    EXPECT_EQ(turns.order("t", owners, clock.now()), (std::vector<size_t>{0, 1, kLocal}));

    turns.asked("t", owners[0], clock.now());
    EXPECT_EQ(turns.order("t", owners, clock.now()), (std::vector<size_t>{1, kLocal, 0}));
    turns.asked("t", owners[1], clock.now());
    EXPECT_EQ(turns.order("t", owners, clock.now()), (std::vector<size_t>{kLocal, 0, 1}));
    EXPECT_EQ(turns.order("other", owners, clock.now()), (std::vector<size_t>{0, 1, kLocal}));

    clock.advance(kRemoteTurn - Millis{1});
    EXPECT_EQ(turns.order("t", owners, clock.now()), (std::vector<size_t>{kLocal, 0, 1}));
    clock.advance(Millis{1});
    EXPECT_EQ(turns.order("t", owners, clock.now()), (std::vector<size_t>{0, 1, kLocal}));
    turns.asked("t", owners[1], clock.now());
    EXPECT_EQ(turns.order("t", owners, clock.now()), (std::vector<size_t>{0, kLocal, 1}));
}

// Rule: a topic whose other partitions have no owner elsewhere is served locally only.
TEST(OwnerTurnsTest, NoOtherOwnerMeansLocalOnly) {
    FakeClock clock;
    OwnerTurns turns;
    EXPECT_EQ(turns.order("t", {}, clock.now()), (std::vector<size_t>{kLocal}));
}

}  // namespace
}  // namespace narad::api
