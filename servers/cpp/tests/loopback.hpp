// Test helper: a listener on 127.0.0.1 at a port the kernel picks.
#pragma once

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "listener.hpp"

namespace renard {

// A listening socket (bind_listener's, as the server makes it), its address written to
// address; -1 (and a failed expectation) when it cannot be made.
inline int bind_loopback(sockaddr_in& address)
{
    address = sockaddr_in{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int fd = bind_listener(reinterpret_cast<const sockaddr*>(&address), sizeof address);
    EXPECT_GE(fd, 0);
    socklen_t len = sizeof address;
    EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &len), 0);
    return fd;
}

}  // namespace renard
