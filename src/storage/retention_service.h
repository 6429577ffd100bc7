// RetentionService: the node's retention loop over its partition logs. Each pass deletes the
// expired segments of every open log, closes the logs left idle for `idle_eviction` and gives the
// memory freed since the last pass back to the system; a pass at least `cold_walk_interval` after
// the last walk also walks the closed logs, opening one only when its directory shows an expired
// segment and closing it again after (LogManager::sweep_closed). The loop runs a pass every
// `check_interval`.
//
// Which topics exist, with how many partitions and what retention, comes from `topics` (the node
// reads them from the metastore, which storage does not see). start()/stop() from one thread;
// run_once() runs on the loop's thread only (or a test's, with the loop not started).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/periodic.h"
#include "storage/log_manager.h"

namespace narad::storage {

// One topic as retention sees it.
struct TopicRetention {
    std::string topic;
    uint32_t partitions = 0;
    Millis retention{0};  // 0 keeps its records forever
};

struct RetentionOptions {
    Millis check_interval{60'000};
    Millis cold_walk_interval{0};  // 0: closed logs are never walked
    Millis idle_eviction{0};       // 0: open logs are never closed for idleness
};

class RetentionService {
  public:
    using Topics = std::function<std::vector<TopicRetention>()>;

    RetentionService(Clock& clock, LogManager& logs, Topics topics, RetentionOptions options);
    ~RetentionService();  // stops

    void start();
    void stop();
    // One pass (see the file comment).
    void run_once();

  private:
    Clock& clock_;
    LogManager& logs_;
    Topics topics_;
    RetentionOptions options_;
    std::optional<MonoTime> last_cold_walk_;  // on the pass's thread only
    PeriodicTask loop_;                       // last: stopped before the rest goes
};

}  // namespace narad::storage
