// LongPolls: consumes that may wait. A consume is tried at once; one that finds nothing and may
// still wait is parked under its topic until something can change its answer (records appended to
// the topic, an offset handed back by a nack, a lapsed lease or a released reservation, a cap
// opened by an ack) or until its deadline, when it looks once more and answers with what it found
// (nothing: 204).
//
// No wake-up is lost: every wake moves the topic's generation on, and an attempt that sees it move
// while it looked looks again instead of parking.
//
// Thread-safe. Attempts run on the readers (set_readers) so no HTTP I/O thread reads a log; a woken
// or expiring consume that the readers refuse runs where it is, since it must be answered. Each
// consume's `done` runs exactly once, on the thread that found its answer.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "queue/consume_metrics.h"
#include "queue/consume_reader.h"

namespace narad::queue {

class LongPolls {
  public:
    using Done = std::function<void(Result<std::vector<Delivery>>)>;
    // One look: reserves what can be delivered now (ConsumeReader::reserve).
    using Reserve = std::function<Result<std::vector<Delivery>>(const ConsumeRequest&)>;
    // Hands back what a look reserved for a consume that was answered meanwhile; returns how many
    // offsets became deliverable again.
    using Release =
        std::function<size_t(const std::string& topic, const std::vector<Delivery>& deliveries)>;
    // Queues a read on the readers; anything but `queued` refuses it.
    using Readers = std::function<ThreadPool::Posted(std::function<void()>)>;

    static constexpr uint64_t kWakeAll = UINT64_MAX;

    // The deadlines, and the hand-off of woken attempts to the readers, are timers of `clock`.
    LongPolls(Clock& clock, ConsumeMetrics& metrics, Reserve reserve, Release release);
    ~LongPolls();  // shut_down()

    // Set once, before the first consume. Unset: attempts run on the calling thread.
    void set_readers(Readers run);

    // Tries the consume on the readers and parks it if it finds nothing and may wait. Refused
    // (done gets unavailable, saying whether the readers are full or the node is shutting down)
    // when the readers do not take the first attempt.
    void consume(ConsumeRequest request, Done done);
    // Runs `read` on the readers (inline when unset); unavailable, with the reason, when they do
    // not take it.
    Status run_read(std::function<void()> read);

    // Wakes up to `count` of the topic's parked consumes, oldest first.
    void wake(const std::string& topic, uint64_t count);
    // A partition's high watermark advanced to `hwm`: wakes as many of the topic's consumes as
    // records were appended (all when the watermark did not grow: the log was replaced).
    void on_append(const std::string& topic, PartitionId partition, Offset hwm);
    // Forgets the watermarks seen for a topic, or for one of its partitions.
    void forget(std::string_view topic);
    void forget(std::string_view topic, PartitionId partition);

    // Answers every parked consume with nothing; a consume that would park afterwards is answered
    // at once instead.
    void shut_down();

  private:
    struct Waiter {
        ConsumeRequest request;
        Done done;
        MonoTime started;
        MonoTime deadline;
        std::shared_ptr<Timer> timer;  // set once, under mutex_
        std::atomic<bool> finished{false};
    };

    void attempt(const std::shared_ptr<Waiter>& waiter);
    void expire(const std::shared_ptr<Waiter>& waiter);
    void finish(const std::shared_ptr<Waiter>& waiter, Result<std::vector<Delivery>> result,
                const char* outcome);
    // A woken or expiring consume must be answered: when the readers refuse it, it runs here.
    void run_read_or_here(std::function<void()> read);

    Clock& clock_;
    ConsumeMetrics& metrics_;
    const Reserve reserve_;
    const Release release_;
    Readers readers_;  // set before the first consume, then only read

    Mutex mutex_;
    std::map<std::string, std::vector<std::shared_ptr<Waiter>>> waiters_ GUARDED_BY(mutex_);
    std::map<std::string, uint64_t> generations_ GUARDED_BY(mutex_);
    bool shut_down_ GUARDED_BY(mutex_) = false;

    Mutex hwm_mutex_;
    // The last watermark seen per (topic, partition).
    std::map<std::pair<std::string, uint32_t>, Offset> hwms_ GUARDED_BY(hwm_mutex_);

    // The way in for this object's timers, which belong to the clock and may outlive it: a timer
    // runs its function only while the gate is open, and shut_down() closes it and waits for a
    // function already running, so no timer reaches this object once shut_down() has returned.
    struct TimerGate {
        Mutex mutex;
        CondVar idle;
        bool open GUARDED_BY(mutex) = true;
        int running GUARDED_BY(mutex) = 0;
    };
    // `fn`, to be run by a timer only through the gate.
    std::function<void()> through_gate(std::function<void()> fn) const;
    const std::shared_ptr<TimerGate> gate_ = std::make_shared<TimerGate>();
};

}  // namespace narad::queue
