#include "compare/limits_probe.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace narad::compare {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr uint64_t kWrapBytes = uint64_t{1} << 30;
constexpr size_t kLoopbackChunkBytes = 1 << 20;

double seconds_since(SteadyClock::time_point start) {
    return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

std::string errno_text(std::string_view what) {
    return std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

SyncProbe probe_fdatasync(const std::string& directory, uint64_t write_bytes, double seconds) {
    SyncProbe probe;
    probe.write_bytes = write_bytes;
    std::string path = directory + "/fdatasync-probe-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0) {
        probe.error = errno_text("mkstemp " + directory);
        return probe;
    }
    ::unlink(path.c_str());  // the open descriptor keeps it alive until the end of the probe
    const std::string buffer(write_bytes, 'p');
    uint64_t offset = 0;
    const auto start = SteadyClock::now();
    while (seconds_since(start) < seconds) {
        if (offset + write_bytes > kWrapBytes) offset = 0;
        const ssize_t n = ::pwrite(fd, buffer.data(), buffer.size(), off_t(offset));
        if (n != ssize_t(buffer.size())) {
            probe.error = errno_text("pwrite");
            break;
        }
        if (::fdatasync(fd) != 0) {
            probe.error = errno_text("fdatasync");
            break;
        }
        offset += write_bytes;
        ++probe.syncs;
    }
    probe.seconds = seconds_since(start);
    ::close(fd);
    return probe;
}

LoopbackProbe probe_loopback(double seconds) {
    LoopbackProbe probe;
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0) {
        probe.error = errno_text("socket");
        return probe;
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener, 1) != 0 ||
        ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        probe.error = errno_text("listen");
        ::close(listener);
        return probe;
    }
    const int writer = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (writer < 0 || ::connect(writer, reinterpret_cast<sockaddr*>(&address), sizeof address)) {
        probe.error = errno_text("connect");
        if (writer >= 0) ::close(writer);
        ::close(listener);
        return probe;
    }
    const int reader = ::accept(listener, nullptr, nullptr);
    ::close(listener);
    if (reader < 0) {
        probe.error = errno_text("accept");
        ::close(writer);
        return probe;
    }
    std::atomic<uint64_t> received{0};
    std::thread reading([reader, &received] {
        std::string buffer(kLoopbackChunkBytes, '\0');
        while (true) {
            const ssize_t n = ::read(reader, buffer.data(), buffer.size());
            if (n <= 0) break;
            received.fetch_add(uint64_t(n), std::memory_order_relaxed);
        }
    });
    const std::string chunk(kLoopbackChunkBytes, 'l');
    const auto start = SteadyClock::now();
    uint64_t at_stop = 0;
    while (seconds_since(start) < seconds) {
        if (::write(writer, chunk.data(), chunk.size()) < 0) {
            probe.error = errno_text("write");
            break;
        }
    }
    // Count what the reader got within the window, not what sat in the socket buffers.
    at_stop = received.load();
    probe.seconds = seconds_since(start);
    ::shutdown(writer, SHUT_WR);
    reading.join();
    ::close(writer);
    ::close(reader);
    probe.bytes = at_stop;
    return probe;
}

LimitsResult probe_limits(const std::string& directory, double sync_seconds,
                          double loopback_seconds) {
    LimitsResult result;
    result.directory = directory;
    for (uint64_t bytes : {uint64_t{64} << 10, uint64_t{256} << 10}) {
        result.syncs.push_back(probe_fdatasync(directory, bytes, sync_seconds));
    }
    result.loopback = probe_loopback(loopback_seconds);
    return result;
}

}  // namespace narad::compare
