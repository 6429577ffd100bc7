// InFlightLimits: Narad's flow control on the public port, applied to each request's head before
// its body is read (Router::screen), so a refused request costs no body:
// - a cap on concurrent consumes per identity (`http.max_consume_in_flight_per_identity`); a batch
//   consume counts as its `max`, clamped to the cap;
// - a cap on concurrent produces per identity (`http.max_produce_in_flight_per_identity`); a batch
//   counts as one while its body is read, then as its message count, clamped to the cap
//   (produce_batch resizes its admission);
// - a node-wide budget for the bodies of batch produces over 1 MiB
//   (`http.max_batch_body_bytes_in_flight`).
// A capped request is answered 429, a batch over the budget 503, both with Retry-After: 1; what an
// admitted request holds is released when it is answered (net::Admission). The identity is the
// head's `user` when an earlier screen named one (credentials this node verified before, as
// Narad keys its caps by user), else the client's IP address. A cap or
// budget of 0 is off. Thread-safe; the admissions it hands out may outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "net/http.h"

namespace narad::api {

struct InFlightOptions {
    int64_t max_consume_per_identity = 1024;
    int64_t max_produce_per_identity = 0;
    int64_t max_batch_body_bytes = 256ll << 20;
};

// A batch body this large or smaller is not charged to the budget (Narad's threshold).
inline constexpr uint64_t kBudgetedBatchBodyBytes = 1 << 20;

class InFlightLimits {
  public:
    enum class Kind { produce, consume };

    explicit InFlightLimits(InFlightOptions options);
    ~InFlightLimits();

    // nullopt admits the request (what it holds is in head.admission); otherwise the refusal.
    std::optional<net::HttpResponse> screen(net::HttpRequest& head);

    // What is held now, for tests and metrics.
    int64_t in_flight(Kind kind, const std::string& identity) const;
    int64_t batch_body_bytes_in_flight() const;

    struct State;

  private:
    std::shared_ptr<State> state_;
};

}  // namespace narad::api
