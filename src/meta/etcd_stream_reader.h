// EtcdStreamReader: the thread that reads one etcd stream for a watch or an election observer,
// the stream it has open, and the stop that ends both. Private to meta/ (etcd_client_watch.cc,
// etcd_client_observe.cc), which own what the stream says; this class owns only how it stops.
//
// Threads: stop() (and so the destructor) may be called from any thread but the reader's own.
// install(), stream(), close() and wait_backoff() belong to the reader thread, or to the thread
// that created the reader before start(). stopping() may be called from any thread.
//
// Stopping: stop() sets the flag and cancels the open stream under the lock, so a next() blocked
// in the reader returns; a stream opened while stop() runs is refused by install(), never read.
// Then it wakes a back-off wait and joins the thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "meta/etcd_client.h"

namespace narad::meta {

class EtcdStreamReader {
  public:
    // Back-offs are waited for on `clock`.
    explicit EtcdStreamReader(Clock& clock) : clock_(clock) {}
    ~EtcdStreamReader() { stop(); }
    EtcdStreamReader(const EtcdStreamReader&) = delete;
    EtcdStreamReader& operator=(const EtcdStreamReader&) = delete;

    // Runs `body` on a new thread named `name`; at most once.
    void start(std::string name, std::function<void()> body);
    // Ends the reader: nothing it opens from now on is read, and the thread has returned when
    // stop() does. The owner calls it before destroying what `body` uses.
    void stop() EXCLUDES(mutex_);
    bool stopping() const EXCLUDES(mutex_);

    // Makes a freshly opened stream the open one; Errc::shutting_down (and the stream is
    // dropped) once stop() began.
    Status install(std::unique_ptr<EtcdStream> stream) EXCLUDES(mutex_);
    // The open stream, if any. Only the reader thread replaces it (stop() only cancels it), so
    // that thread may go on using the pointer once it has read it.
    EtcdStream* stream() EXCLUDES(mutex_);
    // Drops the open stream.
    void close() EXCLUDES(mutex_);
    // Waits `delay` on the clock; false when stop() began before or during the wait.
    bool wait_backoff(Millis delay) EXCLUDES(mutex_);

  private:
    Clock& clock_;
    mutable Mutex mutex_;
    CondVar wake_;
    bool stopping_ GUARDED_BY(mutex_) = false;
    std::unique_ptr<EtcdStream> stream_ GUARDED_BY(mutex_);
    std::thread thread_;
};

}  // namespace narad::meta
