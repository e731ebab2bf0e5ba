/* floor-uring: the physical limit of renard's design on io_uring, not a conforming server.
 *
 * The same answers as floor.c (answer.h: one pre-rendered 302 per CRLF CRLF, the close
 * variant for "Connection: close"), with io_uring instead of epoll: one multishot accept on
 * the listener, one multishot receive per connection into a ring of provided buffers, and
 * one io_uring_enter per batch, which submits what the batch queued and waits for the next.
 *
 * System calls, the figure this program minimises (README: counted with strace): none per
 * request but its share of one io_uring_enter. A send completes inline while it is
 * submitted, so a batch whose queued work will post E completions at once waits for E + 1:
 * those and the next event. Waiting for 1 would return at once on the sends' completions
 * and cost a second io_uring_enter per request. The wait is bounded (WAIT_NS) for a send
 * that does not complete inline (the client is not reading): then the loop runs on what it
 * has: a client slower than that to send its next request costs one io_uring_enter more.
 * Sends use MSG_WAITALL, so a completion means every byte went, or an error. The listener
 * defers accept until the request's bytes are there (TCP_DEFER_ACCEPT), so the receive
 * armed on a new connection completes at once: a new connection costs one io_uring_enter
 * to arm its receive, whose completion is then the event the wait returns with.
 *
 * Each request's user_data names the connection (descriptor and generation) and the
 * operation, so that the completion of a connection already closed is recognised.
 *
 * usage: floor-uring HOST PORT LOCATION   (PORT 0: the kernel picks; prints `listening on`)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "answer.h"

enum {
    MAX_FDS = 65536,
    ENTRIES = 1024,          /* submission queue; the completion queue is 4 times larger */
    BUFFERS = 1024,          /* provided buffers, a power of two */
    BUFFER_SIZE = 4096,      /* bytes each */
    GROUP = 0,               /* the buffer group id */
    WAIT_NS = 10000000,      /* the longest wait for completions expected at once, in ns */
};
enum op { ACCEPT, RECV, SEND, SHUTDOWN, CLOSE, SIGNAL };

/* A connection: answer.h's bookkeeping, a generation (bumped at every accept of this
 * descriptor), whether a send is in flight (one at a time, so bytes stay in order), and
 * closing: 0 open, 1 shutdown queued, 2 close queued. */
struct uconn { struct conn c; uint32_t generation; unsigned char sending, closing; };

static struct answer keep, bye;
static struct uconn conns[MAX_FDS];
static struct io_uring ring;
static struct io_uring_buf_ring *buffers;
static char *buffer_memory;
static unsigned expected; /* completions that what was queued since the last wait will post at once */

static uint64_t tag(int fd, enum op op) {
    return (uint64_t)(uint32_t)fd | (uint64_t)op << 32 | (uint64_t)(conns[fd].generation & 0xffffff) << 40;
}

static struct io_uring_sqe *sqe(void) {
    struct io_uring_sqe *s;
    while (!(s = io_uring_get_sqe(&ring))) io_uring_submit(&ring);
    return s;
}

static void arm_accept(int listener) {
    struct io_uring_sqe *s = sqe();
    io_uring_prep_multishot_accept(s, listener, NULL, NULL, 0);
    io_uring_sqe_set_data64(s, (uint64_t)(uint32_t)listener | (uint64_t)ACCEPT << 32);
}

static void arm_recv(int fd) {
    struct io_uring_sqe *s = sqe();
    io_uring_prep_recv_multishot(s, fd, NULL, 0, 0);
    s->flags |= IOSQE_BUFFER_SELECT;
    s->buf_group = GROUP;
    io_uring_sqe_set_data64(s, tag(fd, RECV));
}

/* Queues the next send of what fd owes, unless one is in flight or nothing is owed. The
 * close variant's last send is chained to a shutdown, which ends the multishot receive, and
 * to the close: the connection costs no further io_uring_enter. */
