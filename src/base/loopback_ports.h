// Ports on 127.0.0.1 that nothing listens on when asked, for tests and benchmarks that start
// servers of their own: each is bound to port 0, read back and released once all are chosen (so
// the `count` ports are distinct). Another process may bind one before the caller does.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace narad {

inline std::vector<uint16_t> unused_loopback_ports(size_t count) {
    std::vector<int> sockets;
    std::vector<uint16_t> ports;
    for (size_t i = 0; i < count; ++i) {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
        socklen_t length = sizeof address;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
        ports.push_back(ntohs(address.sin_port));
        sockets.push_back(fd);
    }
    for (int fd : sockets) ::close(fd);
    return ports;
}

}  // namespace narad
