// Listeners and the io_uring loop of one thread (SPEC §7). Each thread owns a SO_REUSEPORT
// listener on the same address, a ring, a provided-buffer ring and its connections; the
// only state shared between threads is the count of open connections (for the cap).
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "config.hpp"
#include "response.hpp"

namespace renard {

// What every thread reads; built once.
struct Shared {
    Config config;
    const Redirects* redirects = nullptr;
    std::atomic<std::uint32_t> open{0};  // open connections across all threads
    int shutdown_fd = -1;                // eventfd written on SIGTERM/SIGINT, never read
};

// A listening socket on address with SO_REUSEPORT and TCP_NODELAY (inherited by accepted
// sockets), or -1 with errno.
int bind_listener(const sockaddr* address, socklen_t len);

// Whether this process may use io_uring: empty, or the one-line reason it may not.
std::string io_uring_unavailable();

// Runs one thread's loop on listen_fd until shutdown completes (SPEC §7.6); 0, or -1 when
// the ring could not be set up (reason in `error`).
int run_worker(Shared& shared, int listen_fd, std::string& error);

}  // namespace renard
