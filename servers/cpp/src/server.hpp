// Listeners and the io_uring loop of one thread (SPEC §7). Each thread owns a SO_REUSEPORT
// listener on the same address, a ring, a provided-buffer ring and its connections; the
// state shared between threads is the count of places taken under the connection cap and,
// for the drain, the count of listeners closed.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "config.hpp"
#include "response.hpp"

namespace renard {

// The listeners' part of the drain (SPEC §7.6): each thread closes its own listener and
// counts it here, then waits until every one is closed before it answers anything, so that
// a client told to close cannot reconnect to a thread that has not seen the signal yet.
class Listeners {
public:
    // Before any thread runs: how many listeners there are.
    void expect(std::uint32_t total) { total_ = total; }
    // The calling thread's listener is closed.
    void closed_one();
    // Returns once every listener is closed, or after at_most.
    void wait_all_closed(std::chrono::milliseconds at_most);

private:
    std::mutex lock_;
    std::condition_variable all_closed_;
    std::uint32_t closed_ = 0;  // under lock_
    std::uint32_t total_ = 0;
};

// What every thread reads; built once.
struct Shared {
    Config config;
    const Redirects* redirects = nullptr;
    // Places under the cap taken across all threads: one per connection, from its accept until
    // its descriptor is closed, and one per accept in flight that holds it for the connection
    // it will bring (server.cpp, arm_accept).
    std::atomic<std::uint32_t> open{0};
    int shutdown_fd = -1;                // eventfd written on SIGTERM/SIGINT, never read
    Listeners listeners;
    // Longest wait, when the drain begins, for the other threads to close their listeners: a
    // thread the machine does not run for that long does not hold back the others' drain.
    // Measured beside the flake campaign's busy loops and tests (20 drains, --threads 2, 8
    // keep-alive clients): every listener closed within 9.3 ms of the signal, a margin of
    // 25 times that.
    // The tests set it longer, to test the wait rather than its bound.
    std::chrono::milliseconds listeners_wait{250};
};

// Whether this process may use io_uring: empty, or the one-line reason it may not.
std::string io_uring_unavailable();

// Runs one thread's loop on listen_fd until shutdown completes (SPEC §7.6); 0, or -1 when
// the ring could not be set up (reason in `error`).
int run_worker(Shared& shared, int listen_fd, std::string& error);

}  // namespace renard
