#include "cli/ack_retry.h"

#include "cli/calls.h"
#include "cli/text.h"

namespace narad::cli {

AckRetryPolicy::Next AckRetryPolicy::after(int attempt, const Status& result) const {
    if (result.is_ok()) return Next::done;
    if (is_http_error(result, 410)) return Next::lapsed;
    if (attempt >= max_attempts) return Next::give_up;
    return Next::retry;
}

AckOutcome ack_with_retry(Api& api, std::string_view topic, std::string_view receipt_handle,
                          Sleeper& sleeper, const std::function<void(const std::string&)>& note,
                          const AckRetryPolicy& policy) {
    const std::string target =
        topic_path(topic) + "/ack?receipt_handle=" + query_escape(receipt_handle);
    for (int attempt = 1; !sleeper.stopped(); ++attempt) {
        auto response = send(api, "POST", target);
        const Status result = response.is_ok() ? Status::ok() : response.status();
        switch (policy.after(attempt, result)) {
            case AckRetryPolicy::Next::done:
                return AckOutcome::acked;
            case AckRetryPolicy::Next::lapsed:
                note("lease lapsed before ack (410) \xe2\x80\x94 message may redeliver");
                return AckOutcome::lapsed;
            case AckRetryPolicy::Next::give_up:
                note("ack failed after retries: " + result.message());
                return AckOutcome::failed;
            case AckRetryPolicy::Next::retry:
                if (!sleeper.sleep_for(policy.backoff(attempt))) return AckOutcome::interrupted;
                break;
        }
    }
    return AckOutcome::interrupted;
}

}  // namespace narad::cli
