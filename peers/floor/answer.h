/* The floor's answer and its bookkeeping, shared by floor.c (epoll) and floor-uring.c
 * (io_uring): a pre-rendered 302 repeated BATCH times so that a run of owed answers goes
 * out in one send, and the count of head terminators (CRLF CRLF) a connection has sent. */
#ifndef FLOOR_ANSWER_H
#define FLOOR_ANSWER_H

#include <stdio.h>
#include <string.h>

enum { BATCH = 16, ONE_MAX = 512 };

struct answer { char bytes[BATCH * ONE_MAX]; size_t len; }; /* len: one answer, in bytes */

/* owed: bytes still to send; phase: offset of the next byte within one answer;
 * match: how much of CRLF CRLF the last read ended with; close: the close variant;
 * armed: the mechanism's own (floor.c: the epoll events registered, 0 for none). */
struct conn { unsigned long long owed; size_t phase; unsigned armed; unsigned char match, close; };

/* Renders the 302 for LOCATION (its {n} replaced by 1) with the extra header line
 * CONNECTION, BATCH times over; returns 0, or -1 when LOCATION has no {n} or is too long. */
static inline int render(struct answer *a, const char *location, const char *connection) {
    char one[ONE_MAX];
    const char *n = strstr(location, "{n}");
    int len = n ? snprintf(one, sizeof one, "HTTP/1.1 302 Found\r\nLocation: %.*s1%s\r\nContent-Length: 0\r\n%s\r\n",
                           (int)(n - location), location, n + 3, connection)
                : -1;
    if (len < 0 || (size_t)len >= sizeof one) return -1;
    for (int i = 0; i < BATCH; i++) memcpy(a->bytes + i * len, one, (size_t)len);
    a->len = (size_t)len;
    return 0;
}

/* Counts head terminators in data, carrying a partial CRLF CRLF across reads in c->match. */
static inline unsigned count_heads(struct conn *c, const char *data, size_t n) {
    static const char end[] = "\r\n\r\n";
    unsigned heads = 0;
    for (size_t i = 0; i < n; i++) {
        c->match = data[i] == end[c->match] ? c->match + 1 : data[i] == '\r' ? 1 : 0;
        if (c->match == 4) { heads++; c->match = 0; }
    }
    return heads;
}

/* Adds to c->owed one answer per head in data; a connection with nothing owed that says
 * "Connection: close" switches to the close variant. */
static inline void owe_for(const struct answer *keep, const struct answer *bye, struct conn *c,
                           const char *data, size_t n) {
    if (!c->close && c->owed == 0 && memmem(data, n, "Connection: close", 17)) c->close = 1;
    c->owed += (unsigned long long)count_heads(c, data, n) * (c->close ? bye->len : keep->len);
}

/* The next bytes to send: a pointer into a->bytes and, in *want, how many (at most what
 * is owed, at most to the end of the BATCH copies). */
static inline const char *answer_next(const struct answer *a, const struct conn *c, size_t *want) {
    size_t room = a->len * BATCH - c->phase;
    *want = c->owed < room ? (size_t)c->owed : room;
    return a->bytes + c->phase;
}

/* Records that sent bytes went out. */
static inline void answer_sent(const struct answer *a, struct conn *c, size_t sent) {
    c->owed -= sent;
    c->phase = (c->phase + sent) % a->len;
}

#endif
