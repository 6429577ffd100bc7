// The interface every system under test implements for `narad-compare`: start its server on
// loopback in a fresh data directory, prepare the topic/stream for a workload, open the client
// connections, run one phase of producers and consumers against a Flow (compare/flow.h), and
// stop. The runner (compare/runner.h) owns a driver and calls it from one thread; a driver runs
// its own client threads inside run() and joins them before returning. kill_server() may be
// called from the runner's watchdog thread while run() is in progress.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "compare/flow.h"
#include "compare/server_process.h"
#include "compare/workload.h"

namespace narad::compare {

// Where the servers come from and where they keep their data.
struct DriverEnv {
    std::string narad_path = "narad";
    std::string nats_server_path = "nats-server";
    std::string redis_server_path = "redis-server";
    std::string data_dir;  // fresh, empty, owned by this driver's run
    int64_t start_timeout_ms = 30'000;
};

class Driver {
  public:
    virtual ~Driver() = default;

    // Short name, e.g. "narad-batch", and what an acknowledged produce survives.
    virtual std::string system() const = 0;
    virtual std::string durability() const = 0;

    // Starts the server and returns once it answers.
    virtual Status start(const DriverEnv& env) = 0;
    // Creates what `workload` needs (topic, stream and consumer, groups).
    virtual Status prepare(const Workload& workload) = 0;
    // Opens the client connections (kept for the warm-up and the measured phase).
    virtual Status connect(const Workload& workload) = 0;
    // Runs one phase: producers until flow.claim() ends, then consumers until
    // flow.consumers_should_stop(); calls flow.start() once its connections are ready and
    // flow.producers_finished() when every produce has been answered. An error means the
    // phase could not run at all; partial outcomes are in the Flow.
    virtual Status run(const Workload& workload, Flow& flow) = 0;
    // Closes the client connections.
    virtual void disconnect() = 0;
    // Stops the server (after reading its /proc figures).
    virtual void stop() = 0;
    // Notes worth printing beside the row (e.g. a partition count raised to Narad's minimum),
    // or a server-side check that failed.
    virtual std::vector<std::string> notes() const { return {}; }

    virtual ServerProcess& server() = 0;
};

// The systems, in the order they run: narad-single, narad-batch, nats, redis-always,
// redis-everysec.
const std::vector<std::string>& all_systems();
// A driver for `system`, or invalid_argument.
Result<std::unique_ptr<Driver>> make_driver(const std::string& system);

}  // namespace narad::compare
