/* Request heads (SPEC §5) in one pass, each octet looked at once with a 256-entry class
 * table, resumable across reads: a head dripped octet by octet costs O(n) in total,
 * because struct progress keeps the position and everything learned so far. Every check
 * of rules 1-6 is made at the octet that decides it (a bad octet, an over-long line or
 * section is answered at once); rules 7-9 need the whole head and are applied at its
 * empty line, from facts gathered on the way. The flagship's parser is the same machine,
 * so that both answer every input, however it is split, alike. */
#include "request.h"

#include <string.h>

#include "seed.h"

/* Octet classes (bit flags). */
enum { TCHAR = 1, VCHAR = 2, FIELD_VALUE = 4, HOST = 8 };

#define TOKEN_EXTRA(c)                                                                                   \
    ((c) == '!' || (c) == '#' || (c) == '$' || (c) == '%' || (c) == '&' || (c) == '\'' || (c) == '*' ||  \
     (c) == '+' || (c) == '-' || (c) == '.' || (c) == '^' || (c) == '_' || (c) == '`' || (c) == '|' ||   \
     (c) == '~')
#define HOST_EXTRA(c)                                                                                    \
    ((c) == '-' || (c) == '.' || (c) == '_' || (c) == '~' || (c) == '!' || (c) == '$' || (c) == '&' ||   \
     (c) == '\'' || (c) == '(' || (c) == ')' || (c) == '*' || (c) == '+' || (c) == ',' || (c) == ';' ||  \
     (c) == '=' || (c) == '%')
#define ALNUM(c) (((c) >= '0' && (c) <= '9') || ((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z'))
/* TCHAR: RFC 9110 token; VCHAR: 0x21-0x7E, target octets (rule 3); FIELD_VALUE: SP, HTAB,
 * VCHAR, obs-text (rule 5); HOST: RFC 3986 unreserved, sub-delims and '%' (rule 7). */
#define CLASS_OF(c)                                                                                      \
    ((ALNUM(c) || TOKEN_EXTRA(c) ? TCHAR : 0) | ((c) >= 0x21 && (c) <= 0x7e ? VCHAR | FIELD_VALUE : 0) | \
     ((c) == ' ' || (c) == '\t' || (c) >= 0x80 ? FIELD_VALUE : 0) | (ALNUM(c) || HOST_EXTRA(c) ? HOST : 0))
#define C4(c) CLASS_OF(c), CLASS_OF(c + 1), CLASS_OF(c + 2), CLASS_OF(c + 3)
#define C16(c) C4(c), C4(c + 4), C4(c + 8), C4(c + 12)
#define C64(c) C16(c), C16(c + 16), C16(c + 32), C16(c + 48)
static const uint8_t CLASS[256] = {C64(0), C64(64), C64(128), C64(192)};

static inline bool is(uint8_t b, uint8_t class) { return CLASS[b] & class; }

static bool is_digit(uint8_t b) { return b >= '0' && b <= '9'; }

static uint8_t lower(uint8_t b) { return (b >= 'A' && b <= 'Z') ? (uint8_t)(b + 32) : b; }

/* s[0..n) equals the lowercase word w, ignoring ASCII case. */
static bool equals_word(const uint8_t *s, size_t n, const char *w)
{
    if (n != strlen(w)) return false;
    for (size_t i = 0; i < n; i++)
        if (lower(s[i]) != (uint8_t)w[i]) return false;
    return true;
}

/* A span of the input. */
struct span {
    const uint8_t *at;
    size_t len;
};

/* s without SP or HTAB at either end. */
static struct span trim_ows(struct span s)
{
    while (s.len > 0 && (s.at[0] == ' ' || s.at[0] == '\t')) s.at++, s.len--;
    while (s.len > 0 && (s.at[s.len - 1] == ' ' || s.at[s.len - 1] == '\t')) s.len--;
    return s;
}

enum state { START, METHOD, TARGET, VERSION, LINE_START, NAME, VALUE_START, VALUE };
enum field { OTHER, F_HOST, F_CONTENT_LENGTH, F_TRANSFER_ENCODING, F_CONNECTION, F_EXPECT };

/* Which field a name is (case-insensitive). */
static enum field field_kind(const uint8_t *name, size_t n)
{
    switch (n) {
    case 4: return equals_word(name, n, "host") ? F_HOST : OTHER;
    case 6: return equals_word(name, n, "expect") ? F_EXPECT : OTHER;
    case 10: return equals_word(name, n, "connection") ? F_CONNECTION : OTHER;
    case 14: return equals_word(name, n, "content-length") ? F_CONTENT_LENGTH : OTHER;
    case 17: return equals_word(name, n, "transfer-encoding") ? F_TRANSFER_ENCODING : OTHER;
    default: return OTHER;
    }
}

