#include "queue/long_polls.h"

#include <gtest/gtest.h>

#include <deque>
#include <future>
#include <optional>
#include <thread>

namespace narad::queue {
namespace {

// Readers the test runs by hand: every attempt (a first look, a woken look, a deadline's last
// look) waits in a list until the test runs it, on the test's thread, so every interleaving below
// is exact. Deadlines and wake-ups reach the list through the FakeClock's timers.
class ManualReaders {
  public:
    ThreadPool::Posted post(std::function<void()> read) {
        MutexLock lock(mutex_);
        reads_.push_back(std::move(read));
        return ThreadPool::Posted::queued;
    }
    // Runs the reads queued so far (and those they queue in turn); returns how many ran.
    int run() {
        int ran = 0;
        for (;;) {
            std::function<void()> read;
            {
                MutexLock lock(mutex_);
                if (reads_.empty()) return ran;
                read = std::move(reads_.front());
                reads_.pop_front();
            }
            read();
            ++ran;
        }
    }

  private:
    Mutex mutex_;
    std::deque<std::function<void()>> reads_ GUARDED_BY(mutex_);
};

Delivery delivery(uint64_t offset) {
    return Delivery{PartitionId(0), Offset(offset), "", "m", 0, LeaseId(offset + 1)};
}

class LongPollsTest : public ::testing::Test {
  protected:
    LongPollsTest()
        : polls_(
              clock_, consume_metrics(),
              [this](const ConsumeRequest& request) { return look(request); },
              [this](const std::string&, const std::vector<Delivery>& deliveries) {
                  released_ += deliveries.size();
                  available_ += static_cast<int>(deliveries.size());
                  return deliveries.size();
              }) {
        polls_.set_readers([this](std::function<void()> read) { return readers_.post(read); });
    }

    // Lets the timers due now run (they hand woken consumes to the readers), then runs the
    // reads; returns how many reads ran.
    int run_due() {
        clock_.advance(Millis(0));
        return readers_.run();
    }

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

    // Starts a consume that may wait `wait` and runs its first look; its answer lands in the
    // returned slot.
    std::shared_ptr<std::optional<Result<std::vector<Delivery>>>> consume(
        Millis wait = Millis(5'000)) {
        auto answer = std::make_shared<std::optional<Result<std::vector<Delivery>>>>();
        polls_.consume({"t", std::nullopt, 10, wait},
                       [answer](Result<std::vector<Delivery>> result) { *answer = result; });
        readers_.run();
        return answer;
    }

    FakeClock clock_;
    ManualReaders readers_;
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
    EXPECT_EQ(run_due(), 2) << "two records did not wake exactly two consumes";
    ASSERT_TRUE(first->has_value()) << "the oldest consume was not among the woken";
    EXPECT_EQ((*first)->value().size(), 2u);
    EXPECT_FALSE(second->has_value());  // woken, found nothing left, parked again
    EXPECT_FALSE(third->has_value());
    EXPECT_EQ(looks_, 5);

    polls_.on_append("t", PartitionId(0), Offset(1));  // the log was replaced
    EXPECT_EQ(run_due(), 2);
    EXPECT_EQ(looks_, 7);
}

// Rule: a consume waits its whole wait on the clock, not less; when the wait runs out it looks
// one last time and answers with what it finds then.
TEST_F(LongPollsTest, TheDeadlineTakesOneLastLook) {
    auto answer = consume();
    ASSERT_FALSE(answer->has_value());
    clock_.advance(Millis(4'999));
    EXPECT_EQ(readers_.run(), 0) << "the deadline came before the wait ran out";
    ASSERT_FALSE(answer->has_value());

    available_ = 1;
    clock_.advance(Millis(1));
    EXPECT_EQ(readers_.run(), 1);
    ASSERT_TRUE(answer->has_value());
    EXPECT_EQ((*answer)->value().size(), 1u);
}

// Rule: a consume answered elsewhere first (here: by the deadline) hands back whatever a later
// look reserved for it, and that hand-back wakes another consume.
TEST_F(LongPollsTest, AReservationForAnAnsweredConsumeIsHandedBack) {
    polls_.on_append("t", PartitionId(0), Offset(1));  // first sight of the partition
    auto answer = consume();
    auto other = consume(Millis(60'000));
    polls_.on_append("t", PartitionId(0), Offset(2));  // wakes `answer`
    clock_.advance(Millis(0));                         // hands it to the readers
    // The woken consume's look finds a record, and meanwhile its deadline answers it with nothing.
    available_ = 1;
    during_look_ = [this] {
        clock_.advance(Millis(5'000));
        EXPECT_EQ(readers_.run(), 1);  // the deadline's last look
    };
    readers_.run();
    run_due();  // the hand-back's wake-up
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
    auto late = consume();  // its look runs, finds nothing, and does not park
    ASSERT_TRUE(late->has_value());
    EXPECT_TRUE((*late)->value().empty());
}

// Rule: the clock's timers may outlive the long-polls: shut_down() waits for a timer's hand-off
// that is running, and once it has returned no timer reaches the long-polls any more (here: a
// wake-up queued before the shut-down never hands its consume to the readers).
TEST(LongPollsShutDownTest, NoTimerReachesTheLongPollsOnceShutDownReturns) {
    FakeClock clock;
    Mutex mutex;
    CondVar changed;
    int handed_off = 0;
    bool release = false;
    int looks = 0;
    auto polls = std::make_unique<LongPolls>(
        clock, consume_metrics(),
        [&](const ConsumeRequest&) -> Result<std::vector<Delivery>> {
            ++looks;
            return std::vector<Delivery>{};
        },
        [](const std::string&, const std::vector<Delivery>&) { return size_t{0}; });
    // The first look runs on the test's thread; a woken one is held inside the hand-off, on the
    // clock's timer thread, until the test releases it.
    bool first = true;
    polls->set_readers([&](std::function<void()> read) {
        if (first) {
            first = false;
            read();
            return ThreadPool::Posted::queued;
        }
        MutexLock lock(mutex);
        ++handed_off;
        changed.notify_all();
        changed.wait(lock, [&] { return release; });
        return ThreadPool::Posted::queued;  // dropped: the test only counts hand-offs
    });
    polls->consume({"t", std::nullopt, 10, Millis(5'000)}, [](Result<std::vector<Delivery>>) {});
    ASSERT_EQ(looks, 1);
    polls->wake("t", 1);  // the consume's hand-off is now a timer, held in the readers
    {
        MutexLock lock(mutex);
        ASSERT_TRUE(
            changed.wait_for(lock, std::chrono::seconds(30), [&] { return handed_off == 1; }));
    }
    std::promise<void> shut;
    std::thread stopper([&] {
        polls->shut_down();
        shut.set_value();
    });
    auto stopped = shut.get_future();
    EXPECT_EQ(stopped.wait_for(Millis(50)), std::future_status::timeout)
        << "shut_down() returned while a timer was handing a consume off";
    {
        MutexLock lock(mutex);
        release = true;
        changed.notify_all();
    }
    stopper.join();
    // A wake-up queued now, and a deadline passing, find the gate closed.
    polls->wake("t", 1);
    clock.advance(Millis(10'000));
    polls.reset();
    MutexLock lock(mutex);
    EXPECT_EQ(handed_off, 1);
}

}  // namespace
}  // namespace narad::queue