static void send_owed(int fd) {
    struct uconn *u = &conns[fd];
    if (u->sending || u->closing || u->c.owed == 0) return;
    const struct answer *a = u->c.close ? &bye : &keep;
    size_t want;
    const char *from = answer_next(a, &u->c, &want);
    struct io_uring_sqe *s = sqe();
    io_uring_prep_send(s, fd, from, want, MSG_WAITALL | MSG_NOSIGNAL);
    io_uring_sqe_set_data64(s, tag(fd, SEND));
    u->sending = 1;
    expected++; /* the send's completion */
    if (!u->c.close || want < u->c.owed) return;
    s->flags |= IOSQE_IO_HARDLINK; /* the chain goes on even when the send fails */
    s = sqe();
    io_uring_prep_shutdown(s, fd, SHUT_RDWR);
    io_uring_sqe_set_data64(s, tag(fd, SHUTDOWN));
    s->flags |= IOSQE_IO_HARDLINK | IOSQE_CQE_SKIP_SUCCESS;
    s = sqe();
    io_uring_prep_close(s, fd);
    io_uring_sqe_set_data64(s, tag(fd, CLOSE));
    s->flags |= IOSQE_CQE_SKIP_SUCCESS;
    u->closing = 2;
    expected++; /* the receive's last completion, which the shutdown causes */
}

/* Ends fd. While its multishot receive may still hold it, a shutdown first: the receive's
 * last completion (0) then ends it again with receiving = 0, which closes. */
static void end(int fd, int receiving) {
    struct uconn *u = &conns[fd];
    if (u->closing == 2 || (receiving && u->closing == 1)) return;
    u->closing = receiving ? 1 : 2;
    u->c.owed = 0;
    struct io_uring_sqe *s = sqe();
    if (receiving) io_uring_prep_shutdown(s, fd, SHUT_RDWR);
    else io_uring_prep_close(s, fd);
    io_uring_sqe_set_data64(s, tag(fd, receiving ? SHUTDOWN : CLOSE));
}

static void give_back(unsigned id) {
    io_uring_buf_ring_add(buffers, buffer_memory + (size_t)id * BUFFER_SIZE, BUFFER_SIZE, (unsigned short)id,
                          io_uring_buf_ring_mask(BUFFERS), 0);
    io_uring_buf_ring_advance(buffers, 1);
}

static void on_recv(int fd, const struct io_uring_cqe *cqe, int current) {
    struct uconn *u = &conns[fd];
    if (cqe->flags & IORING_CQE_F_BUFFER) {
        unsigned id = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
        if (current && cqe->res > 0 && !u->closing)
            owe_for(&keep, &bye, &u->c, buffer_memory + (size_t)id * BUFFER_SIZE, (size_t)cqe->res);
        give_back(id);
    }
    if (!current) return; /* a connection closed since: only its buffer mattered */
    if (cqe->flags & IORING_CQE_F_MORE) {
        send_owed(fd);
    } else if (cqe->res > 0 || cqe->res == -ENOBUFS) {
        if (!u->closing) arm_recv(fd); /* ENOBUFS: every buffer was in use; they are back now */
        send_owed(fd);
    } else {
        end(fd, 0); /* end of stream or an error: the receive is over */
    }
}

static void on_send(int fd, const struct io_uring_cqe *cqe) {
    struct uconn *u = &conns[fd];
    u->sending = 0;
    if (u->closing == 2) return; /* the chain closed it */
    if (cqe->res < 0) { end(fd, 1); return; }
    answer_sent(u->c.close ? &bye : &keep, &u->c, (size_t)cqe->res);
    if (u->c.owed > 0) send_owed(fd);
    else if (u->c.close) end(fd, 1);
}

/* SIGTERM arrives as a read of a signalfd in the ring: a signal handler would not run
 * under Valgrind while io_uring_enter waits (it holds signals back during that call). */
static void arm_signal(int signals, struct signalfd_siginfo *info) {
    struct io_uring_sqe *s = sqe();
    io_uring_prep_read(s, signals, info, sizeof *info, 0);
    io_uring_sqe_set_data64(s, (uint64_t)(uint32_t)signals | (uint64_t)SIGNAL << 32);
}

