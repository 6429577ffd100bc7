#include "queue/long_polls.h"

#include <gtest/gtest.h>

#include <deque>
#include <optional>

namespace narad::queue {
namespace {

// A Scheduler the test drives by hand: deadlines and posted work wait in lists until the test runs
// them, so every interleaving below is exact.
class ManualScheduler final : public Scheduler {
  public:
    struct Timer final : public ScheduledTask {
        void cancel() override { cancelled = true; }
        Millis delay{0};
        std::function<void()> fn;
        bool cancelled = false;
    };
    std::shared_ptr<ScheduledTask> after(Millis delay, std::function<void()> fn) override {
        auto timer = std::make_shared<Timer>();
        timer->delay = delay;
        timer->fn = std::move(fn);
        timers.push_back(timer);
        return timer;
    }
    void post(std::function<void()> fn) override { posted.push_back(std::move(fn)); }
    // Runs what was posted so far (and what that posts in turn); returns how many ran.
    int run_posted() {
        int ran = 0;
        while (!posted.empty()) {
            auto fn = std::move(posted.front());
            posted.pop_front();
            fn();
            ++ran;
        }
        return ran;
    }
    std::vector<std::shared_ptr<Timer>> timers;
    std::deque<std::function<void()>> posted;
};

Delivery delivery(uint64_t offset) {
    return Delivery{PartitionId(0), Offset(offset), "", "m", 0, offset + 1};
}

class LongPollsTest : public ::testing::Test {
  protected:
    LongPollsTest()
        : polls_(
              clock_, scheduler_, consume_metrics(),
              [this](const ConsumeRequest& request) { return look(request); },
              [this](const std::string&, const std::vector<Delivery>& deliveries) {
                  released_ += deliveries.size();
                  available_ += static_cast<int>(deliveries.size());
                  return deliveries.size();
              }) {}

    Result<std::vector<Delivery>> look(const ConsumeRequest&) {
        ++looks_;
        std::vector<Delivery> out;
        for (; available_ > 0; --available_) out.push_back(delivery(next_offset_++));
        if (during_look_) {  // runs after the look took what was there
            auto hook = std::move(during_look_);
            during_look_ = nullptr;
            hook();
        }
        return out;
    }

    // Starts a consume that may wait 5 s; its answer lands in the returned slot.
    std::shared_ptr<std::optional<Result<std::vector<Delivery>>>> consume() {
        auto answer = std::make_shared<std::optional<Result<std::vector<Delivery>>>>();
        polls_.consume({"t", std::nullopt, 10, Millis(5'000)},
                       [answer](Result<std::vector<Delivery>> result) { *answer = result; });
        return answer;
    }

    FakeClock clock_;
    ManualScheduler scheduler_;
    LongPolls polls_;
    int looks_ = 0;
    int available_ = 0;
    uint64_t next_offset_ = 0;
    size_t released_ = 0;
    std::function<void()> during_look_;
};

// Rule: a wake that lands while a consume is looking makes it look again instead of parking, so
// the record behind that wake is not left waiting for the deadline.
TEST_F(LongPollsTest, AWakeDuringALookMakesItLookAgain) {
    during_look_ = [this] {
        available_ = 1;
        polls_.wake("t", 1);
    };
    auto answer = consume();
    ASSERT_TRUE(answer->has_value()) << "the consume parked though it was woken while looking";
    ASSERT_TRUE((*answer)->is_ok());
    EXPECT_EQ((*answer)->value().size(), 1u);
    EXPECT_EQ(looks_, 2);
}

// Rule: an append wakes as many parked consumes as it added records, oldest first; a watermark that
// did not grow (a replaced log) wakes them all.
TEST_F(LongPollsTest, AnAppendWakesAsManyConsumesAsRecords) {
    polls_.on_append("t", PartitionId(0), Offset(5));  // first sight of the partition
    auto first = consume();
    auto second = consume();
    auto third = consume();
    ASSERT_FALSE(first->has_value());
    ASSERT_EQ(looks_, 3);

    available_ = 2;
    polls_.on_append("t", PartitionId(0), Offset(7));
    EXPECT_EQ(scheduler_.run_posted(), 2) << "two records did not wake exactly two consumes";
    ASSERT_TRUE(first->has_value()) << "the oldest consume was not among the woken";
    EXPECT_EQ((*first)->value().size(), 2u);
    EXPECT_FALSE(second->has_value());  // woken, found nothing left, parked again
    EXPECT_FALSE(third->has_value());
    EXPECT_EQ(looks_, 5);

    polls_.on_append("t", PartitionId(0), Offset(1));  // the log was replaced
    EXPECT_EQ(scheduler_.run_posted(), 2);
    EXPECT_EQ(looks_, 7);
}

// Rule: a consume whose wait runs out looks one last time and answers with what it finds then.
TEST_F(LongPollsTest, TheDeadlineTakesOneLastLook) {
    auto answer = consume();
    ASSERT_EQ(scheduler_.timers.size(), 1u);
    EXPECT_EQ(scheduler_.timers[0]->delay, Millis(5'000));
    ASSERT_FALSE(answer->has_value());

    available_ = 1;
    clock_.advance(Millis(5'000));
    scheduler_.timers[0]->fn();
    ASSERT_TRUE(answer->has_value());
    EXPECT_EQ((*answer)->value().size(), 1u);
}

// Rule: a consume answered elsewhere first (here: by the deadline) hands back whatever a later
// look reserved for it, and that hand-back wakes another consume.
TEST_F(LongPollsTest, AReservationForAnAnsweredConsumeIsHandedBack) {
    polls_.on_append("t", PartitionId(0), Offset(1));  // first sight of the partition
    auto answer = consume();
    auto other = consume();
    polls_.on_append("t", PartitionId(0), Offset(2));  // wakes `answer`
    ASSERT_EQ(scheduler_.posted.size(), 1u);
    // The woken consume's look finds a record, and meanwhile its deadline answers it with nothing.
    available_ = 1;
    during_look_ = [this] {
        clock_.advance(Millis(5'000));
        scheduler_.timers[0]->fn();
    };
    scheduler_.run_posted();
    ASSERT_TRUE(answer->has_value());
    EXPECT_TRUE((*answer)->value().empty());
    EXPECT_EQ(released_, 1u) << "a record stayed reserved for a consume nobody waits for";
    ASSERT_TRUE(other->has_value()) << "the hand-back did not wake the other consume";
    EXPECT_EQ((*other)->value().size(), 1u);
}

// Rule: shutting down answers every parked consume with nothing, and a consume that would park
// afterwards is answered at once.
TEST_F(LongPollsTest, ShutDownAnswersEveryParkedConsume) {
    auto parked = consume();
    polls_.shut_down();
    ASSERT_TRUE(parked->has_value());
    EXPECT_TRUE((*parked)->value().empty());
    auto late = consume();
    ASSERT_TRUE(late->has_value());
    EXPECT_TRUE((*late)->value().empty());
}

}  // namespace
}  // namespace narad::queue
