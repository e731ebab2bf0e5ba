#include "conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "request.h"
#include "seed.h"

/* Lingering close: longest wait (ns), most octets discarded (SPEC §7.4). */
#define LINGER_NS (2 * 1000000000LL)
#define LINGER_BYTES (64 * 1024)
/* Do not read into less room than this; answer what is held first. */
#define MIN_READ 4096

static enum next flush(struct conn *c, struct env *env);
static enum next linger(struct conn *c, struct env *env);

/* wyrand: a 64-bit draw; k = draw mod N + 1 has a bias below 2^-44 for N <= 10^6 (SPEC §3). */
static uint64_t draw(uint64_t *state)
{
    *state += 0xa0761d6478bd642fULL;
    __uint128_t t = (__uint128_t)*state * (*state ^ 0xe7037ed1a0b428dbULL);
    return (uint64_t)(t >> 64) ^ (uint64_t)t;
}

void conn_init(struct conn *c, int fd, const struct env *env)
{
    *c = (struct conn){.fd = fd, .phase = PHASE_OPEN, .head_started = env->now, .last_progress = env->now};
}

static void drop_leftover(struct conn *c)
{
    free(c->leftover);
    c->leftover = NULL;
    c->leftover_len = 0;
}

void conn_close(struct conn *c)
{
    close(c->fd);
    drop_leftover(c);
    free(c->unsent);
    c->unsent = NULL;
    c->unsent_len = 0;
    c->fd = -1;
}

int64_t conn_deadline(const struct conn *c, const struct env *env, bool *request_timeout)
{
    int64_t idle = c->last_progress + env->idle_timeout_ns;
    *request_timeout = false;
    if (c->phase == PHASE_LINGERING) return c->linger_until;
    if (c->unsent_len > 0) return idle; /* the header deadline does not run on unread input */
    if (c->head_started < 0) return idle;
    int64_t head = c->head_started + env->header_timeout_ns;
    if (c->leftover_len > 0) {
        *request_timeout = true;
        return head;
    }
    return head < idle ? head : idle;
}

/* Queue a refusal with Connection: close; the client may still be sending. */
static void refuse(struct conn *c, struct env *env, enum reject reject)
{
    env->out_len += response_write(env->out + env->out_len, STATUS_REFUSED, 0, false, reject, false, CLOSE,
                                   env->redirects, &env->date);
    c->phase = PHASE_CLOSING;
    c->linger = true;
}

enum next conn_expire(struct conn *c, struct env *env)
{
    bool request_timeout;
    conn_deadline(c, env, &request_timeout);
    if (!request_timeout) return NEXT_CLOSE;
    drop_leftover(c);
    c->progress = (struct progress){0};
    refuse(c, env, REJECT_TIMEOUT);
    return flush(c, env);
}

/* Answer every complete request at the start of in[0..len) into env->out, discarding
 * bodies. Returns the octets consumed; *answered: any request was answered; *paused:
 * stopped by the output bound (else at the end, a partial head or a closing response). */
static size_t serve(struct conn *c, struct env *env, const uint8_t *in, size_t len, bool *answered, bool *paused)
{
    size_t at = 0;
    *answered = *paused = false;
    for (;;) {
        if (c->body_left > 0) {
            uint64_t skip = c->body_left < len - at ? c->body_left : len - at;
            c->body_left -= skip;
            at += (size_t)skip;
        }
        if (at == len || c->body_left > 0) return at;
        if (c->unsent_len + env->out_len + env->max_response > OUTPUT_BOUND) {
            *paused = true;
            return at;
        }
        struct parse p = parse_more(in + at, len - at, &c->progress);
        if (p.outcome != PARSE_PARTIAL) c->progress = (struct progress){0};
        switch (p.outcome) {
        case PARSE_COMPLETE: {
            const struct request *req = &p.request;
            *answered = true;
            at += req->head_len;
            bool close = env->shutting_down || !req->keep_alive || req->chunked || req->expect_continue;
            enum persistence persistence = close ? CLOSE : req->http10 ? KEEP_ALIVE : KEEP_OPEN;
            enum status status = STATUS_NOT_FOUND;
            uint32_t k = 0;
            switch (req->route) {
            case ROUTE_REDIRECT:
                status = STATUS_REDIRECT;
                k = req->seeded ? k_for_hash(req->seed_hash, env->count)
                                : (uint32_t)(draw(&env->rng) % env->count) + 1;
                break;
            case ROUTE_HEALTH: status = STATUS_HEALTH; break;
            case ROUTE_NOT_FOUND: status = STATUS_NOT_FOUND; break;
            case ROUTE_METHOD_NOT_ALLOWED: status = STATUS_METHOD_NOT_ALLOWED; break;
            }
            env->out_len += response_write(env->out + env->out_len, status, k, req->seeded, REJECT_BAD_REQUEST,
                                           req->head_method, persistence, env->redirects, &env->date);
            if (close) {
                /* A request that asked to close, with nothing after it and no body to
                 * come, leaves the client nothing to send: no need to linger. */
                bool done = !req->keep_alive && !req->chunked && req->content_length == 0 &&
                            !env->shutting_down && at == len;
                c->phase = PHASE_CLOSING;
                c->linger = !done;
                return len;
            }
            c->body_left = req->content_length;
            break;
        }
        case PARSE_PARTIAL:
            return at + p.empty_lines;
        case PARSE_ERROR:
            refuse(c, env, p.reject);
            *answered = true;
            return len;
        }
    }
}

