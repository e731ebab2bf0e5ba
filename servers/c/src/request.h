/* Request heads (SPEC §2, §5, §6, §7.1): one entry point, parse_request(), with three
 * outcomes. Stateless, never allocates; the caller owns the buffer. */
#ifndef RENARD_REQUEST_H
#define RENARD_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest request line served, in octets without its line end (SPEC §5 rule 3). */
#define MAX_REQUEST_LINE 8192
/* Longest field section, from after the request line to the empty line included (rule 6). */
#define MAX_FIELD_SECTION 16384
/* Most field lines in one head (rule 6). */
#define MAX_FIELD_LINES 100

/* Why a request is refused; each one ends the connection (SPEC §7.2). */
enum reject {
    REJECT_BAD_REQUEST,      /* 400: malformed head, bad Host or framing */
    REJECT_TIMEOUT,          /* 408: header deadline passed mid-head (decided by conn.c) */
    REJECT_URI_TOO_LONG,     /* 414: request line longer than MAX_REQUEST_LINE */
    REJECT_FIELDS_TOO_LARGE, /* 431: field section too long or too many lines */
    REJECT_NOT_IMPLEMENTED,  /* 501: a transfer coding other than a lone chunked */
    REJECT_VERSION,          /* 505: HTTP/DIGIT.DIGIT other than 1.0 and 1.1 */
};

/* What the route of a well-formed request answers (SPEC §2). */
enum route {
    ROUTE_REDIRECT,           /* 302; seeded says whether seed_hash applies */
    ROUTE_HEALTH,             /* 200 ok\n */
    ROUTE_NOT_FOUND,          /* 404 */
    ROUTE_METHOD_NOT_ALLOWED, /* 405 with Allow */
};

/* A complete, valid request head. */
struct request {
    size_t head_len;         /* octets of the head in the input, leading empty lines included */
    enum route route;
    bool seeded;             /* ROUTE_REDIRECT: the query has a seed ... */
    uint64_t seed_hash;      /* ... whose FNV-1a-64 is this */
    bool head_method;        /* HEAD: no body in the answer */
    bool http10;             /* HTTP/1.0 (else HTTP/1.1) */
    bool keep_alive;         /* persists by the request's own terms (SPEC §7.1) */
    uint64_t content_length; /* body octets to discard (SPEC §6) */
    bool chunked;            /* Transfer-Encoding: chunked: answer, then close */
    bool expect_continue;    /* HTTP/1.1 Expect: 100-continue with a body: answer, close */
};

/* The three outcomes of parse_request. */
enum parse_outcome { PARSE_COMPLETE, PARSE_PARTIAL, PARSE_ERROR };

struct parse {
    enum parse_outcome outcome;
    struct request request; /* PARSE_COMPLETE */
    size_t empty_lines;     /* PARSE_PARTIAL: leading empty-line octets the caller may drop */
    enum reject reject;     /* PARSE_ERROR */
};

/* The fields rules 7, 8 and SPEC §7.1 read, gathered as the field lines pass. */
struct facts {
    uint8_t host_lines, content_length_lines, transfer_encoding_lines; /* saturating */
    bool bad_host;
    bool content_length_valid;    /* the last Content-Length is 1 to 18 digits ... */
    uint64_t content_length;      /* ... with this value */
    uint32_t te_start, te_end;    /* the last Transfer-Encoding value, OWS trimmed */
    bool close, keep_alive, expect_continue;
};

/* Where the one pass over a head stands, positions counted from the head's first octet
 * (leading empty lines are dropped by the caller, see PARSE_PARTIAL). Zeroed: a new head. */
struct progress {
    uint32_t pos;   /* the next octet to look at */
    uint8_t state;  /* private */
    uint8_t field;  /* the field line being read: which field it is */
    bool http10;
    uint32_t line_start, value_start;
    uint32_t method_end, target_end; /* the SP after the method, after the target */
    uint32_t fields_start, field_lines;
    struct facts facts;
};

/* Go on with the request head at the start of in[0..len) from where *p stands (SPEC §5:
 * every check of rules 1-6 at the octet that decides it; rules 7-9 at the empty line).
 * After PARSE_PARTIAL the caller drops `empty_lines` octets and calls again with the same
 * octets and more after them; after PARSE_COMPLETE or PARSE_ERROR it zeroes *p for the
 * next head. Each octet is looked at once across calls (but a CR at the very end, which
 * waits for its LF). */
struct parse parse_more(const uint8_t *in, size_t len, struct progress *p);

/* A whole head from scratch (tests and fuzzing). */
struct parse parse_request(const uint8_t *in, size_t len);

#endif
