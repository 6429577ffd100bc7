// The chaos suite's recorder (docs/reliability.md): a History of every client operation, one JSON
// line each with its call and return times on one monotonic clock, and the recorded workload that
// writes it: producers of checksummed messages and consumers that ack (or now and then nack)
// what they get, through chosen nodes, on threads of their own. The checker
// (tests/chaos/check_history.py) reads the history once the run has healed and drained.
//
// Threads: History and RecordedTraffic may be called from any thread (one mutex guards the file;
// the traffic's threads are its own).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "cluster/harness.h"
#include "cluster/ledger.h"

namespace narad::testing {

// Nanoseconds since the history started, on the steady clock.
using HistoryTime = int64_t;

class History {
  public:
    explicit History(const std::string& path);
    ~History();
    History(const History&) = delete;
    History& operator=(const History&) = delete;

    HistoryTime now() const;
    // Appends one record; `call` and `return` are set from the arguments.
    void record(nlohmann::json entry, HistoryTime call, HistoryTime returned);
    // A meta record at the current time.
    void meta(const std::string& event, nlohmann::json fields = nlohmann::json::object());
    // A fault active over [start, end].
    void fault(const std::string& kind, int node, HistoryTime start, HistoryTime end,
               const std::string& detail = "");
    const std::string& path() const { return path_; }
    int64_t lines();

  private:
    std::string path_;
    std::chrono::steady_clock::time_point start_;
    Mutex mutex_;
    std::FILE* file_ GUARDED_BY(mutex_) = nullptr;
    int64_t lines_ GUARDED_BY(mutex_) = 0;
};

// A message's payload: {"id":N,"pad":"...","sum":"<16 hex digits>"}, the pad random (seeded by the
// id) and the sum a checksum of the id and the pad.
std::string checksummed_payload(int id, size_t pad_bytes);
// The id of a delivered payload and whether its checksum holds (id -1: not one of ours).
struct PayloadCheck {
    int id = -1;
    bool checksum_ok = false;
};
PayloadCheck check_payload(const nlohmann::json& payload);

struct TrafficOptions {
    std::string topic;
    int producers_per_node = 1;
    int per_second = 100;  // per producer
    size_t pad_bytes = 200;
    double nack_fraction = 0.02;
    uint64_t seed = 1;
};

// Producers and consumers recording into a History and a Ledger (which ids were accepted and
// delivered, for the drain). A producer whose node does not answer moves on to the next node.
class RecordedTraffic {
  public:
    RecordedTraffic(Cluster& cluster, History& history, Ledger& ledger, TrafficOptions options);
    ~RecordedTraffic();

    // Producers start on `nodes` (indices); each moves to the next of them on a failure.
    void produce(const std::vector<int>& nodes);
    // One consumer per index in `nodes`, each staying on its node.
    void consume(const std::vector<int>& nodes);
    void stop_producers();
    void stop_consumers();
    // Stops the producers, lets the consumers run until every accepted id was delivered or
    // `timeout` passed, then stops them; returns whether nothing is missing.
    bool drain(std::chrono::milliseconds timeout);

    int64_t produced_ok() const { return produced_ok_.load(); }

  private:
    void producer(int slot, std::vector<int> nodes);
    void consumer(int slot, int node);

    Cluster& cluster_;
    History& history_;
    Ledger& ledger_;
    TrafficOptions options_;
    std::atomic<int> next_id_{0};
    std::atomic<int64_t> produced_ok_{0};
    std::atomic<bool> stop_producing_{false};
    std::atomic<bool> stop_consuming_{false};
    std::vector<std::thread> producers_;
    std::vector<std::thread> consumers_;
};

// Runs the checker on the history; returns its exit status (0 PASS, 1 FAIL, 2 UNKNOWN, 3 bad
// history) and prints its report.
int run_checker(const std::string& history_path);

}  // namespace narad::testing
