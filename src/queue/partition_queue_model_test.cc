// Randomized tests of PartitionQueue against a simple reference model: one state per offset, and
// the rules of partition_queue.h applied by brute force.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <vector>

#include "queue/consumer_offset_file.h"
#include "queue/partition_queue.h"
#include "queue/temp_dir_for_test.h"

namespace narad::queue {
namespace {

constexpr Millis kVisibility{30'000};
constexpr uint64_t kMaxHighWatermark = 400;

// The reference: what each offset is, by brute force over a vector.
class Model {
  public:
    enum class State { unread, leased, redeliver, acked };
    struct Held {
        LeaseId lease_id;
        MonoTime deadline;
        uint32_t delivery;
    };

    Model(uint64_t frontier, const std::set<uint64_t>& acked_ahead, QueueLimits limits)
        : state_(kMaxHighWatermark + 8, State::unread),
          delivered_(kMaxHighWatermark + 8, 0),
          limits_(limits) {
        for (uint64_t i = 0; i < frontier; ++i) state_[i] = State::acked;
        for (uint64_t offset : acked_ahead) state_[offset] = State::acked;
    }

    void expire(MonoTime now) {
        for (auto it = leases_.begin(); it != leases_.end();) {
            if (it->second.deadline <= now) {
                state_[it->first] = State::redeliver;
                it = leases_.erase(it);
            } else {
                ++it;
            }
        }
    }
    uint64_t frontier() const {
        uint64_t f = 0;
        while (f < state_.size() && state_[f] == State::acked) ++f;
        return f;
    }
    size_t acked_ahead() const {
        size_t n = 0;
        for (uint64_t i = frontier(); i < state_.size(); ++i) n += state_[i] == State::acked;
        return n;
    }
    std::vector<Offset> acked_ahead_offsets() const {
        std::vector<Offset> offsets;
        for (uint64_t i = frontier(); i < state_.size(); ++i) {
            if (state_[i] == State::acked) offsets.push_back(Offset(i));
        }
        return offsets;
    }
    // The offsets reserve(hwm, max) must hand out, lowest first.
    std::vector<uint64_t> expected_reserve(uint64_t hwm, size_t max) const {
        std::vector<uint64_t> out;
        if (leases_.size() >= limits_.max_in_flight) return out;
        size_t budget = std::min<size_t>(max, limits_.max_in_flight - leases_.size());
        if (budget == 0) return out;
        if (acked_ahead() >= limits_.max_acked_ahead) {
            uint64_t f = frontier();
            if (f < hwm && state_[f] != State::leased) out.push_back(f);
            return out;
        }
        for (uint64_t i = 0; i < hwm && out.size() < budget; ++i) {
            if (state_[i] == State::unread || state_[i] == State::redeliver) out.push_back(i);
        }
        return out;
    }
    void leased(const Lease& lease) {
        uint64_t offset = lease.offset.value();
        state_[offset] = State::leased;
        ++delivered_[offset];
        leases_[offset] = Held{lease.lease_id, lease.deadline, lease.delivery};
    }
    // The code ack/extend/nack must answer for (offset, lease_id) before any cap check.
    bool current(uint64_t offset, LeaseId lease_id) const {
        auto it = leases_.find(offset);
        return it != leases_.end() && it->second.lease_id == lease_id;
    }
    Errc expected_ack(uint64_t offset, LeaseId lease_id) const {
        if (!current(offset, lease_id)) return Errc::gone;
        return Errc::ok;  // never refused for the cap: it gates delivery
    }
    void settle(uint64_t offset) {
        leases_.erase(offset);
        state_[offset] = State::acked;
    }
    void nack(uint64_t offset) {
        leases_.erase(offset);
        state_[offset] = State::redeliver;
    }
    void extend(uint64_t offset, MonoTime deadline) { leases_[offset].deadline = deadline; }
    void skip_below(uint64_t oldest) {
        for (uint64_t i = 0; i < oldest; ++i) settle(i);
    }

    const std::map<uint64_t, Held>& leases() const { return leases_; }
    uint32_t delivered(uint64_t offset) const { return delivered_[offset]; }
    State state(uint64_t offset) const { return state_[offset]; }

  private:
    std::vector<State> state_;
    std::vector<uint32_t> delivered_;  // how many leases each offset was handed out under
    std::map<uint64_t, Held> leases_;
    QueueLimits limits_;
};

// Drives a queue and its model with the same random operations and compares every answer.
class ModelRun {
  public:
    ModelRun(uint64_t seed, QueueLimits limits, ConsumerPosition start = {})
        : random_(seed),
          queue_(clock_, start, limits),
          model_(start.frontier.value(), to_set(start.acked_ahead), limits) {}

    void step() {
        int choice = pick(0, 99);
        if (choice < 10) {
            hwm_ = std::min(kMaxHighWatermark, hwm_ + pick(0, 6));
        } else if (choice < 35) {
            do_reserve(hwm_, pick(0, 8));
        } else if (choice < 60) {
            do_ack();
        } else if (choice < 68) {
            do_nack();
        } else if (choice < 76) {
            do_extend();
        } else if (choice < 90) {
            clock_.advance(Millis(pick(0, 12'000)));
        } else if (choice < 95) {
            do_bogus();
        } else if (choice < 98) {
            if (hwm_ == 0) return;
            uint64_t offset = pick(0, hwm_ - 1);  // a corrupt frame: below the high watermark
            queue_.skip(Offset(offset));
            if (model_.state(offset) != Model::State::acked) model_.settle(offset);
        } else {
            uint64_t oldest = model_.frontier() + pick(0, 3);
            queue_.skip_below(Offset(std::min(oldest, hwm_)));
            model_.skip_below(std::min(oldest, hwm_));
        }
        check_state();
    }

    // Lets every lease lapse, then reserves and acks everything below the high watermark.
    void drain() {
        clock_.advance(kVisibility);
        for (int round = 0; round < 10'000 && queue_.position().frontier < Offset(hwm_); ++round) {
            auto leases = queue_.reserve(Offset(hwm_), 64);
            model_.expire(clock_.now());
            ASSERT_FALSE(leases.empty()) << "nothing deliverable below the high watermark";
            for (const auto& lease : leases) {
                model_.leased(lease);
                ASSERT_TRUE(queue_.ack(lease.offset, lease.lease_id).is_ok());
                model_.settle(lease.offset.value());
            }
        }
    }

    void do_reserve(uint64_t hwm, size_t max) {
        model_.expire(clock_.now());
        auto expected = model_.expected_reserve(hwm, max);
        auto leases = queue_.reserve(Offset(hwm), max);
        std::vector<uint64_t> got;
        for (const auto& lease : leases) {
            got.push_back(lease.offset.value());
            EXPECT_TRUE(lease_ids_.insert(lease.lease_id).second) << "lease id reused";
            EXPECT_EQ(lease.delivery, model_.delivered(lease.offset.value()) + 1);
            EXPECT_EQ(lease.deadline, clock_.now() + kVisibility);
            model_.leased(lease);
            handles_.push_back(lease);
        }
        ASSERT_EQ(got, expected) << "reserve(" << hwm << ", " << max << ")";
    }

    FakeClock& clock() { return clock_; }
    PartitionQueue& queue() { return queue_; }
    Model& model() { return model_; }
    uint64_t hwm() const { return hwm_; }

  private:
    static std::set<uint64_t> to_set(const std::vector<Offset>& offsets) {
        std::set<uint64_t> out;
        for (Offset o : offsets) out.insert(o.value());
        return out;
    }
    uint64_t pick(uint64_t low, uint64_t high) {
        return std::uniform_int_distribution<uint64_t>(low, high)(random_);
    }
    // A handle from the past: usually a recent one, sometimes stale.
    std::optional<Lease> any_handle() {
        if (handles_.empty()) return std::nullopt;
        size_t recent = std::min<size_t>(handles_.size(), 16);
        if (pick(0, 3) == 0) return handles_[pick(0, handles_.size() - 1)];
        return handles_[handles_.size() - 1 - pick(0, recent - 1)];
    }
    void do_ack() {
        auto handle = any_handle();
        if (!handle) return;
        model_.expire(clock_.now());
        uint64_t offset = handle->offset.value();
        Errc expected = model_.expected_ack(offset, handle->lease_id);
        EXPECT_EQ(queue_.ack(handle->offset, handle->lease_id).code(), expected);
        if (expected == Errc::ok) model_.settle(offset);
    }
    void do_nack() {
        auto handle = any_handle();
        if (!handle) return;
        model_.expire(clock_.now());
        uint64_t offset = handle->offset.value();
        bool current = model_.current(offset, handle->lease_id);
        EXPECT_EQ(queue_.nack(handle->offset, handle->lease_id).is_ok(), current);
        if (current) model_.nack(offset);
    }
    void do_extend() {
        auto handle = any_handle();
        if (!handle) return;
        model_.expire(clock_.now());
        uint64_t offset = handle->offset.value();
        bool current = model_.current(offset, handle->lease_id);
        auto deadline = queue_.extend(handle->offset, handle->lease_id);
        EXPECT_EQ(deadline.is_ok(), current);
        if (current && deadline.is_ok()) {
            EXPECT_EQ(*deadline, clock_.now() + kVisibility);
            model_.extend(offset, *deadline);
        }
    }
    void do_bogus() {
        uint64_t offset = pick(0, hwm_ + 2);
        EXPECT_EQ(queue_.ack(Offset(offset), LeaseId(0)).code(), Errc::gone);
    }
    void check_state() {
        model_.expire(clock_.now());
        (void)queue_.expire_leases();
        QueueStats stats = queue_.stats();
        ASSERT_EQ(stats.frontier, Offset(model_.frontier()));
        ASSERT_EQ(stats.in_flight, model_.leases().size());
        ASSERT_EQ(stats.acked_ahead, model_.acked_ahead());
        ASSERT_EQ(queue_.position().acked_ahead, model_.acked_ahead_offsets());
        std::optional<MonoTime> earliest;
        for (const auto& [offset, held] : model_.leases()) {
            if (!earliest || held.deadline < *earliest) earliest = held.deadline;
        }
        ASSERT_EQ(queue_.next_deadline(), earliest);
    }

    std::mt19937_64 random_;
    FakeClock clock_;
    uint64_t hwm_ = 0;
    PartitionQueue queue_;
    Model model_;
    std::vector<Lease> handles_;
    std::set<LeaseId> lease_ids_;
};

QueueLimits limits_for_seed(uint64_t seed) {
    // Small caps so both are hit often; a few runs with caps that never bind.
    static constexpr uint32_t kCaps[] = {1, 2, 4, 8, 1024};
    return QueueLimits{kVisibility, kCaps[seed % 5], kCaps[(seed / 5) % 5]};
}

// Rule: every answer of the queue (reserve's offsets and deliveries, ack/extend/nack codes, the
// frontier, the acked-ahead set, the in-flight count) matches the reference model, and every offset
// below the high watermark is eventually delivered: after acking everything delivered, the frontier
// reaches the high watermark.
TEST(PartitionQueueModelTest, RandomOperationsMatchTheModelAndLoseNothing) {
    for (uint64_t seed = 1; seed <= 50; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        ModelRun run(seed, limits_for_seed(seed));
        for (int i = 0; i < 3000 && !::testing::Test::HasFatalFailure(); ++i) run.step();
        if (::testing::Test::HasFatalFailure()) return;
        run.drain();
        if (::testing::Test::HasFatalFailure()) return;
        EXPECT_EQ(run.queue().position(), (ConsumerPosition{Offset(run.hwm()), {}}));
        for (uint64_t offset = 0; offset < run.hwm(); ++offset) {
            ASSERT_EQ(run.model().state(offset), Model::State::acked) << offset;
        }
    }
}

// Rule: a queue rebuilt from a position persisted mid-run skips no offset that was not acked when
// the position was written: each is delivered again, and only acked offsets are left out.
TEST(PartitionQueueModelTest, RestartFromPersistedPositionSkipsNothingUnacked) {
    TempDirForTest dir;
    std::string path = dir.file(kConsumerOffsetFile);
    for (uint64_t seed = 100; seed < 120; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        QueueLimits limits = limits_for_seed(seed);
        ModelRun run(seed, limits);
        for (int i = 0; i < 1500; ++i) run.step();
        ASSERT_TRUE(
            write_consumer_position(io::posix_file_system(), path, run.queue().position()).is_ok());
        std::set<uint64_t> acked_when_written;
        for (uint64_t offset = 0; offset < kMaxHighWatermark; ++offset) {
            if (run.model().state(offset) == Model::State::acked) acked_when_written.insert(offset);
        }
        for (int i = 0; i < 500; ++i) run.step();  // more acks that the crash will lose
        uint64_t hwm = run.hwm();
        if (::testing::Test::HasFatalFailure()) return;

        auto position = read_consumer_position(io::posix_file_system(), path);
        ASSERT_TRUE(position.is_ok()) << position.status().to_string();
        for (uint64_t offset = 0; offset < position->frontier.value(); ++offset) {
            ASSERT_TRUE(acked_when_written.contains(offset)) << offset;
        }
        for (Offset offset : position->acked_ahead) {
            ASSERT_TRUE(acked_when_written.contains(offset.value())) << offset.value();
        }

        FakeClock clock;
        PartitionQueue restarted(clock, *position, limits);
        std::set<uint64_t> redelivered;
        for (int round = 0; round < 10'000 && restarted.position().frontier < Offset(hwm);
             ++round) {
            auto leases = restarted.reserve(Offset(hwm), 64);
            ASSERT_FALSE(leases.empty());
            for (const auto& lease : leases) {
                redelivered.insert(lease.offset.value());
                ASSERT_TRUE(restarted.ack(lease.offset, lease.lease_id).is_ok());
            }
        }
        for (uint64_t offset = 0; offset < hwm; ++offset) {
            if (!acked_when_written.contains(offset)) {
                EXPECT_TRUE(redelivered.contains(offset)) << "offset " << offset << " skipped";
            }
        }
    }
}

}  // namespace
}  // namespace narad::queue
