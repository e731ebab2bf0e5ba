/* Defects planted in a real server, for the suite's own tests: built as a shared object and
 * loaded into the C renard with LD_PRELOAD, it wraps accept(2), accept4(2), recv(2), send(2)
 * and epoll_wait(2).
 *
 *   PLANTED_LEAK_BYTES=N   every connection accepted mallocs N octets (N >= 8), writes them
 *                          (so they are resident) and never frees them: a leak per connection.
 *   PLANTED_KEEP_EVERY=N   every Nth connection accepted is duplicated and the copy never
 *                          closed: a descriptor (and a half-open socket) leaked per N.
 *   PLANTED_LEAK_PER_RECV=N  every recv(2) that reads something leaks N octets, as above: a
 *                          leak per request, where requests come one to a read (keep-alive).
 *   PLANTED_SEND_DELAY_MS=N  a send(2) waits N ms first, the thread blocked: a server that
 *                          answers late (and serves nothing else meanwhile); every send, or
 *   PLANTED_SEND_DELAY_EVERY=M  only every Mth.
 *   PLANTED_LEAK_PER_ANSWER=N  every answer sent leaks N octets, as above: a leak per request
 *                          that pipelining cannot hide (answers are counted by their status
 *                          lines in the octets each send(2) sent; one split across two sends
 *                          is missed).
 *   PLANTED_WAIT_LATE_MS=N  an epoll_wait(2) with a timeout waits N ms longer: a deadline
 *                          kept late by N ms whenever no other event wakes the loop.
 *
 * Unset or 0, each defect is off. Thread-safe: malloc is, and the counter is atomic. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static unsigned long setting(const char *name) {
    const char *value = getenv(name);
    return value ? strtoul(value, NULL, 10) : 0;
}

static atomic_ulong accepted, sent;
static void *_Atomic kept_last; /* the leaked blocks, each holding the one before: reachable, never freed */

static void leak_octets(unsigned long octets) {
    void **kept = octets >= sizeof(void *) ? malloc(octets) : NULL;
    if (kept != NULL) {
        memset(kept, 0xa5, octets);
        *kept = atomic_exchange(&kept_last, (void *)kept);
    }
}

static int planted(int fd) {
    if (fd < 0)
        return fd;
    unsigned long every = setting("PLANTED_KEEP_EVERY");
    leak_octets(setting("PLANTED_LEAK_BYTES"));
    if (every > 0 && atomic_fetch_add(&accepted, 1) % every == 0)
        (void)dup(fd);
    return fd;
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    int (*real)(int, struct sockaddr *, socklen_t *, int) = dlsym(RTLD_NEXT, "accept4");
    return planted(real(fd, addr, len, flags));
}

int accept(int fd, struct sockaddr *addr, socklen_t *len) {
    int (*real)(int, struct sockaddr *, socklen_t *) = dlsym(RTLD_NEXT, "accept");
    return planted(real(fd, addr, len));
}

ssize_t recv(int fd, void *buffer, size_t size, int flags) {
    static ssize_t (*real)(int, void *, size_t, int); /* looked up once: a race writes the same value */
    if (real == NULL)
        real = (ssize_t(*)(int, void *, size_t, int))dlsym(RTLD_NEXT, "recv");
    ssize_t got = real(fd, buffer, size, flags);
    if (got > 0)
        leak_octets(setting("PLANTED_LEAK_PER_RECV"));
    return got;
}

/* Leaks per answer in the octets sent, counted by their status lines. */
static void leak_per_answer(const char *octets, size_t size) {
    static const char status_line[] = "HTTP/1.1 ";
    unsigned long per_answer = setting("PLANTED_LEAK_PER_ANSWER");
    for (const char *at = octets, *end = octets + size; per_answer > 0 &&
         (at = memmem(at, (size_t)(end - at), status_line, sizeof status_line - 1)) != NULL; at++)
        leak_octets(per_answer);
}

ssize_t send(int fd, const void *buffer, size_t size, int flags) {
    static ssize_t (*real)(int, const void *, size_t, int);
    if (real == NULL)
        real = (ssize_t(*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
    unsigned long delay_ms = setting("PLANTED_SEND_DELAY_MS"), every = setting("PLANTED_SEND_DELAY_EVERY");
    if (delay_ms > 0 && (every <= 1 || atomic_fetch_add(&sent, 1) % every == 0)) {
        struct timespec wait = {(time_t)(delay_ms / 1000), (long)(delay_ms % 1000) * 1000000L};
        nanosleep(&wait, NULL);
    }
    ssize_t done = real(fd, buffer, size, flags);
    if (done > 0)
        leak_per_answer(buffer, (size_t)done);
    return done;
}

int epoll_wait(int epfd, struct epoll_event *events, int capacity, int timeout_ms) {
    static int (*real)(int, struct epoll_event *, int, int);
    if (real == NULL)
        real = (int (*)(int, struct epoll_event *, int, int))dlsym(RTLD_NEXT, "epoll_wait");
    unsigned long late_ms = setting("PLANTED_WAIT_LATE_MS");
    if (timeout_ms >= 0 && late_ms > 0)
        timeout_ms += (int)late_ms;
    return real(epfd, events, capacity, timeout_ms);
}