/* Rule 7: empty, or host [":" port], host a reg-name/IPv4 or an IP-literal in brackets,
 * port zero or more digits. */
static bool is_valid_host(struct span v)
{
    if (v.len == 0) return true;
    size_t i = 0;
    if (v.at[0] == '[') {
        const uint8_t *close = memchr(v.at, ']', v.len);
        if (!close || close == v.at + 1) return false;
        for (i = 1; v.at + i < close; i++)
            if (!((is(v.at[i], HOST) && v.at[i] != '%') || v.at[i] == ':')) return false;
        i++;
    } else {
        for (; i < v.len && v.at[i] != ':'; i++)
            if (!is(v.at[i], HOST)) return false;
    }
    if (i == v.len) return true;
    if (v.at[i] != ':') return false;
    for (i++; i < v.len; i++)
        if (!is_digit(v.at[i])) return false;
    return true;
}

/* Content-Length: 1 to 18 digits, nothing else (rule 8). */
static bool parse_content_length(struct span v, uint64_t *out)
{
    if (v.len == 0 || v.len > 18) return false;
    uint64_t n = 0;
    for (size_t i = 0; i < v.len; i++) {
        if (!is_digit(v.at[i])) return false;
        n = n * 10 + (uint64_t)(v.at[i] - '0');
    }
    *out = n;
    return true;
}

/* Record what the field line just read says; value is OWS-trimmed, within in. */
static void note_field(struct progress *p, const uint8_t *in, struct span value)
{
    struct facts *f = &p->facts;
    switch ((enum field)p->field) {
    case OTHER: break;
    case F_HOST:
        if (f->host_lines < UINT8_MAX) f->host_lines++;
        if (!is_valid_host(value)) f->bad_host = true;
        break;
    case F_CONTENT_LENGTH:
        if (f->content_length_lines < UINT8_MAX) f->content_length_lines++;
        f->content_length_valid = parse_content_length(value, &f->content_length);
        break;
    case F_TRANSFER_ENCODING:
        if (f->transfer_encoding_lines < UINT8_MAX) f->transfer_encoding_lines++;
        f->te_start = (uint32_t)(value.at - in);
        f->te_end = (uint32_t)(value.at - in + value.len);
        break;
    case F_CONNECTION: {
        size_t start = 0;
        for (size_t k = 0; k <= value.len; k++) {
            if (k < value.len && value.at[k] != ',') continue;
            struct span token = trim_ows((struct span){value.at + start, k - start});
            if (equals_word(token.at, token.len, "close")) f->close = true;
            if (equals_word(token.at, token.len, "keep-alive")) f->keep_alive = true;
            start = k + 1;
        }
        break;
    }
    case F_EXPECT:
        f->expect_continue = equals_word(value.at, value.len, "100-continue");
        break;
    }
}

/* Rule 8 on a Transfer-Encoding value: 0 when it is exactly chunked; else -1 and *why. */
static int check_transfer_codings(struct span v, enum reject *why)
{
    size_t start = 0, count = 0;
    struct span last = {v.at, 0};
    for (size_t k = 0; k <= v.len; k++) {
        if (k < v.len && v.at[k] != ',') continue;
        struct span coding = trim_ows((struct span){v.at + start, k - start});
        if (coding.len == 0) return *why = REJECT_BAD_REQUEST, -1;
        count++;
        last = coding;
        start = k + 1;
    }
    if (!equals_word(last.at, last.len, "chunked")) return *why = REJECT_BAD_REQUEST, -1;
    if (count > 1) return *why = REJECT_NOT_IMPLEMENTED, -1;
    return 0;
}

/* The path and path-and-query of an origin-form or absolute-form target (SPEC §2);
 * false for any other form. An absolute-form target without a path has the path "/". */
static bool split_target(struct span target, struct span *path, struct span *path_and_query)
{
    struct span pq = target;
    if (target.at[0] != '/') {
        size_t skip;
        if (target.len >= 7 && equals_word(target.at, 7, "http://"))
            skip = 7;
        else if (target.len >= 8 && equals_word(target.at, 8, "https://"))
            skip = 8;
        else
            return false;
        size_t k = skip;
        while (k < target.len && target.at[k] != '/' && target.at[k] != '?' && target.at[k] != '#') k++;
        if (k == skip) return false;
        pq = (struct span){target.at + k, target.len - k};
    }
    const uint8_t *q = pq.len ? memchr(pq.at, '?', pq.len) : NULL;
    *path = (struct span){pq.at, q ? (size_t)(q - pq.at) : pq.len};
    if (path->len == 0) *path = (struct span){(const uint8_t *)"/", 1};
    *path_and_query = pq;
    return true;
}

