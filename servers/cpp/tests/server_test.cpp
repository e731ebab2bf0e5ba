// SPEC §7.6 with several threads: a thread's drain closes its listener, then answers nothing
// until every thread's listener is closed, so that a client told to close cannot reconnect to
// a sibling that has not seen the signal. One ring runs for real on a loopback listener; the
// test is its sibling and closes its own listener when it chooses. Every wait is bounded.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "config.hpp"
#include "listener.hpp"
#include "loopback.hpp"
#include "response.hpp"
#include "server.hpp"

namespace renard {
namespace {

constexpr std::string_view kGet = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";

// Appends what fd receives to got until `ms` milliseconds have passed, the peer closes, or
// got holds until_text (empty: never).
void receive(int fd, std::string& got, int ms, std::string_view until_text)
{
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    for (;;) {
        if (!until_text.empty() && got.find(until_text) != std::string::npos) return;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
        pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
        if (left.count() <= 0 || ::poll(&p, 1, int(left.count())) <= 0) return;
        char buf[4096];
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return;  // the peer closed
        got.append(buf, std::size_t(n));
    }
}

// A connection to address; -1 with errno when refused.
int connect_to(const sockaddr_in& address)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) return fd;
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
}

TEST(Drain, AnswersNothingUntilEveryListenerIsClosed)
{
    if (const std::string why = io_uring_unavailable(); !why.empty()) GTEST_SKIP() << why;
    Shared shared;
    std::string error;
    std::array<char*, 4> args{const_cast<char*>("--listen"), const_cast<char*>("127.0.0.1:0"),
                              const_cast<char*>("--drain-timeout"), const_cast<char*>("5")};
    ASSERT_EQ(parse_config(args, [](const char*) -> const char* { return nullptr; }, 2, shared.config, error),
              Command::Serve)
        << error;
    const Redirects redirects(shared.config.location, shared.config.count);
    shared.redirects = &redirects;
    shared.shutdown_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    ASSERT_GE(shared.shutdown_fd, 0);
    shared.listeners.expect(2);  // the ring's listener and the test's
    shared.listeners_wait = std::chrono::milliseconds(30'000);  // the wait, not its bound

    sockaddr_in address{};
    const int listener = bind_loopback(address);
    ASSERT_GE(listener, 0);
    int rc = -1;
    std::string ring_error;
    std::thread ring([&] { rc = run_worker(shared, listener, ring_error); });

    const int told = connect_to(address);
    ASSERT_GE(told, 0);
    std::string got;
    ASSERT_EQ(::send(told, kGet.data(), kGet.size(), MSG_NOSIGNAL), ssize_t(kGet.size()));
    receive(told, got, 5000, "\r\n\r\n");
    EXPECT_EQ(got.rfind("HTTP/1.1 302 Found\r\n", 0), 0u) << got;
    EXPECT_EQ(got.find("Connection: close"), std::string::npos) << got;

    const std::uint64_t one = 1;
    ASSERT_EQ(::write(shared.shutdown_fd, &one, sizeof one), ssize_t(sizeof one));
    // The ring's drain has begun once its listener refuses (at most 5 s).
    bool refused = false;
    for (int i = 0; i < 500 && !refused; i++) {
        const int probe = connect_to(address);
        if (probe < 0) {
            refused = errno == ECONNREFUSED;
        } else {
            ::close(probe);
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    EXPECT_TRUE(refused);

    got.clear();
    ASSERT_EQ(::send(told, kGet.data(), kGet.size(), MSG_NOSIGNAL), ssize_t(kGet.size()));
    receive(told, got, 300, "");
    EXPECT_EQ(got, "") << "answered while the sibling still listens";

    shared.listeners.closed_one();  // the sibling's listener closes
    receive(told, got, 5000, "\r\n\r\n");
    EXPECT_EQ(got.rfind("HTTP/1.1 302 Found\r\n", 0), 0u) << got;
    EXPECT_NE(got.find("Connection: close\r\n\r\n"), std::string::npos) << got;

    ::close(told);  // the ring's last connection: its loop ends
    ring.join();
    EXPECT_EQ(rc, 0) << ring_error;
    ::close(shared.shutdown_fd);
}

}  // namespace
}  // namespace renard
