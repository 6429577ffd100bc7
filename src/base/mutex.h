#pragma once

// Locks that clang's thread-safety analysis checks (`-Wthread-safety`, run by
// scripts/thread-safety.py in CI). A member declared `GUARDED_BY(mutex_)` may be read or written
// only while `mutex_` is held; a function declared `REQUIRES(mutex_)` may be called only with it
// held, and one declared `EXCLUDES(mutex_)` only without it. Other compilers see no attributes,
// and the types cost what the standard ones do.
//
//   Mutex mutex_;
//   int count_ GUARDED_BY(mutex_) = 0;
//   CondVar changed_;
//
//   void add() EXCLUDES(mutex_) {
//       MutexLock lock(mutex_);
//       ++count_;
//       changed_.notify_all();
//   }
//   void wait_for_one() {
//       MutexLock lock(mutex_);
//       changed_.wait(lock, [&]() REQUIRES(mutex_) { return count_ > 0; });
//   }
//
// A predicate or callback that runs under the lock says so with `REQUIRES(mutex_)` after its
// parameter list: the analysis checks a lambda's body as a function of its own.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#if defined(__clang__)
#define NARAD_THREAD_ATTRIBUTE(x) __attribute__((x))
#else
#define NARAD_THREAD_ATTRIBUTE(x)
#endif

#define CAPABILITY(name) NARAD_THREAD_ATTRIBUTE(capability(name))
#define SCOPED_CAPABILITY NARAD_THREAD_ATTRIBUTE(scoped_lockable)
#define GUARDED_BY(mutex) NARAD_THREAD_ATTRIBUTE(guarded_by(mutex))
#define ACQUIRED_BEFORE(...) NARAD_THREAD_ATTRIBUTE(acquired_before(__VA_ARGS__))
#define REQUIRES(...) NARAD_THREAD_ATTRIBUTE(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) NARAD_THREAD_ATTRIBUTE(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) NARAD_THREAD_ATTRIBUTE(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) NARAD_THREAD_ATTRIBUTE(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) NARAD_THREAD_ATTRIBUTE(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) NARAD_THREAD_ATTRIBUTE(release_shared_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) NARAD_THREAD_ATTRIBUTE(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) NARAD_THREAD_ATTRIBUTE(locks_excluded(__VA_ARGS__))
#define RETURN_CAPABILITY(mutex) NARAD_THREAD_ATTRIBUTE(lock_returned(mutex))
// For the rare function whose locking the analysis cannot follow; say why beside it.
#define NO_THREAD_SAFETY_ANALYSIS NARAD_THREAD_ATTRIBUTE(no_thread_safety_analysis)

namespace narad {

class CAPABILITY("mutex") Mutex {
  public:
    Mutex() = default;
    Mutex(const Mutex&) = delete;
    Mutex& operator=(const Mutex&) = delete;

    void lock() ACQUIRE() { mutex_.lock(); }
    void unlock() RELEASE() { mutex_.unlock(); }
    bool try_lock() TRY_ACQUIRE(true) { return mutex_.try_lock(); }

  private:
    friend class MutexLock;
    std::mutex mutex_;
};

// Holds a Mutex for its scope. It may be released early and taken again, and a CondVar waits on it.
class SCOPED_CAPABILITY MutexLock {
  public:
    explicit MutexLock(Mutex& mutex) ACQUIRE(mutex) : lock_(mutex.mutex_) {}
    ~MutexLock() RELEASE() {}
    MutexLock(const MutexLock&) = delete;
    MutexLock& operator=(const MutexLock&) = delete;

    void unlock() RELEASE() { lock_.unlock(); }
    void lock() ACQUIRE() { lock_.lock(); }

  private:
    friend class CondVar;
    std::unique_lock<std::mutex> lock_;
};

// std::condition_variable over a MutexLock. Waits return with the lock held, as the standard ones.
class CondVar {
  public:
    void notify_one() noexcept { cv_.notify_one(); }
    void notify_all() noexcept { cv_.notify_all(); }

    void wait(MutexLock& lock) { cv_.wait(lock.lock_); }
    template <class Predicate>
    void wait(MutexLock& lock, Predicate ready) {
        cv_.wait(lock.lock_, std::move(ready));
    }
    template <class Rep, class Period>
    std::cv_status wait_for(MutexLock& lock, const std::chrono::duration<Rep, Period>& timeout) {
        return cv_.wait_for(lock.lock_, timeout);
    }
    template <class Rep, class Period, class Predicate>
    bool wait_for(MutexLock& lock, const std::chrono::duration<Rep, Period>& timeout,
                  Predicate ready) {
        return cv_.wait_for(lock.lock_, timeout, std::move(ready));
    }
    template <class Clock, class Duration>
    std::cv_status wait_until(MutexLock& lock,
                              const std::chrono::time_point<Clock, Duration>& deadline) {
        return cv_.wait_until(lock.lock_, deadline);
    }
    template <class Clock, class Duration, class Predicate>
    bool wait_until(MutexLock& lock, const std::chrono::time_point<Clock, Duration>& deadline,
                    Predicate ready) {
        return cv_.wait_until(lock.lock_, deadline, std::move(ready));
    }

  private:
    std::condition_variable cv_;
};

// A reader-writer mutex: many readers (ReaderLock) or one writer (WriterLock).
class CAPABILITY("mutex") SharedMutex {
  public:
    SharedMutex() = default;
    SharedMutex(const SharedMutex&) = delete;
    SharedMutex& operator=(const SharedMutex&) = delete;

    void lock() ACQUIRE() { mutex_.lock(); }
    void unlock() RELEASE() { mutex_.unlock(); }
    void lock_shared() ACQUIRE_SHARED() { mutex_.lock_shared(); }
    void unlock_shared() RELEASE_SHARED() { mutex_.unlock_shared(); }

  private:
    std::shared_mutex mutex_;
};

class SCOPED_CAPABILITY ReaderLock {
  public:
    explicit ReaderLock(SharedMutex& mutex) ACQUIRE_SHARED(mutex) : mutex_(mutex) {
        mutex_.lock_shared();
    }
    ~ReaderLock() RELEASE() { mutex_.unlock_shared(); }
    ReaderLock(const ReaderLock&) = delete;
    ReaderLock& operator=(const ReaderLock&) = delete;

  private:
    SharedMutex& mutex_;
};

class SCOPED_CAPABILITY WriterLock {
  public:
    explicit WriterLock(SharedMutex& mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
    ~WriterLock() RELEASE() { mutex_.unlock(); }
    WriterLock(const WriterLock&) = delete;
    WriterLock& operator=(const WriterLock&) = delete;

  private:
    SharedMutex& mutex_;
};

}  // namespace narad
