// AuditLog: one JSON line per operator action (a move's abort, decommission and forget, every
// user and grant change): when, on which node, who asked, what, on what, and how it ended. Each
// line is written to the node's log with component=audit (what Narad's log pipelines match on) and
// appended to <data>/audit.log, synced before record() returns, so the trail survives a crash.
// Thread-safe; record() blocks on disk (call it off the HTTP threads).
#pragma once

#include <memory>
#include <string>

#include "base/clock.h"
#include "base/ids.h"
#include "base/mutex.h"
#include "io/file_system.h"

namespace narad::api {

struct AuditEvent {
    std::string event;    // cluster.move.abort, ...
    std::string actor;    // the authenticated user; with security off, the client's address
    std::string target;   // what it acted on: "orders/3 n1->n2"
    std::string outcome;  // ok | denied (403) | rejected | unknown | failed
    std::string detail;   // the answer's message
    int status = 0;       // the HTTP status the client got (0: not recorded)
};

class AuditLog {
  public:
    AuditLog(io::FileSystem& fs, Clock& clock, std::string path, NodeId node);
    void record(const AuditEvent& event);

  private:
    io::FileSystem& fs_;
    Clock& clock_;
    std::string path_;
    NodeId node_;
    Mutex mutex_;
    std::unique_ptr<io::File> file_ GUARDED_BY(mutex_);
    uint64_t size_ GUARDED_BY(mutex_) = 0;
};

}  // namespace narad::api
