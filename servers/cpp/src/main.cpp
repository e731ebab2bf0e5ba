// renard: answers GET / with a 302 to a random avatar (spec/SPEC.md), on io_uring.
//
// main reads as the story: configuration, the io_uring check, listeners, the shutdown
// signal, one ring per thread (thread 0 is the main thread), exit 0 once every loop has
// drained.
#include <malloc.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "config.hpp"
#include "listener.hpp"
#include "response.hpp"
#include "ring.hpp"
#include "server.hpp"

namespace {

renard::Shared shared;

// SIGTERM/SIGINT: make the eventfd readable; every ring polls it (SPEC §7.6).
void on_signal(int)
{
    const int saved = errno;
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t ignored = ::write(shared.shutdown_fd, &one, sizeof one);
    errno = saved;
}

[[noreturn]] void fatal(const char* what)
{
    std::fprintf(stderr, "renard: %s: %s (os error %d)\n", what, std::strerror(errno), errno);
    std::exit(1);
}

// Lifts the soft descriptor limit to the hard one, so that --max-connections can be met.
void raise_descriptor_limit()
{
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &limit);
    }
}

// The slot arrays a flood grows (about 160 KiB per thread at 1000 connections) are freed
// once the last connection closes (server.cpp); glibc must then give their pages back.
// Its default moves the mmap threshold up to the size of each mmapped block freed, and
// the trim threshold to twice that, so the next flood's arrays would come from the heap
// and stay resident after being freed. Setting the threshold fixes both at glibc's
// starting values (128 KiB: blocks this large are mapped and unmapped on free; a heap top
// larger than that is trimmed), so memory returns to its baseline (SPEC §7.5).
void keep_mmap_threshold_fixed()
{
    ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

std::uint32_t available_cpus()
{
    cpu_set_t set;
    if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::uint32_t(CPU_COUNT(&set));
    const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? std::uint32_t(n) : 1;
}

}  // namespace

int main(int argc, char** argv)
{
    renard::Config& config = shared.config;
    std::string error;
    switch (renard::parse_config({argv + 1, std::size_t(argc - 1)}, [](const char* name) { return std::getenv(name); },
                                 available_cpus(), config, error)) {
    case renard::Command::Help: std::fputs(renard::kUsage, stdout); return 0;
    case renard::Command::Version: std::printf("renard %s\n", renard::kVersion); return 0;
    case renard::Command::Error: std::fprintf(stderr, "%s\n", error.c_str()); return 2;
    case renard::Command::Serve: break;
    }
    // This entry exists to measure io_uring: no fallback to another interface.
    if (const std::string why = renard::io_uring_unavailable(); !why.empty()) {
        std::fprintf(stderr, "%s\n", why.c_str());
        return 2;
    }
    raise_descriptor_limit();
    keep_mmap_threshold_fixed();

    // One SO_REUSEPORT listener per thread, all on the port the first one got.
    const std::string asked = renard::format_address(reinterpret_cast<const sockaddr*>(&config.listen));
    std::vector<renard::Fd> listeners;
    sockaddr_storage bound{};
    socklen_t bound_len = sizeof bound;
    const auto cannot_bind = [&] {
        std::fprintf(stderr, "renard: --listen: cannot bind %s: %s (os error %d)\n", asked.c_str(), std::strerror(errno),
                     errno);
        return 1;
    };
    listeners.emplace_back(renard::bind_listener(reinterpret_cast<const sockaddr*>(&config.listen), config.listen_len));
    if (!listeners[0] || ::getsockname(listeners[0].get(), reinterpret_cast<sockaddr*>(&bound), &bound_len) != 0)
        return cannot_bind();
    for (std::uint32_t t = 1; t < config.threads; t++) {
        listeners.emplace_back(renard::bind_listener(reinterpret_cast<const sockaddr*>(&bound), bound_len));
        if (!listeners.back()) return cannot_bind();
    }

    shared.shutdown_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (shared.shutdown_fd < 0) fatal("eventfd");
    shared.listeners.expect(config.threads);
    struct sigaction action {};
    action.sa_handler = on_signal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (::sigaction(SIGTERM, &action, nullptr) != 0 || ::sigaction(SIGINT, &action, nullptr) != 0)
        fatal("signal handler");
    std::signal(SIGPIPE, SIG_IGN);
    const renard::Redirects redirects(config.location, config.count);
    shared.redirects = &redirects;

    std::fprintf(stderr, "listening on http://%s\n",
                 renard::format_address(reinterpret_cast<const sockaddr*>(&bound)).c_str());

    // Each worker owns its listener from here; a failed setup is reported once.
    std::vector<std::string> errors(config.threads);
    std::vector<int> results(config.threads, 0);
    std::vector<std::thread> threads;
    const auto work = [&](std::uint32_t t) {
        results[t] = renard::run_worker(shared, listeners[t].release(), errors[t]);
        if (results[t] != 0) on_signal(SIGTERM);  // the other threads stop too
    };
    for (std::uint32_t t = 1; t < config.threads; t++) threads.emplace_back(work, t);
    work(0);
    for (auto& thread : threads) thread.join();
    for (std::uint32_t t = 0; t < config.threads; t++) {
        if (results[t] != 0) {
            std::fprintf(stderr, "%s\n", errors[t].c_str());
            return 1;
        }
    }
    return 0;
}
