#include "server.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"

#define TOKEN_LISTENER UINT64_MAX
#define TOKEN_SHUTDOWN (UINT64_MAX - 1)
#define EVENTS 256
#define NS 1000000000LL
/* After the drain window, responses under way get this long before the loop returns
 * (SPEC §7.6: exit within the window plus 1 s). */
#define DRAIN_FINISH_NS (NS / 2)
/* Longest wait, when the drain begins, for the other threads to close their listeners: a
 * thread the machine does not run for that long does not hold back the others' drain.
 * Measured beside the flake campaign's busy loops and tests (20 drains, --threads 2, 8
 * keep-alive clients): every listener closed within 14.1 ms of the signal, a margin of
 * 16 times that.
 * The unit tests set it longer, to test the wait rather than its bound. */
#ifndef LISTENERS_WAIT_NS
#define LISTENERS_WAIT_NS (NS / 4)
#endif

int server_listeners_init(struct listeners *listeners, unsigned total)
{
    pthread_condattr_t attr;
    int rc = pthread_condattr_init(&attr);
    if (rc != 0) return rc;
    rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (rc == 0) rc = pthread_cond_init(&listeners->all_closed, &attr);
    pthread_condattr_destroy(&attr);
    if (rc == 0 && (rc = pthread_mutex_init(&listeners->lock, NULL)) != 0) pthread_cond_destroy(&listeners->all_closed);
    listeners->closed = 0;
    listeners->total = total;
    return rc;
}

/* The connections of one thread, indexed by slot (the epoll token). */
struct slots {
    struct conn *conns; /* conns[i].fd < 0: free */
    uint32_t size, live;
    uint32_t *free;     /* free slot indexes, a stack */
    uint32_t free_len;
};

/* One thread. */
struct worker {
    struct shared *shared;
    int epfd, listen_fd;
    struct env env;
    struct slots slots;
    int64_t next_scan;  /* ns; no deadline is before it; INT64_MAX: none */
    int64_t drain_end;  /* ns; end of the drain window (SPEC §7.6); INT64_MAX: serving */
    bool drain_ended;
};

static int64_t monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * NS + t.tv_nsec;
}

static void note_deadline(struct worker *w, int64_t at)
{
    if (at < w->next_scan) w->next_scan = at;
}

/* Close the connection in slot i and free the slot; with none left, the slot arrays are
 * freed, so memory returns to its baseline. */
static void remove_conn(struct worker *w, uint32_t i)
{
    struct slots *s = &w->slots;
    conn_close(&s->conns[i]);
    atomic_fetch_sub_explicit(&w->shared->open, 1, memory_order_relaxed);
    s->free[s->free_len++] = i;
    if (--s->live == 0) {
        free(s->conns);
        free(s->free);
        *s = (struct slots){0};
    }
}

/* A free slot index, growing the arrays when needed; UINT32_MAX when out of memory. */
static uint32_t take_slot(struct slots *s)
{
    if (s->free_len > 0) return s->free[--s->free_len];
    if (s->live == s->size) {
        uint32_t size = s->size ? s->size * 2 : 16;
        struct conn *conns = realloc(s->conns, sizeof *conns * size);
        if (!conns) return UINT32_MAX;
        s->conns = conns;
        uint32_t *free_list = realloc(s->free, sizeof *free_list * size);
        if (!free_list) return UINT32_MAX;
        s->free = free_list;
        uint32_t first = s->size; /* returned; first + 1 .. size - 1 become free */
        for (uint32_t i = size - 1; i > first; i--) s->free[s->free_len++] = i;
        for (uint32_t i = first; i < size; i++) s->conns[i].fd = -1;
        s->size = size;
        return first;
    }
    return UINT32_MAX;
}

/* The connection least likely to be a client (SPEC §7.5: lingering, then the oldest
 * partial head, then the longest silent); UINT32_MAX when none may be chosen. */
static uint32_t choose_victim(const struct worker *w)
{
    uint32_t best = UINT32_MAX;
    int best_class = 3;
    int64_t best_since = INT64_MAX;
    for (uint32_t i = 0; i < w->slots.size; i++) {
        const struct conn *c = &w->slots.conns[i];
        int class;
        int64_t since;
        if (c->fd < 0 || !conn_eviction_rank(c, &class, &since)) continue;
        if (class < best_class || (class == best_class && since < best_since))
            best = i, best_class = class, best_since = since;
    }
    return best;
}

/* Accept every pending connection and, when read_now, read it; at the cap, make room by
 * eviction or close the new one at once, without reading (SPEC §7.5). Unread, a connection
 * is read at its first event (registering a socket that holds input reports it readable). */
