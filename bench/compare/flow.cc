#include "compare/flow.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "base/assert.h"
#include "base/mutex.h"

namespace narad::compare {
namespace {

using cli::bench::mono_ns;
using cli::bench::wall_ns;

// A paced producer sleeps in slices this long at most, so an abort is noticed promptly.
constexpr int64_t kSleepSliceNs = 100'000'000;

void sleep_until(int64_t due_ns) {
    const int64_t now = mono_ns();
    if (due_ns > now) std::this_thread::sleep_for(std::chrono::nanoseconds(due_ns - now));
}

}  // namespace

// ---- IdPayload ----

IdPayload::IdPayload(uint64_t size, std::string run_id)
    : inner_(int64_t(std::max<uint64_t>(size, kMinSize)), std::move(run_id)) {
    NARAD_ASSERT(size >= kMinSize, "payload too small to carry an id");
    // The filler after the run id is ours to use (bench_payload.h documents the layout:
    // {"bench":"<run id>xxx…","t":<digits>}); the id goes right after the run id.
    const std::string sample = inner_.make(0);
    id_position_ = sample.find(inner_.run_id()) + inner_.run_id().size();
    NARAD_ASSERT(id_position_ + kIdDigits + 8 < sample.size(), "no room for the id");
}

std::string IdPayload::make(uint64_t id, int64_t sent_wall_ns) const {
    std::string payload = inner_.make(sent_wall_ns);
    static constexpr char kHex[] = "0123456789abcdef";
    for (size_t i = 0; i < kIdDigits; ++i) {
        payload[id_position_ + kIdDigits - 1 - i] = kHex[id & 0xf];
        id >>= 4;
    }
    return payload;
}

std::optional<IdPayload::Parsed> IdPayload::parse(std::string_view payload) const {
    auto sent = inner_.sent_at(payload);
    if (!sent || payload.size() < id_position_ + kIdDigits) return std::nullopt;
    uint64_t id = 0;
    for (size_t i = 0; i < kIdDigits; ++i) {
        const char c = payload[id_position_ + i];
        uint64_t digit = 0;
        if (c >= '0' && c <= '9') {
            digit = uint64_t(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            digit = uint64_t(c - 'a' + 10);
        } else {
            return std::nullopt;
        }
        id = (id << 4) | digit;
    }
    return Parsed{id, *sent};
}

// ---- plan rules ----

uint64_t flow_capacity(const FlowPlan& plan) {
    uint64_t capacity = kFlowCapacityMax;
    if (plan.capacity > 0) {
        capacity = plan.capacity;
    } else if (plan.count > 0) {
        capacity = plan.count;
    } else if (plan.rate > 0 && plan.duration_ns > 0) {
        capacity = uint64_t(std::ceil(plan.rate * double(plan.duration_ns) / 1e9)) + 1;
    }
    return std::min(capacity, kFlowCapacityMax);
}

bool consumers_should_stop(const DrainInputs& in) {
    if (in.aborted) return true;
    if (!in.producers_finished) return false;
    if (in.acked_unique >= in.produced_ok) return true;
    return in.now_ns - in.producers_finished_at_ns >= in.drain_timeout_ns;
}

// ---- Flow ----

Flow::Flow(FlowPlan plan, const IdPayload& payload)
    : plan_(plan),
      payload_(payload),
      capacity_(flow_capacity(plan)),
      pacer_(plan.rate, 1),
      acked_bits_(new std::atomic<uint64_t>[(capacity_ + 63) / 64]) {
    for (uint64_t i = 0; i < (capacity_ + 63) / 64; ++i) acked_bits_[i].store(0);
    start_ns_ = mono_ns();
}

void Flow::start() { start_ns_ = mono_ns(); }

bool Flow::ended(uint64_t next_id, int64_t now_ns) const {
    if (next_id >= capacity_) return true;
    if (plan_.count > 0) return next_id >= plan_.count;
    const int64_t end_ns = start_ns_ + plan_.duration_ns;
    if (now_ns >= end_ns) return true;
    if (pacer_.limited()) return start_ns_ + pacer_.due_offset_ns(next_id) >= end_ns;
    return false;
}

std::optional<Flow::Claim> Flow::claim(uint32_t max) {
    max = std::max<uint32_t>(max, 1);
    for (;;) {
        if (aborted()) return std::nullopt;
        const int64_t now = mono_ns();
        if (now >= deadline_ns()) {
            abort("timed out producing");
            return std::nullopt;
        }
        uint64_t id = next_id_.load();
        if (ended(id, now)) return std::nullopt;
        uint64_t limit = capacity_;
        if (plan_.count > 0) limit = std::min(limit, plan_.count);
        uint64_t n = std::min<uint64_t>(max, limit - id);
        if (pacer_.limited()) {
            const int64_t due_at = start_ns_ + pacer_.due_offset_ns(id);
            if (due_at > now) {
                sleep_until(std::min({due_at, now + kSleepSliceNs, deadline_ns()}));
                continue;
            }
            // Ids [0, due) are due by now; `id` itself is, whatever the rounding says.
            const uint64_t due = uint64_t(double(now - start_ns_) / 1e9 * plan_.rate) + 1;
            n = std::min<uint64_t>(n, due > id ? due - id : 1);
        }
        if (next_id_.compare_exchange_weak(id, id + n)) return Claim{id, uint32_t(n)};
    }
}

std::string Flow::payload(uint64_t id) const { return payload_.make(id, wall_ns()); }

void Flow::produced(uint64_t messages, int64_t latency_ns) {
    produce_.success(messages, latency_ns, mono_ns());
}

void Flow::produce_failed(uint64_t messages, std::string_view reason) {
    produce_.failure(messages, reason);
}

void Flow::producers_finished() {
    producers_finished_at_ns_ = mono_ns();
    producers_finished_ = true;
}

std::optional<uint64_t> Flow::received(std::string_view payload) {
    ++received_;
    auto parsed = payload_.parse(payload);
    if (!parsed || parsed->id >= capacity_) {
        ++foreign_;
        return std::nullopt;
    }
    end_to_end_.record(wall_ns() - parsed->sent_wall_ns);
    return parsed->id;
}

void Flow::acked(uint64_t id) {
    if (id >= capacity_) return;
    const uint64_t mask = uint64_t{1} << (id % 64);
    if (acked_bits_[id / 64].fetch_or(mask) & mask) {
        ++duplicates_;
        return;
    }
    ++acked_unique_;
    const int64_t now = mono_ns();
    int64_t last = last_ack_ns_.load();
    while (now > last && !last_ack_ns_.compare_exchange_weak(last, now)) {
    }
}

void Flow::acks_answered(uint64_t messages, int64_t latency_ns) {
    acks_.success(messages, latency_ns, mono_ns());
}

void Flow::ack_failed(uint64_t messages, std::string_view reason) {
    acks_.failure(messages, reason);
}

void Flow::consume_failed(std::string_view reason) {
    MutexLock lock(mutex_);
    ++consume_errors_[std::string(reason)];
}

bool Flow::consumers_should_stop() const {
    DrainInputs in;
    in.aborted = aborted();
    in.producers_finished = producers_finished_.load();
    in.produced_ok = produce_.ok();
    in.acked_unique = acked_unique_.load();
    in.now_ns = mono_ns();
    in.producers_finished_at_ns = producers_finished_at_ns_.load();
    in.drain_timeout_ns = plan_.drain_timeout_ns;
    if (!in.aborted && in.now_ns >= deadline_ns()) return true;
    return compare::consumers_should_stop(in);
}

void Flow::abort(std::string_view reason) {
    MutexLock lock(mutex_);
    if (abort_reason_.empty()) abort_reason_ = std::string(reason);
    aborted_ = true;
}

std::string Flow::abort_reason() const {
    MutexLock lock(mutex_);
    return abort_reason_;
}

std::map<std::string, uint64_t> Flow::consume_errors() const {
    MutexLock lock(mutex_);
    return consume_errors_;
}

}  // namespace narad::compare
