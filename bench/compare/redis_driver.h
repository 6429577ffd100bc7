// Redis Streams through hiredis: one stream per partition (bench:0 … bench:<P-1>), producers
// pipelining XADD (batchSize commands per flush, one flush in flight per connection: the same
// window as Narad's batch route), and one consumer group read by every consumer connection with
// XREADGROUP over all the streams (COUNT batchSize, BLOCK 500 ms) followed by a pipelined XACK
// per stream. Two durability settings of the same server: appendonly yes with appendfsync always
// (an fsync before replies, like Narad) or everysec. Called by the runner thread; run() starts
// and joins one thread per connection.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compare/driver.h"

struct redisContext;

namespace narad::compare {

class RedisDriver final : public Driver {
  public:
    enum class Fsync { always, everysec };
    explicit RedisDriver(Fsync fsync) : fsync_(fsync) {}
    ~RedisDriver() override;

    std::string system() const override;
    std::string durability() const override;
    Status start(const DriverEnv& env) override;
    Status prepare(const Workload& workload) override;
    Status connect(const Workload& workload) override;
    Status run(const Workload& workload, Flow& flow) override;
    void disconnect() override;
    void stop() override;
    std::vector<std::string> notes() const override { return notes_; }
    ServerProcess& server() override { return server_; }

  private:
    struct ContextDeleter {
        void operator()(redisContext* context) const;
    };
    using Context = std::unique_ptr<redisContext, ContextDeleter>;
    Result<Context> open() const;
    // A numeric field of INFO persistence ("aof_rewrites"), or nullopt.
    std::optional<int64_t> persistence_field(const std::string& name) const;

    const Fsync fsync_;
    ServerProcess server_;
    uint16_t port_ = 0;
    std::vector<std::string> streams_;
    std::vector<Context> producers_;
    std::vector<Context> consumers_;
    std::vector<std::string> notes_;
};

}  // namespace narad::compare
