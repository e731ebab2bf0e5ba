/* floor: the physical limit of renard's design on epoll, not a conforming server.
 *
 * One thread, one epoll loop. Every request gets the same pre-rendered 302 (Location: the
 * template with k = 1) without being parsed: a request is counted by its head terminator
 * CRLF CRLF, so that pipelined requests each get their answer. The one look inside is for
 * "Connection: close", answered with the close variant, so that wrk's close mode opens a
 * connection per request here as it does everywhere else.
 *
 * System calls are the figure this program minimises (README: counted with strace):
 * - a keep-alive request costs one read, one write and its share of one epoll_wait. The
 *   connection is edge-triggered for reading; a short read means the socket is drained (the
 *   next byte raises a new edge), so no read ends in EAGAIN;
 * - a connection is registered once and re-armed at most once: EPOLLOUT is added the first
 *   time its socket is full, and an edge-triggered EPOLLOUT never needs taking away;
 * - the listener defers accept until the request's bytes are there (TCP_DEFER_ACCEPT), so a
 *   new connection is read at once; one that is answered and closed (Connection: close)
 *   is never registered. close() leaves the epoll set by itself: no EPOLL_CTL_DEL;
 * - TCP_NODELAY is set once on the listener; Linux copies it to every accepted socket.
 *
 * usage: floor HOST PORT LOCATION   (PORT 0: the kernel picks; prints `listening on`)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "answer.h"

enum { MAX_FDS = 65536, READ_SIZE = 16384, EVENTS = 256 };

static struct answer keep, bye;
static struct conn conns[MAX_FDS];

/* Writes what is owed; returns 0 when done, 1 when the socket is full, -1 on error. */
static int flush(int fd, struct conn *c) {
    const struct answer *a = c->close ? &bye : &keep;
    while (c->owed > 0) {
        size_t want;
        const char *from = answer_next(a, c, &want);
        ssize_t w = write(fd, from, want);
        if (w < 0) return errno == EAGAIN ? 1 : -1;
        answer_sent(a, c, (size_t)w);
    }
    return 0;
}

/* Reads what the client sent (when readable), answers each complete head, and registers
 * the connection, or adds EPOLLOUT to it, only when what it waits for changed. */
static void serve(int epoll, int fd, int readable) {
    static char buf[READ_SIZE];
    struct conn *c = &conns[fd];
    while (readable) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EAGAIN)) { close(fd); return; }
        if (n < 0) break;
        owe_for(&keep, &bye, c, buf, (size_t)n);
        if ((size_t)n < sizeof buf) break; /* drained: the next byte raises a new edge */
    }
    int state = flush(fd, c);
    if (state < 0 || (state == 0 && c->close)) { close(fd); return; }
    unsigned want = EPOLLIN | EPOLLET | (state == 1 || (c->armed & EPOLLOUT) ? EPOLLOUT : 0);
    if (want != c->armed) {
        struct epoll_event ev = { .events = want, .data.fd = fd };
        epoll_ctl(epoll, c->armed ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev);
        c->armed = want;
    }
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: floor HOST PORT LOCATION\n"); return 2; }
    if (render(&keep, argv[3], "") || render(&bye, argv[3], "Connection: close\r\n")) {
        fprintf(stderr, "floor: LOCATION must contain {n}, under 400 bytes\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);

    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[2])) };
    if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) { fprintf(stderr, "floor: HOST must be an IPv4 address\n"); return 2; }
    int one = 1, listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(listener, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);     /* inherited by accepted sockets */
    setsockopt(listener, IPPROTO_TCP, TCP_DEFER_ACCEPT, &one, sizeof one); /* seconds; then accepted anyway */
    socklen_t len = sizeof addr;
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) || listen(listener, 4096)
        || getsockname(listener, (struct sockaddr *)&addr, &len)) { perror("floor: listen"); return 1; }
    fprintf(stderr, "listening on http://%s:%u\n", argv[1], ntohs(addr.sin_port));

    int epoll = epoll_create1(0);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = listener }, events[EVENTS];
    epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &ev);
    for (;;) {
        int ready = epoll_wait(epoll, events, EVENTS, -1);
        for (int i = 0; i < ready; i++) {
            int fd = events[i].data.fd;
            if (fd != listener) { serve(epoll, fd, (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0); continue; }
            int client;
            while ((client = accept4(listener, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                if (client >= MAX_FDS) { close(client); continue; }
                conns[client] = (struct conn){ 0 };
                serve(epoll, client, 1);
            }
        }
    }
}