/* Answer the requests in env->input[0..len), keep what is left as leftover, and move the
 * header deadline's start. True when stopped by the output bound; -1 when out of memory. */
static int serve_held(struct conn *c, struct env *env, size_t len)
{
    if (len == 0) return 0;
    bool answered, paused;
    size_t consumed = serve(c, env, env->input, len, &answered, &paused);
    if (consumed < len && c->phase == PHASE_OPEN) {
        c->leftover = malloc(len - consumed);
        if (!c->leftover) return -1;
        memcpy(c->leftover, env->input + consumed, len - consumed);
        c->leftover_len = (uint32_t)(len - consumed);
    }
    if (answered || c->head_started < 0) c->head_started = c->leftover_len > 0 ? env->now : -1;
    return paused;
}

/* Read and answer until the socket is drained, the output bound is reached, or the
 * connection is closing. Edge-triggered: a read shorter than the room means drained,
 * unless peer_closed says that the end of input waits behind the data. */
static enum next read_requests(struct conn *c, struct env *env, bool peer_closed)
{
    while (c->phase == PHASE_OPEN && c->unsent_len + env->max_response <= OUTPUT_BOUND) {
        size_t held = c->leftover_len;
        if (held > 0) memcpy(env->input, c->leftover, held);
        drop_leftover(c);
        size_t room = INPUT_BUFFER - held, received = 0;
        bool drained = false;
        if (room >= MIN_READ && !c->peer_done) {
            ssize_t n = recv(c->fd, env->input + held, room, 0);
            if (n == 0) {
                c->peer_done = true;
            } else if (n > 0) {
                received = (size_t)n;
                drained = received < room && !peer_closed;
            } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
                drained = true;
            } else if (errno != EINTR) {
                return NEXT_CLOSE;
            }
        }
        if (received > 0) c->last_progress = env->now;
        int paused = serve_held(c, env, held + received);
        if (paused < 0) return NEXT_CLOSE;
        if (c->peer_done && !paused && c->phase == PHASE_OPEN) {
            /* Every whole request the peer sent is answered; a partial one never ends.
             * The peer has shut its side: nothing more can come, no need to linger. */
            c->phase = PHASE_CLOSING;
            c->linger = false;
            drop_leftover(c);
        }
        if (flush(c, env) == NEXT_CLOSE) return NEXT_CLOSE;
        /* Paused: leftover holds whole requests; go on once the output has room. */
        if (drained && !paused) break;
    }
    return NEXT_KEEP;
}

enum next conn_on_readable(struct conn *c, struct env *env, bool peer_closed)
{
    switch (c->phase) {
    case PHASE_OPEN: return read_requests(c, env, peer_closed);
    case PHASE_LINGERING: return linger(c, env);
    default: return NEXT_KEEP;
    }
}

