// EtcdStreamReader: how a watch's or an observer's reader thread is stopped, with a stream that
// blocks until cancelled and a fake clock for the back-off.
#include "meta/etcd_stream_reader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "base/mutex.h"

namespace narad::meta {
namespace {

constexpr Millis kWait{10'000};

// next() blocks until cancel() (then peer_error) or its timeout; says when a reader is inside.
class BlockingStream final : public EtcdStream {
  public:
    explicit BlockingStream(std::atomic<int>* destroyed = nullptr) : destroyed_(destroyed) {}
    ~BlockingStream() override {
        if (destroyed_ != nullptr) ++*destroyed_;
    }

    Result<std::string> next(Millis timeout) override {
        MutexLock lock(mutex_);
        reading_ = true;
        changed_.notify_all();
        if (!changed_.wait_for(lock, timeout, [&]() REQUIRES(mutex_) { return cancelled_; })) {
            return Status(Errc::timeout, "nothing yet");
        }
        return Status(Errc::peer_error, "cancelled");
    }
    void cancel() override {
        MutexLock lock(mutex_);
        cancelled_ = true;
        changed_.notify_all();
    }
    bool await_reader() {
        MutexLock lock(mutex_);
        return changed_.wait_for(lock, kWait, [&]() REQUIRES(mutex_) { return reading_; });
    }

  private:
    std::atomic<int>* destroyed_;
    Mutex mutex_;
    CondVar changed_;
    bool reading_ GUARDED_BY(mutex_) = false;
    bool cancelled_ GUARDED_BY(mutex_) = false;
};

// Rule: stop() cancels the open stream, so a reader blocked in next() returns at once, and the
// thread has ended when stop() returns.
TEST(EtcdStreamReaderTest, StopCancelsTheOpenStreamAndJoinsTheReader) {
    FakeClock clock;
    EtcdStreamReader reader(clock);
    auto owned = std::make_unique<BlockingStream>();
    BlockingStream* stream = owned.get();
    ASSERT_TRUE(reader.install(std::move(owned)).is_ok());
    std::atomic<int> read_code{-1};
    reader.start("test-reader",
                 [&] { read_code = static_cast<int>(reader.stream()->next(kWait).code()); });
    ASSERT_TRUE(stream->await_reader());
    reader.stop();
    EXPECT_EQ(read_code.load(), static_cast<int>(Errc::peer_error));
    EXPECT_TRUE(reader.stopping());
}

// Rule: a stream opened while stop() runs is refused and dropped, never made the open stream (a
// stop that had already cancelled the open one would not cancel it).
TEST(EtcdStreamReaderTest, StreamOpenedAfterStopBeganIsRefused) {
    FakeClock clock;
    EtcdStreamReader reader(clock);
    reader.stop();
    std::atomic<int> destroyed{0};
    Status installed = reader.install(std::make_unique<BlockingStream>(&destroyed));
    EXPECT_EQ(installed.code(), Errc::shutting_down);
    EXPECT_EQ(reader.stream(), nullptr);
    EXPECT_EQ(destroyed.load(), 1);
}

// Rule: a back-off lasts its delay on the injected clock, and ends early (false) once stop()
// begins.
TEST(EtcdStreamReaderTest, BackoffRunsOnTheClockAndEndsAtStop) {
    FakeClock clock;
    EtcdStreamReader reader(clock);
    std::promise<bool> first_result;
    std::promise<bool> second_result;
    auto first = first_result.get_future();
    auto second = second_result.get_future();
    reader.start("test-reader", [&] {
        first_result.set_value(reader.wait_backoff(Millis(50)));
        second_result.set_value(reader.wait_backoff(Millis(60'000)));
    });
    ASSERT_TRUE(clock.await_waiters(1));
    clock.advance(Millis(49));
    ASSERT_TRUE(clock.await_waiters(1));
    EXPECT_EQ(first.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
    clock.advance(Millis(1));
    ASSERT_EQ(first.wait_for(kWait), std::future_status::ready);
    EXPECT_TRUE(first.get());

    ASSERT_TRUE(clock.await_waiters(1));  // the second back-off, which only stop() may end
    std::thread stopper([&] { reader.stop(); });
    bool ended = second.wait_for(kWait) == std::future_status::ready;
    if (!ended) clock.advance(Millis(60'000));  // let the reader go: a failure, not a hang
    stopper.join();
    ASSERT_TRUE(ended);
    EXPECT_FALSE(second.get());
}

}  // namespace
}  // namespace narad::meta
