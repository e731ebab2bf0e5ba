/* The listening socket of one thread (SPEC §7.5): bound with SO_REUSEPORT so that every
 * thread has its own on one port, and set up once so that a connection costs no system
 * call of its own: options the listener holds are copied to every socket it accepts. */
#ifndef RENARD_LISTENER_H
#define RENARD_LISTENER_H

#include <sys/socket.h>

/* How long, in seconds, the kernel holds a new connection that has sent nothing before it
 * hands it to accept anyway (TCP_DEFER_ACCEPT). SPEC §7.5 bounds the deferral at 1 s: a
 * silent connection's header deadline begins only when it is handed over, and Linux rounds
 * longer deferrals up to its SYN-ACK retransmission schedule (5 s becomes 7 s). */
#define DEFER_ACCEPT_S 1

/* Pending connections the kernel queues per listening socket. */
#define LISTEN_BACKLOG 4096

/* A non-blocking listening socket on addr with SO_REUSEPORT, TCP_NODELAY (copied by Linux
 * to each accepted socket: responses go out as written, with no setsockopt per connection)
 * and TCP_DEFER_ACCEPT (a connection becomes acceptable when its first octets arrive, so
 * one wake-up accepts it and reads its request); or -1 with errno. */
int listener_bind(const struct sockaddr *addr, socklen_t len);

#endif