enum next conn_on_writable(struct conn *c, struct env *env)
{
    if (c->unsent_len == 0) return NEXT_KEEP;
    if (flush(c, env) == NEXT_CLOSE) return NEXT_CLOSE;
    /* Reading was paused while the output bound was reached: resume. */
    if (c->phase == PHASE_OPEN && c->unsent_len + env->max_response <= OUTPUT_BOUND)
        return read_requests(c, env, false);
    return NEXT_KEEP;
}

/* Write as much of b[0..n) as the socket takes now: the octets taken, or -1 on error. */
static ssize_t write_some(int fd, const char *b, size_t n)
{
    size_t written = 0;
    while (written < n) {
        ssize_t w = send(fd, b + written, n - written, MSG_NOSIGNAL);
        if (w > 0) {
            written += (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else {
            return -1;
        }
    }
    return (ssize_t)written;
}

/* Append b[0..n) to unsent; false when out of memory. */
static bool keep_unsent(struct conn *c, const char *b, size_t n)
{
    if (n == 0) return true;
    char *grown = realloc(c->unsent, c->unsent_len + n);
    if (!grown) return false;
    memcpy(grown + c->unsent_len, b, n);
    c->unsent = grown;
    c->unsent_len += (uint32_t)n;
    return true;
}

/* Write env->out (then empty) after anything unsent; keep what the socket does not take.
 * A closing connection whose output is all sent lingers, or closes at once. */
static enum next flush(struct conn *c, struct env *env)
{
    if (env->out_len > 0) {
        bool ok = true;
        if (c->unsent_len == 0) {
            ssize_t n = write_some(c->fd, env->out, env->out_len);
            if (n > 0) c->last_progress = env->now;
            ok = n >= 0 && keep_unsent(c, env->out + n, env->out_len - (size_t)n);
        } else {
            ok = keep_unsent(c, env->out, env->out_len);
        }
        env->out_len = 0;
        if (!ok) return NEXT_CLOSE;
    } else if (c->unsent_len > 0) {
        ssize_t n = write_some(c->fd, c->unsent, c->unsent_len);
        if (n < 0) return NEXT_CLOSE;
        if (n > 0) {
            c->last_progress = env->now;
            c->unsent_len -= (uint32_t)n;
            if (c->unsent_len == 0) {
                free(c->unsent);
                c->unsent = NULL;
            } else {
                memmove(c->unsent, c->unsent + n, c->unsent_len);
            }
        }
    }
    if (c->phase == PHASE_CLOSING && c->unsent_len == 0) {
        if (!c->linger || shutdown(c->fd, SHUT_WR) != 0) return NEXT_CLOSE;
        drop_leftover(c);
        c->phase = PHASE_LINGERING;
        c->linger_until = env->now + LINGER_NS;
        c->discarded = 0;
        return linger(c, env);
    }
    return NEXT_KEEP;
}

/* Discard input after the write side is shut, until EOF, LINGER_BYTES or an error (the
 * deadline is the caller's). */
static enum next linger(struct conn *c, struct env *env)
{
    for (;;) {
        ssize_t n = recv(c->fd, env->input, INPUT_BUFFER, 0);
        if (n == 0) return NEXT_CLOSE;
        if (n > 0) {
            c->discarded += (uint32_t)n;
            if (c->discarded >= LINGER_BYTES) return NEXT_CLOSE;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return NEXT_KEEP;
        } else if (errno != EINTR) {
            return NEXT_CLOSE;
        }
    }
}

bool conn_eviction_rank(const struct conn *c, int *class, int64_t *since)
{
    switch (c->phase) {
    case PHASE_LINGERING:
        *class = 0, *since = c->linger_until;
        return true;
    case PHASE_CLOSING:
        return false;
    default:
        if (c->unsent_len > 0 || c->body_left > 0 || c->peer_done) return false;
        if (c->leftover_len > 0) {
            /* A partial head: whole requests are held only while output waits (above). */
            *class = 1, *since = c->head_started >= 0 ? c->head_started : c->last_progress;
        } else {
            *class = 2, *since = c->last_progress;
        }
        return true;
    }
}

enum next conn_end_drain(struct conn *c, struct env *env)
{
    if (c->phase == PHASE_OPEN && c->unsent_len == 0 && read_requests(c, env, false) == NEXT_CLOSE)
        return NEXT_CLOSE;
    return c->phase == PHASE_OPEN && c->unsent_len == 0 ? NEXT_CLOSE : NEXT_KEEP;
}
