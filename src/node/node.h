// Node: builds every component of a single Narad node from its Config, starts them in dependency
// order (metastore, start-up sweep, WAL recovery, consumer offsets, dispatcher, HTTP) and stops
// them in reverse, so nothing acknowledged is lost at shutdown: parked long-polls are answered, the
// HTTP server drains, the dispatcher finishes its batch, consumer positions are flushed.
// start()/stop() from one thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "base/status.h"
#include "node/config.h"

namespace narad::node {

class Node {
  public:
    explicit Node(Config config);
    ~Node();

    Status start();
    // Loads the API, metrics and cluster ports' TLS files again (SIGHUP; also done by itself when
    // one of them changes): new connections use them. On failure the old ones stay in force.
    Status reload_tls();
    void stop();
    // Called once, on a metastore thread, when this node's member record is removed at the end
    // of its decommission; it must not block (the caller stops the node). Set before start().
    void on_decommissioned(std::function<void()> callback);

    // The bound public port (useful when configured with port 0).
    uint16_t http_port() const;
    bool ready() const;

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace narad::node
