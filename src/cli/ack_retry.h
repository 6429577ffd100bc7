// The ack discipline of the Go CLI, shared by `sub` and `bench`: a failed ack is retried, never
// dropped — up to 5 attempts with a backoff of attempt × 200 ms — except a 410, which means the
// lease already lapsed (the message will redeliver) and is a fact, not a failure. The policy is a
// pure function; ack_with_retry performs it with an injected Sleeper. Any thread, one call at a
// time per Api.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cli/api.h"
#include "cli/sleeper.h"

namespace narad::cli {

struct AckRetryPolicy {
    int max_attempts = 5;
    std::chrono::milliseconds backoff_step{200};

    enum class Next { done, lapsed, retry, give_up };

    // What to do after attempt number `attempt` (1-based) ended with `result` (an error from
    // `send`, or ok).
    Next after(int attempt, const Status& result) const;
    // The pause before the attempt that follows attempt `attempt`.
    std::chrono::milliseconds backoff(int attempt) const { return backoff_step * attempt; }
};

enum class AckOutcome { acked, lapsed, failed, interrupted };

// POST /v1/topics/<t>/ack?receipt_handle=<QueryEscaped handle>, retried per `policy`. Lines meant
// for the user (already worded as Go prints them, not yet dimmed) go to `note`.
AckOutcome ack_with_retry(Api& api, std::string_view topic, std::string_view receipt_handle,
                          Sleeper& sleeper, const std::function<void(const std::string&)>& note,
                          const AckRetryPolicy& policy = {});

}  // namespace narad::cli
