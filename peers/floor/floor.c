/* floor: the physical limit of renard's design on this machine, not a conforming server.
 *
 * One thread, one epoll loop, level-triggered. Every request gets the same pre-rendered
 * 302 (Location: the template with k = 1) without being parsed: a request is counted by
 * its head terminator CRLF CRLF, so that pipelined requests each get their answer. The one
 * look inside is for "Connection: close", answered with the close variant, so that wrk's
 * close mode opens a connection per request here as it does everywhere else.
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

enum { MAX_FDS = 65536, BATCH = 16, READ_SIZE = 16384 };

struct answer { char bytes[BATCH * 512]; size_t len; }; /* the answer repeated BATCH times */
struct conn { unsigned long long owed; size_t phase; unsigned char match, close; };

static struct answer keep, bye;
static struct conn conns[MAX_FDS];

static void render(struct answer *a, const char *location, const char *connection) {
    char one[512];
    const char *n = strstr(location, "{n}");
    int len = n ? snprintf(one, sizeof one, "HTTP/1.1 302 Found\r\nLocation: %.*s1%s\r\nContent-Length: 0\r\n%s\r\n",
                           (int)(n - location), location, n + 3, connection)
                : -1;
    if (len < 0 || (size_t)len >= sizeof one) { fprintf(stderr, "floor: LOCATION must contain {n}, under 400 bytes\n"); exit(2); }
    for (int i = 0; i < BATCH; i++) memcpy(a->bytes + i * len, one, len);
    a->len = (size_t)len;
}

/* Counts head terminators in data, carrying a partial CRLF CRLF across reads in c->match. */
static unsigned count_heads(struct conn *c, const char *data, size_t n) {
    static const char end[] = "\r\n\r\n";
    unsigned heads = 0;
    for (size_t i = 0; i < n; i++) {
        c->match = data[i] == end[c->match] ? c->match + 1 : data[i] == '\r' ? 1 : 0;
        if (c->match == 4) { heads++; c->match = 0; }
    }
    return heads;
}

/* Writes what is owed; returns 0 when done, 1 when the socket is full, -1 on error. */
static int flush(int fd, struct conn *c) {
    const struct answer *a = c->close ? &bye : &keep;
    while (c->owed > 0) {
        size_t room = a->len * BATCH - c->phase, want = c->owed < room ? c->owed : room;
        ssize_t w = write(fd, a->bytes + c->phase, want);
        if (w < 0) return errno == EAGAIN ? 1 : -1;
        c->owed -= (size_t)w;
        c->phase = (c->phase + (size_t)w) % a->len;
    }
    return 0;
}

static void drop(int epoll, int fd) {
    epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
}

/* Reads what the client sent, answers each complete head; a full socket waits for EPOLLOUT. */
static void serve(int epoll, int fd) {
    static char buf[READ_SIZE];
    struct conn *c = &conns[fd];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EAGAIN)) { drop(epoll, fd); return; }
        if (n < 0) break;
        if (!c->close && c->owed == 0 && memmem(buf, (size_t)n, "Connection: close", 17)) c->close = 1;
        c->owed += (unsigned long long)count_heads(c, buf, (size_t)n) * (c->close ? bye.len : keep.len);
        if ((size_t)n < sizeof buf) break;
    }
    int state = flush(fd, c);
    if (state < 0 || (state == 0 && c->close)) { drop(epoll, fd); return; }
    struct epoll_event ev = { .events = EPOLLIN | (state ? EPOLLOUT : 0), .data.fd = fd };
    epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &ev);
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: floor HOST PORT LOCATION\n"); return 2; }
    render(&keep, argv[3], "");
    render(&bye, argv[3], "Connection: close\r\n");
    signal(SIGPIPE, SIG_IGN);

    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[2])) };
    if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) { fprintf(stderr, "floor: HOST must be an IPv4 address\n"); return 2; }
    int one = 1, listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    socklen_t len = sizeof addr;
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) || listen(listener, 4096)
        || getsockname(listener, (struct sockaddr *)&addr, &len)) { perror("floor: listen"); return 1; }
    fprintf(stderr, "listening on http://%s:%u\n", argv[1], ntohs(addr.sin_port));

    int epoll = epoll_create1(0);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = listener }, events[256];
    epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &ev);
    for (;;) {
        int ready = epoll_wait(epoll, events, 256, -1);
        for (int i = 0; i < ready; i++) {
            int fd = events[i].data.fd;
            if (fd != listener) { serve(epoll, fd); continue; }
            int client;
            while ((client = accept4(listener, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                if (client >= MAX_FDS) { close(client); continue; }
                conns[client] = (struct conn){ 0 };
                setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                struct epoll_event cev = { .events = EPOLLIN, .data.fd = client };
                epoll_ctl(epoll, EPOLL_CTL_ADD, client, &cev);
            }
        }
    }
}