/* Rules 7-9 on a head in[0..head_len) that passed rules 1-6. */
static struct parse complete(const uint8_t *in, const struct progress *p, size_t head_len)
{
    struct parse r = {.outcome = PARSE_ERROR, .reject = REJECT_BAD_REQUEST};
    const struct facts *f = &p->facts;
    struct request *req = &r.request;
    if (f->bad_host || f->host_lines > 1 || (!p->http10 && f->host_lines == 0)) return r;
    if (f->content_length_lines > 1 || (f->content_length_lines == 1 && !f->content_length_valid)) return r;
    uint64_t content_length = f->content_length_lines == 1 ? f->content_length : 0;
    bool chunked = false;
    if (f->transfer_encoding_lines > 0) {
        if (f->content_length_lines > 0 || p->http10 || f->transfer_encoding_lines > 1) return r;
        struct span te = {in + f->te_start, f->te_end - f->te_start};
        if (check_transfer_codings(te, &r.reject) != 0) return r;
        chunked = true;
    }
    struct span method = {in, p->method_end};
    struct span target = {in + p->method_end + 1, p->target_end - p->method_end - 1};
    struct span path, path_and_query;
    if (!split_target(target, &path, &path_and_query)) return r;
    bool get = method.len == 3 && memcmp(method.at, "GET", 3) == 0;
    bool head = method.len == 4 && memcmp(method.at, "HEAD", 4) == 0;
    bool root = path.len == 1 && path.at[0] == '/';
    bool health = path.len == 8 && memcmp(path.at, "/healthz", 8) == 0;
    if (root && (get || head)) {
        req->route = ROUTE_REDIRECT;
        req->seeded = seed_hash(path_and_query.at, path_and_query.len, &req->seed_hash);
    } else if (health && (get || head)) {
        req->route = ROUTE_HEALTH;
    } else {
        req->route = root || health ? ROUTE_METHOD_NOT_ALLOWED : ROUTE_NOT_FOUND;
    }
    req->head_len = head_len;
    req->head_method = head;
    req->http10 = p->http10;
    req->keep_alive = !f->close && (!p->http10 || f->keep_alive);
    req->content_length = content_length;
    req->chunked = chunked;
    req->expect_continue = f->expect_continue && !p->http10 && content_length > 0;
    r.outcome = PARSE_COMPLETE;
    return r;
}

/* Rules 2-6 octet by octet from p->pos, then rules 7-9 at the empty line; in[0..len)
 * starts with the request line. */
