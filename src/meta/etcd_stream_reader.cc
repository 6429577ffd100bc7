#include "meta/etcd_stream_reader.h"

#include "base/assert.h"
#include "base/thread_pool.h"

namespace narad::meta {

void EtcdStreamReader::start(std::string name, std::function<void()> body) {
    NARAD_ASSERT(!thread_.joinable(), "EtcdStreamReader started twice");
    thread_ = named_thread(std::move(name), std::move(body));
}

void EtcdStreamReader::stop() {
    {
        MutexLock lock(mutex_);
        stopping_ = true;
        if (stream_) stream_->cancel();
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

bool EtcdStreamReader::stopping() const {
    MutexLock lock(mutex_);
    return stopping_;
}

Status EtcdStreamReader::install(std::unique_ptr<EtcdStream> stream) {
    MutexLock lock(mutex_);
    // Checked under the lock stop() cancels under: a stream installed here is cancelled by a
    // stop() that comes later, and one refused here was never seen by the reader.
    if (stopping_) return Status(Errc::shutting_down, "the etcd stream reader is stopping");
    stream_ = std::move(stream);
    return Status::ok();
}

EtcdStream* EtcdStreamReader::stream() {
    MutexLock lock(mutex_);
    return stream_.get();
}

void EtcdStreamReader::close() {
    MutexLock lock(mutex_);
    stream_.reset();
}

bool EtcdStreamReader::wait_backoff(Millis delay) {
    MutexLock lock(mutex_);
    return !clock_.wait_for(lock, wake_, delay, [this]() REQUIRES(mutex_) { return stopping_; });
}

}  // namespace narad::meta