static void on_cqe(int listener, const struct io_uring_cqe *cqe) {
    int fd = (int)(uint32_t)cqe->user_data;
    enum op op = (enum op)((cqe->user_data >> 32) & 0xff);
    if (op == SIGNAL) exit(0);
    if (op == ACCEPT) {
        if (!(cqe->flags & IORING_CQE_F_MORE)) arm_accept(listener);
        if (cqe->res < 0) return;
        if (cqe->res >= MAX_FDS) { close(cqe->res); return; }
        struct uconn *u = &conns[cqe->res];
        *u = (struct uconn){ .generation = u->generation + 1 };
        arm_recv(cqe->res); /* its request is there (TCP_DEFER_ACCEPT): this completes at once */
        return;
    }
    int current = (uint32_t)(cqe->user_data >> 40) == (conns[fd].generation & 0xffffff);
    if (op == RECV) on_recv(fd, cqe, current);
    else if (op == SEND && current) on_send(fd, cqe);
}

static int setup_buffers(void) {
    buffer_memory = mmap(NULL, (size_t)BUFFERS * BUFFER_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    buffers = mmap(NULL, BUFFERS * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buffer_memory == MAP_FAILED || buffers == MAP_FAILED) return -ENOMEM;
    struct io_uring_buf_reg reg = { .ring_addr = (uintptr_t)buffers, .ring_entries = BUFFERS, .bgid = GROUP };
    int rc = io_uring_register_buf_ring(&ring, &reg, 0);
    if (rc) return rc;
    io_uring_buf_ring_init(buffers);
    for (unsigned id = 0; id < BUFFERS; id++)
        io_uring_buf_ring_add(buffers, buffer_memory + (size_t)id * BUFFER_SIZE, BUFFER_SIZE, (unsigned short)id,
                              io_uring_buf_ring_mask(BUFFERS), (int)id);
    io_uring_buf_ring_advance(buffers, BUFFERS);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: floor-uring HOST PORT LOCATION\n"); return 2; }
    if (render(&keep, argv[3], "") || render(&bye, argv[3], "Connection: close\r\n")) {
        fprintf(stderr, "floor-uring: LOCATION must contain {n}, under 400 bytes\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigaddset(&term, SIGINT);
    sigprocmask(SIG_BLOCK, &term, NULL);
    int signals = signalfd(-1, &term, SFD_CLOEXEC);
    static struct signalfd_siginfo info;

    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[2])) };
    if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) { fprintf(stderr, "floor-uring: HOST must be an IPv4 address\n"); return 2; }
    int one = 1, listener = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(listener, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);     /* inherited by accepted sockets */
    setsockopt(listener, IPPROTO_TCP, TCP_DEFER_ACCEPT, &one, sizeof one); /* seconds; then accepted anyway */
    socklen_t len = sizeof addr;
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) || listen(listener, 4096)
        || getsockname(listener, (struct sockaddr *)&addr, &len)) { perror("floor-uring: listen"); return 1; }

    struct io_uring_params params = {
        .flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_CQSIZE,
        .cq_entries = ENTRIES * 4,
    };
    int rc = io_uring_queue_init_params(ENTRIES, &ring, &params);
    if (rc == 0 && !(params.features & IORING_FEAT_EXT_ARG)) rc = -ENOTSUP;
    if (rc == 0) rc = setup_buffers();
    if (rc) { fprintf(stderr, "floor-uring: io_uring: %s\n", strerror(-rc)); return 1; }
    fprintf(stderr, "listening on http://%s:%u\n", argv[1], ntohs(addr.sin_port));

    arm_accept(listener);
    arm_signal(signals, &info);
    for (;;) {
        struct __kernel_timespec wait = { .tv_nsec = WAIT_NS };
        struct io_uring_cqe *first;
        unsigned want = expected < ENTRIES ? expected + 1 : ENTRIES; /* never more than the ring holds */
        expected = 0;
        rc = io_uring_submit_and_wait_timeout(&ring, &first, want, want > 1 ? &wait : NULL, NULL);
        /* ETIME: the bounded wait ended; EBUSY: completions overflowed; either way, reap */
        if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EBUSY) {
            fprintf(stderr, "floor-uring: io_uring_enter: %s\n", strerror(-rc));
            return 1;
        }
        unsigned head, seen = 0;
        struct io_uring_cqe *cqe;
        io_uring_for_each_cqe(&ring, head, cqe) {
            on_cqe(listener, cqe);
            seen++;
        }
        io_uring_cq_advance(&ring, seen);
    }
}
