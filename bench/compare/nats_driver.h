// NATS JetStream through the C client (libnats): one work-queue stream on file storage (subjects
// bench.0 … bench.<P-1> when the workload has P > 1 partitions), producers publishing
// asynchronously with a bounded window of outstanding acks (batchSize per connection), and one
// durable pull consumer with explicit ack shared by every consumer connection. Each consumer
// keeps one pull request for batchSize messages open on its own inbox and handles (and acks)
// messages as they arrive, so none waits for its batch to fill. Called by the runner thread; the
// library's own threads run the publish-ack callbacks inside run().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compare/driver.h"

namespace narad::compare {

class NatsDriver final : public Driver {
  public:
    NatsDriver();
    ~NatsDriver() override;

    std::string system() const override { return "nats"; }
    std::string durability() const override;
    Status start(const DriverEnv& env) override;
    Status prepare(const Workload& workload) override;
    Status connect(const Workload& workload) override;
    Status run(const Workload& workload, Flow& flow) override;
    void disconnect() override;
    void stop() override;
    std::vector<std::string> notes() const override { return notes_; }
    ServerProcess& server() override { return server_; }

    struct Client;  // one connection with its JetStream context (nats_driver.cc)

  private:
    std::string url() const;
    Status check_drained(const Workload& workload);

    ServerProcess server_;
    uint16_t port_ = 0;
    std::vector<std::unique_ptr<Client>> producers_;
    std::vector<std::unique_ptr<Client>> consumers_;
    std::vector<std::string> subjects_;
    std::vector<std::string> notes_;
};

}  // namespace narad::compare