static struct parse head(const uint8_t *in, size_t len, struct progress *p)
{
    struct parse r = {.outcome = PARSE_ERROR, .reject = REJECT_BAD_REQUEST};
    size_t pos = p->pos, end;
#define REFUSE(why) return (r.reject = (why), r)
    /* The octets of the line end at pos (CR LF or LF) into `end`, or out of the loop when
     * the input ends after a CR (rule 2: a CR followed by anything else is 400). */
#define LINE_END()                                                                                       \
    if (in[pos] == '\n') {                                                                               \
        end = 1;                                                                                         \
    } else if (pos + 1 == len) {                                                                         \
        goto partial;                                                                                    \
    } else if (in[pos + 1] == '\n') {                                                                    \
        end = 2;                                                                                         \
    } else {                                                                                             \
        REFUSE(REJECT_BAD_REQUEST);                                                                      \
    }
#define WITHIN_REQUEST_LINE()                                                                            \
    if (pos > MAX_REQUEST_LINE) REFUSE(REJECT_URI_TOO_LONG)
#define WITHIN_FIELD_SECTION()                                                                           \
    if (pos - p->fields_start > MAX_FIELD_SECTION) REFUSE(REJECT_FIELDS_TOO_LARGE)
    for (;;) {
        switch ((enum state)p->state) {
        case START:
        case METHOD:
            while (pos < len && is(in[pos], TCHAR)) pos++;
            WITHIN_REQUEST_LINE();
            if (pos == len) goto partial;
            if (in[pos] != ' ' || pos == 0) REFUSE(REJECT_BAD_REQUEST);
            p->method_end = (uint32_t)pos++;
            p->state = TARGET;
            break;
        case TARGET:
            while (pos < len && is(in[pos], VCHAR)) pos++;
            WITHIN_REQUEST_LINE();
            if (pos == len) goto partial;
            if (in[pos] != ' ' || pos == p->method_end + 1) REFUSE(REJECT_BAD_REQUEST);
            p->target_end = (uint32_t)pos++;
            p->state = VERSION;
            break;
        case VERSION: {
            /* Rule 4: HTTP/ DIGIT . DIGIT, checked octet by octet. */
            size_t start = p->target_end + 1;
            for (; pos < len; pos++) {
                size_t i = pos - start;
                bool fits = i < 5 ? in[pos] == (uint8_t) "HTTP/"[i] : (i == 5 || i == 7) ? is_digit(in[pos])
                                                                  : i == 6 ? in[pos] == '.' : false;
                if (!fits) break;
            }
            WITHIN_REQUEST_LINE();
            if (pos == len) goto partial;
            if (pos - start != 8 || (in[pos] != '\r' && in[pos] != '\n')) REFUSE(REJECT_BAD_REQUEST);
            LINE_END();
            if (in[start + 5] != '1' || (in[start + 7] != '0' && in[start + 7] != '1')) REFUSE(REJECT_VERSION);
            p->http10 = in[start + 7] == '0';
            pos += end;
            p->fields_start = (uint32_t)pos;
            p->state = LINE_START;
            break;
        }
        case LINE_START:
            if (pos == len) goto partial;
            if (in[pos] == '\r' || in[pos] == '\n') {
                LINE_END();
                pos += end;
                WITHIN_FIELD_SECTION();
                return complete(in, p, pos);
            }
            if (!is(in[pos], TCHAR)) REFUSE(REJECT_BAD_REQUEST); /* obs-fold, or not a name */
            p->line_start = (uint32_t)pos;
            p->state = NAME;
            break;
        case NAME:
            while (pos < len && is(in[pos], TCHAR)) pos++;
            WITHIN_FIELD_SECTION();
            if (pos == len) goto partial;
            if (in[pos] != ':') REFUSE(REJECT_BAD_REQUEST); /* whitespace before the colon too */
            p->field = (uint8_t)field_kind(in + p->line_start, pos - p->line_start);
            pos++;
            p->state = VALUE_START;
            break;
        case VALUE_START:
            while (pos < len && (in[pos] == ' ' || in[pos] == '\t')) pos++;
            WITHIN_FIELD_SECTION();
            if (pos == len) goto partial;
            p->value_start = (uint32_t)pos;
            p->state = VALUE;
            break;
        case VALUE:
            while (pos < len && is(in[pos], FIELD_VALUE)) pos++;
            WITHIN_FIELD_SECTION();
            if (pos == len) goto partial;
            if (in[pos] != '\r' && in[pos] != '\n') REFUSE(REJECT_BAD_REQUEST); /* a control octet, DEL */
            LINE_END();
            if (++p->field_lines > MAX_FIELD_LINES) REFUSE(REJECT_FIELDS_TOO_LARGE);
            note_field(p, in, trim_ows((struct span){in + p->value_start, pos - p->value_start}));
            pos += end;
            WITHIN_FIELD_SECTION();
            p->state = LINE_START;
            break;
        }
    }
partial:
    p->pos = (uint32_t)pos;
    r.outcome = PARSE_PARTIAL;
    r.empty_lines = 0;
    return r;
#undef REFUSE
#undef LINE_END
#undef WITHIN_REQUEST_LINE
#undef WITHIN_FIELD_SECTION
}

struct parse parse_more(const uint8_t *in, size_t len, struct progress *p)
{
    if (p->state != START) return head(in, len, p);
    /* Rule 1: empty lines before the request line are dropped as they come. */
    size_t at = 0;
    struct parse r = {.outcome = PARSE_PARTIAL};
    for (;;) {
        if (at == len) return r.empty_lines = at, r;
        if (in[at] == '\n') {
            at += 1;
        } else if (in[at] == '\r') {
            if (at + 1 == len) return r.empty_lines = at, r;
            if (in[at + 1] != '\n') return (struct parse){.outcome = PARSE_ERROR, .reject = REJECT_BAD_REQUEST};
            at += 2;
        } else {
            break;
        }
    }
    p->state = METHOD;
    r = head(in + at, len - at, p);
    if (r.outcome == PARSE_COMPLETE) r.request.head_len += at;
    if (r.outcome == PARSE_PARTIAL) r.empty_lines = at;
    return r;
}

struct parse parse_request(const uint8_t *in, size_t len)
{
    struct progress p = {0};
    return parse_more(in, len, &p);
}
