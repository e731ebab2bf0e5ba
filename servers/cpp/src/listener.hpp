// The listening socket of one thread (SPEC §7.5): bound with SO_REUSEPORT so that every
// thread has its own on one port, and set up once so that a connection costs no system
// call of its own: options the listener holds are copied to every socket it accepts.
#pragma once

#include <sys/socket.h>

namespace renard {

// How long the kernel holds a new connection that has sent nothing before it hands it to
// accept anyway (TCP_DEFER_ACCEPT). SPEC §7.5 bounds the deferral at 1 s: a silent
// connection's header deadline begins only when it is handed over, and Linux rounds longer
// deferrals up to its SYN-ACK retransmission schedule (5 s becomes 7 s).
inline constexpr int kDeferAcceptSeconds = 1;

// Pending connections the kernel queues per listening socket.
inline constexpr int kListenBacklog = 4096;

// A listening socket on address with SO_REUSEPORT, TCP_NODELAY (copied by Linux to each
// accepted socket: responses go out as written, with no setsockopt per connection) and
// TCP_DEFER_ACCEPT (a connection is accepted when its first octets arrive, so the receive
// armed after the accept completes at once); or -1 with errno.
int bind_listener(const sockaddr* address, socklen_t len);

}  // namespace renard
