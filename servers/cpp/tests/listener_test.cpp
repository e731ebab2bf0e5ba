// SPEC §7.5: the listener defers the accept until a connection's first octets arrive, and
// hands over sockets that already have TCP_NODELAY. Loopback only; every wait is bounded.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include "listener.hpp"
#include "loopback.hpp"

namespace renard {
namespace {

int int_option(int fd, int level, int name)
{
    int value = -1;
    socklen_t len = sizeof value;
    EXPECT_EQ(::getsockopt(fd, level, name, &value, &len), 0);
    return value;
}

TEST(Listener, HoldsDeferAcceptAndNoDelay)
{
    sockaddr_in address;
    const int listener = bind_loopback(address);
    // Linux reports the deferral rounded to its SYN-ACK retransmissions: 1 s stays 1 s.
    EXPECT_EQ(int_option(listener, IPPROTO_TCP, TCP_DEFER_ACCEPT), kDeferAcceptSeconds);
    EXPECT_NE(int_option(listener, IPPROTO_TCP, TCP_NODELAY), 0);
    ::close(listener);
}

// A client that sends nothing is held by the kernel (the listener is not readable); once
// it sends an octet it is handed over with the octet there to read at once (what lets the
// loop's first receive complete without a wait), and with TCP_NODELAY already set.
TEST(Listener, SilentClientIsAcceptedOnlyOnceItSends)
{
    sockaddr_in address;
    const int listener = bind_loopback(address);
    const int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(client, 0);
    ASSERT_EQ(::connect(client, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
    // connect returned: the handshake is done. Without the deferral the connection would be
    // acceptable now; 300 ms is well inside the 1 s deferral.
    pollfd p{listener, POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 300), 0) << "a connection that sent nothing was acceptable";
    ASSERT_EQ(::write(client, "G", 1), 1);
    ASSERT_EQ(::poll(&p, 1, 5000), 1);
    const int accepted = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    ASSERT_GE(accepted, 0);
    char octet = 0;
    EXPECT_EQ(::recv(accepted, &octet, 1, MSG_DONTWAIT), 1) << "the first octet is there at the accept";
    EXPECT_EQ(octet, 'G');
    EXPECT_NE(int_option(accepted, IPPROTO_TCP, TCP_NODELAY), 0);
    ::close(accepted);
    ::close(client);
    ::close(listener);
}

}  // namespace
}  // namespace renard