static void accept_all(struct worker *w, bool read_now)
{
    for (;;) {
        int fd = accept4(w->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return; /* EAGAIN, or out of descriptors: wait for the next event */
        }
        unsigned open = atomic_fetch_add_explicit(&w->shared->open, 1, memory_order_relaxed);
        if (open >= w->shared->config.max_connections) {
            uint32_t victim = choose_victim(w);
            if (victim == UINT32_MAX) {
                atomic_fetch_sub_explicit(&w->shared->open, 1, memory_order_relaxed);
                close(fd);
                continue;
            }
            remove_conn(w, victim);
        }
        /* TCP_NODELAY comes from the listener (listener.h): no system call here. */
        uint32_t i = take_slot(&w->slots);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.u64 = i};
        if (i == UINT32_MAX || epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
            if (i != UINT32_MAX) w->slots.free[w->slots.free_len++] = i;
            atomic_fetch_sub_explicit(&w->shared->open, 1, memory_order_relaxed);
            close(fd);
            continue;
        }
        struct conn *c = &w->slots.conns[i];
        conn_init(c, fd, &w->env);
        w->slots.live++;
        /* Read it at once: a client's request is usually there already, and a connection
         * whose request is answered is not the one the next arrival at the cap evicts. */
        if (read_now && conn_on_readable(c, &w->env, false) == NEXT_CLOSE) {
            remove_conn(w, i);
            continue;
        }
        bool unused;
        note_deadline(w, conn_deadline(c, &w->env, &unused));
    }
}

/* Apply every passed deadline; the earliest deadline left becomes next_scan. */
static void expire(struct worker *w)
{
    w->next_scan = INT64_MAX;
    for (uint32_t i = 0; i < w->slots.size; i++) {
        struct conn *c = &w->slots.conns[i];
        if (c->fd < 0) continue;
        bool unused;
        enum next next = NEXT_KEEP;
        if (conn_deadline(c, &w->env, &unused) <= w->env.now) next = conn_expire(c, &w->env);
        if (next == NEXT_CLOSE) {
            remove_conn(w, i);
            if (w->slots.size == 0) return;
        } else {
            note_deadline(w, conn_deadline(c, &w->env, &unused));
        }
    }
}

/* Close this thread's listener and count it closed; the last one wakes the waiting threads. */
static void close_listener(struct worker *w)
{
    struct listeners *listeners = &w->shared->listeners;
    close(w->listen_fd);
    w->listen_fd = -1;
    pthread_mutex_lock(&listeners->lock);
    if (++listeners->closed == listeners->total) pthread_cond_broadcast(&listeners->all_closed);
    pthread_mutex_unlock(&listeners->lock);
}

/* Wait until every thread's listener is closed, at most LISTENERS_WAIT_NS. */
static void wait_for_listeners(struct listeners *listeners)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    int64_t ns = until.tv_nsec + LISTENERS_WAIT_NS;
    until.tv_sec += ns / NS;
    until.tv_nsec = ns % NS;
    pthread_mutex_lock(&listeners->lock);
    while (listeners->closed < listeners->total)
        if (pthread_cond_timedwait(&listeners->all_closed, &listeners->lock, &until) == ETIMEDOUT) break;
    pthread_mutex_unlock(&listeners->lock);
}

/* SIGTERM/SIGINT: stop listening at once; serve the open connections for the drain
 * window, counted from the signal, every answer with Connection: close (SPEC §7.6). The
 * connections the kernel already queued on the listener are open ones: accepted (unread,
 * so unanswered yet) before it is closed, where closing it would reset them. With
 * several threads, no answer goes out before every listener is closed: a client told to
 * close must not reconnect to another thread's listener that has not seen the signal yet.
 * Every answer this thread sends after the signal comes after this call. */
static void begin_shutdown(struct worker *w)
{
    const struct config *config = &w->shared->config;
    w->env.shutting_down = true;
    epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->shared->shutdown_fd, NULL);
    int64_t window = config->drain_timeout_ns < config->header_timeout_ns ? config->drain_timeout_ns
                                                                          : config->header_timeout_ns;
    w->drain_end = w->env.now + window;
    accept_all(w, false);
    close_listener(w);
    wait_for_listeners(&w->shared->listeners);
    w->env.now = monotonic_ns();
}

/* The window ended: what has nothing received or an incomplete head is closed unanswered;
 * what the sockets already hold is answered; responses under way are finished. */
static void end_drain(struct worker *w)
{
    w->drain_ended = true;
    for (uint32_t i = 0; i < w->slots.size; i++) {
        struct conn *c = &w->slots.conns[i];
        if (c->fd >= 0 && conn_end_drain(c, &w->env) == NEXT_CLOSE) {
            remove_conn(w, i);
            if (w->slots.size == 0) return;
        }
    }
}

