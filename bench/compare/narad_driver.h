// Narad over its public HTTP API, in one of two shapes: the single-message routes as users call
// them today (POST /produce, GET /consume, POST /ack: one message per request) or the batch
// routes (POST /produce/batch, GET /consume?max=N, POST /ack/batch). It drives a `narad serve`
// child with net::LoadClient (one event-loop thread for the producers, one for the consumers)
// and the request/response shapes of `narad bench` (cli/bench_workload.h). Called by the runner
// thread only; its LoadClient callbacks run on the client threads inside run().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compare/driver.h"

namespace narad::compare {

// Narad's topic limits (docs/api.md: partitions 3 to 108).
inline constexpr uint32_t kNaradPartitionsMin = 3;
inline constexpr uint32_t kNaradPartitionsMax = 108;

class NaradDriver final : public Driver {
  public:
    enum class Routes { single, batch };
    explicit NaradDriver(Routes routes) : routes_(routes) {}

    std::string system() const override;
    std::string durability() const override;
    Status start(const DriverEnv& env) override;
    Status prepare(const Workload& workload) override;
    Status connect(const Workload&) override { return Status::ok(); }
    Status run(const Workload& workload, Flow& flow) override;
    void disconnect() override {}
    void stop() override;
    std::vector<std::string> notes() const override { return notes_; }
    ServerProcess& server() override { return server_; }

  private:
    const Routes routes_;
    ServerProcess server_;
    uint16_t port_ = 0;
    std::string topic_ = "bench";
    std::vector<std::string> notes_;
};

}  // namespace narad::compare
