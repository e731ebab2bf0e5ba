/* One connection (SPEC §6, §7): reading, answering every complete request of a read with
 * one write, body discard, persistence, lingering close, deadlines.
 *
 * Memory contract: an idle connection holds no buffer. `leftover` holds only a partial
 * head (or input set aside while the output bound is reached); `unsent` holds only what
 * the socket did not take. Both are freed as soon as they empty. */
#ifndef RENARD_CONN_H
#define RENARD_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "request.h"
#include "response.h"

/* Most unsent response octets held per connection (SPEC §7.5). */
#define OUTPUT_BOUND (64 * 1024)
/* Read buffer per thread: larger than the largest head (about 24.6 KiB). */
#define INPUT_BUFFER (128 * 1024)

/* Per-thread state that every connection of the thread uses, one at a time. */
struct env {
    uint8_t *input;      /* INPUT_BUFFER octets; contents do not outlive one call */
    char *out;           /* responses of the current read batch, written at once */
    size_t out_len;
    struct date_line date;
    uint64_t rng;        /* wyrand state, seeded from the OS */
    int64_t now;         /* monotonic time of the current event batch, ns */
    uint32_t count;      /* N */
    const struct redirects *redirects;
    size_t max_response; /* longest possible response, octets */
    int64_t header_timeout_ns;
    int64_t idle_timeout_ns;
    bool shutting_down;  /* SIGTERM/SIGINT seen: every response closes (SPEC §7.6) */
};

enum phase {
    PHASE_OPEN,      /* reading requests */
    PHASE_CLOSING,   /* a closing response is queued; nothing more is read as requests */
    PHASE_LINGERING, /* write side shut; discarding input until linger_until or 64 KiB */
};

/* A client connection. */
struct conn {
    int fd;
    uint8_t phase;      /* enum phase */
    bool linger;        /* CLOSING: the client may still send, so stage the close (§7.4) */
    bool peer_done;     /* the peer shut its write side */
    uint32_t leftover_len, unsent_len, discarded;
    uint8_t *leftover;  /* partial head, or input held while output waits */
    char *unsent;       /* response octets the socket has not taken */
    uint64_t body_left; /* body octets still to discard (SPEC §6) */
    struct progress progress; /* the parse of the head in leftover, resumed on each read */
    int64_t head_started; /* ns; start of the header deadline, -1 when no head is due */
    int64_t last_progress; /* ns; last octets received or taken by the socket */
    int64_t linger_until;  /* ns; LINGERING */
};

/* What the caller does with the connection after an event. */
enum next { NEXT_KEEP, NEXT_CLOSE };

/* A connection on fd, accepted at env->now. */
void conn_init(struct conn *c, int fd, const struct env *env);

/* Close the socket and free the buffers. */
void conn_close(struct conn *c);

/* When the connection expires (ns), and whether it then gets a 408 first. */
int64_t conn_deadline(const struct conn *c, const struct env *env, bool *request_timeout);

/* The deadline passed: close, or answer 408 and close (SPEC §7.5). */
enum next conn_expire(struct conn *c, struct env *env);

/* The socket is readable; peer_closed: the event also reported the peer's FIN. */
enum next conn_on_readable(struct conn *c, struct env *env, bool peer_closed);

/* The socket is writable. */
enum next conn_on_writable(struct conn *c, struct env *env);

/* How readily the connection may be evicted at the cap (SPEC §7.5, §7.5.1): false when it
 * must not be (a request not answered, output not written, a body being discarded); else
 * *class (0 lingering, 1 partial head, 2 nothing received) and *since, smallest first. */
bool conn_eviction_rank(const struct conn *c, int *class, int64_t *since);

/* The drain window ended (SPEC §7.6): answer what the socket already holds (with
 * Connection: close), then close unless a response is under way. */
enum next conn_end_drain(struct conn *c, struct env *env);

#endif