/* One connection event. */
static void on_conn_event(struct worker *w, uint32_t i, uint32_t events)
{
    if (i >= w->slots.size || w->slots.conns[i].fd < 0) return;
    struct conn *c = &w->slots.conns[i];
    bool peer_closed = (events & (EPOLLHUP | EPOLLERR)) || ((events & EPOLLIN) && (events & EPOLLRDHUP));
    enum next next = NEXT_KEEP;
    if (events & EPOLLOUT) next = conn_on_writable(c, &w->env);
    if (next == NEXT_KEEP && ((events & EPOLLIN) || peer_closed)) next = conn_on_readable(c, &w->env, peer_closed);
    if (next == NEXT_CLOSE) {
        remove_conn(w, i);
    } else {
        bool unused;
        note_deadline(w, conn_deadline(c, &w->env, &unused));
    }
}

static void free_worker(struct worker *w)
{
    for (uint32_t i = 0; i < w->slots.size; i++)
        if (w->slots.conns[i].fd >= 0) {
            remove_conn(w, i);
            if (w->slots.size == 0) break;
        }
    if (w->listen_fd >= 0) close_listener(w); /* a loop that failed to start */
    close(w->epfd);
    free(w->env.input);
    free(w->env.out);
}

int server_run(struct shared *shared, int listen_fd)
{
    struct worker w = {.shared = shared, .listen_fd = listen_fd, .next_scan = INT64_MAX, .drain_end = INT64_MAX};
    const struct config *config = &shared->config;
    w.env = (struct env){
        .input = malloc(INPUT_BUFFER),
        .out = malloc(OUTPUT_BOUND + redirects_max_response(&shared->redirects)),
        .now = monotonic_ns(),
        .count = config->count,
        .redirects = &shared->redirects,
        .max_response = redirects_max_response(&shared->redirects),
        .header_timeout_ns = config->header_timeout_ns,
        .idle_timeout_ns = config->idle_timeout_ns,
    };
    date_update(&w.env.date, time(NULL));
    w.epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event listener = {.events = EPOLLIN | EPOLLET, .data.u64 = TOKEN_LISTENER};
    struct epoll_event shutdown = {.events = EPOLLIN, .data.u64 = TOKEN_SHUTDOWN};
    if (!w.env.input || !w.env.out || w.epfd < 0 || getrandom(&w.env.rng, sizeof w.env.rng, 0) != sizeof w.env.rng ||
        epoll_ctl(w.epfd, EPOLL_CTL_ADD, listen_fd, &listener) != 0 ||
        epoll_ctl(w.epfd, EPOLL_CTL_ADD, shared->shutdown_fd, &shutdown) != 0) {
        free_worker(&w);
        return -1;
    }
    struct epoll_event events[EVENTS];
    for (;;) {
        int64_t wake = w.next_scan;
        if (w.env.shutting_down) {
            int64_t phase_end = w.drain_ended ? w.drain_end + DRAIN_FINISH_NS : w.drain_end;
            if (phase_end < wake) wake = phase_end;
        }
        int timeout_ms = -1;
        if (wake != INT64_MAX) {
            int64_t left = wake - monotonic_ns();
            /* Rounded up, plus 1 ms: a timeout never fires early (SPEC §7.5). */
            timeout_ms = left <= 0 ? 0 : (int)(left / 1000000 + 1 < 86400000 ? left / 1000000 + 1 : 86400000);
        }
        int n = epoll_wait(w.epfd, events, EVENTS, timeout_ms);
        if (n < 0 && errno != EINTR) break;
        w.env.now = monotonic_ns();
        date_update(&w.env.date, time(NULL));
        for (int e = 0; e < n; e++) {
            uint64_t token = events[e].data.u64;
            if (token == TOKEN_LISTENER) {
                if (w.listen_fd >= 0) accept_all(&w, true);
            } else if (token == TOKEN_SHUTDOWN) {
                if (!w.env.shutting_down) begin_shutdown(&w);
            } else {
                on_conn_event(&w, (uint32_t)token, events[e].events);
            }
        }
        if (w.next_scan <= w.env.now) expire(&w);
        if (w.env.shutting_down) {
            if (!w.drain_ended && w.env.now >= w.drain_end) end_drain(&w);
            if (w.slots.live == 0 || (w.drain_ended && w.env.now >= w.drain_end + DRAIN_FINISH_NS)) break;
        }
    }
    free_worker(&w);
    return 0;
}
