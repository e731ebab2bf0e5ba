/* Request heads (SPEC §5), in three passes over the same octets, each cheap:
 *   1. scan_head():  where the head ends; bare CR (rule 2), 414 (rule 3), 431 (rule 6);
 *   2. syntax():     the request line and field lines (rules 3-5), octet by octet, stopping
 *                    at the first octet that cannot belong to a valid head even when the
 *                    head is cut short, and noting the fields that rules 7-8 read;
 *   3. interpret():  Host, framing and route (rules 7-9) on a complete head.
 * The flagship does the same with httparse in pass 2; syntax() accepts and refuses the same
 * octets (URI octets 0x21-0x7E and 0x80-0xFF, refused afterwards when not ASCII; values:
 * HTAB, 0x20-0x7E, 0x80-0xFF), so that both answer every input alike. */
#include "request.h"

#include <string.h>

#include "seed.h"

/* RFC 9110 tchar, as a table (GNU range designators: gcc and clang). */
static const bool TCHAR[256] = {
    ['0' ... '9'] = true, ['a' ... 'z'] = true, ['A' ... 'Z'] = true,
    ['!'] = true, ['#'] = true, ['$'] = true, ['%'] = true, ['&'] = true, ['\''] = true,
    ['*'] = true, ['+'] = true, ['-'] = true, ['.'] = true, ['^'] = true, ['_'] = true,
    ['`'] = true, ['|'] = true, ['~'] = true,
};

static bool is_tchar(uint8_t b) { return TCHAR[b]; }

/* An octet that may stand in a request-target as read (visible ASCII or obs-text). */
static bool is_target_octet(uint8_t b) { return (b >= 0x21 && b <= 0x7e) || b >= 0x80; }

/* An octet of a field value: HTAB, SP, visible ASCII, obs-text (RFC 9110 §5.5). */
static bool is_value_octet(uint8_t b) { return b == '\t' || (b >= 0x20 && b != 0x7f); }

static bool is_digit(uint8_t b) { return b >= '0' && b <= '9'; }

static uint8_t lower(uint8_t b) { return (b >= 'A' && b <= 'Z') ? (uint8_t)(b + 32) : b; }

/* s[0..n) equals the lowercase word w, ignoring ASCII case. */
static bool equals_word(const uint8_t *s, size_t n, const char *w)
{
    size_t wn = strlen(w);
    if (n != wn) return false;
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

/* ---- pass 1: where the head ends ---- */

enum shape { SHAPE_INCOMPLETE, SHAPE_OVERSIZED, SHAPE_HEAD, SHAPE_ERROR };

/* Find the end of the head in b[0..n) (no leading empty lines): SHAPE_HEAD with *head_end
 * after its empty line; SHAPE_INCOMPLETE while every limit holds; SHAPE_OVERSIZED past the
 * rule 6 limits; SHAPE_ERROR with *why for a bare CR (400) or a long request line (414). */
static enum shape scan_head(const uint8_t *b, size_t n, size_t *head_end, enum reject *why)
{
    size_t line_start = 0, fields_start = 0, field_lines = 0, i;
    bool request_line_done = false;
    for (i = 0; i < n; i++) {
        if (b[i] == '\r') {
            if (i + 1 == n) break;
            if (b[i + 1] != '\n') {
                *why = REJECT_BAD_REQUEST;
                return SHAPE_ERROR;
            }
        } else if (b[i] == '\n') {
            size_t content_end = (i > line_start && b[i - 1] == '\r') ? i - 1 : i;
            if (!request_line_done) {
                if (content_end > MAX_REQUEST_LINE) {
                    *why = REJECT_URI_TOO_LONG;
                    return SHAPE_ERROR;
                }
                request_line_done = true;
                fields_start = i + 1;
            } else {
                if (i + 1 - fields_start > MAX_FIELD_SECTION) return SHAPE_OVERSIZED;
                if (content_end == line_start) {
                    *head_end = i + 1;
                    return SHAPE_HEAD;
                }
                if (++field_lines > MAX_FIELD_LINES) return SHAPE_OVERSIZED;
            }
            line_start = i + 1;
        }
    }
    if (!request_line_done && i > MAX_REQUEST_LINE) {
        *why = REJECT_URI_TOO_LONG;
        return SHAPE_ERROR;
    }
    if (request_line_done && i - fields_start > MAX_FIELD_SECTION) return SHAPE_OVERSIZED;
    return SHAPE_INCOMPLETE;
}

/* ---- pass 2: syntax ---- */

/* What the syntax pass read: the request line and the fields rules 7 and 8 use. */
struct head {
    struct span method, target;
    bool http10;
    unsigned host_lines;
    bool host_invalid;
    unsigned content_length_lines;
    struct span content_length; /* the last one */
    unsigned transfer_encoding_lines;
    struct span transfer_encoding; /* the last one */
    bool close, keep_alive_token;
    bool expect_continue; /* the last Expect line is 100-continue */
};

enum syntax { SYNTAX_COMPLETE, SYNTAX_PARTIAL, SYNTAX_ERROR };

static bool is_valid_host(struct span v);
static void note_field(struct head *h, struct span name, struct span value);

/* Rule 4 for a version that is neither HTTP/1.0 nor HTTP/1.1 (syntax() saw it differ):
 * 505 for HTTP/DIGIT.DIGIT after a well-formed method and visible-ASCII target, that is a
 * first line of exactly three parts; else 400. */
static enum reject version_error(const uint8_t *b, size_t n)
{
    const uint8_t *nl = memchr(b, '\n', n);
    size_t len = nl ? (size_t)(nl - b) : n;
    if (len > 0 && b[len - 1] == '\r') len--;
    const uint8_t *sp1 = memchr(b, ' ', len);
    if (!sp1) return REJECT_BAD_REQUEST;
    const uint8_t *target = sp1 + 1;
    const uint8_t *sp2 = memchr(target, ' ', len - (size_t)(target - b));
    if (!sp2) return REJECT_BAD_REQUEST;
    const uint8_t *version = sp2 + 1;
    size_t version_len = len - (size_t)(version - b);
    if (memchr(version, ' ', version_len)) return REJECT_BAD_REQUEST;
    if (sp1 == b || sp2 == target) return REJECT_BAD_REQUEST;
    for (const uint8_t *p = b; p < sp1; p++)
        if (!is_tchar(*p)) return REJECT_BAD_REQUEST;
    for (const uint8_t *p = target; p < sp2; p++)
        if (*p < 0x21 || *p > 0x7e) return REJECT_BAD_REQUEST;
    if (version_len == 8 && memcmp(version, "HTTP/", 5) == 0 && is_digit(version[5]) &&
        version[6] == '.' && is_digit(version[7]))
        return REJECT_VERSION;
    return REJECT_BAD_REQUEST;
}

/* Rules 3-5 on b[0..n) (a whole head, or the start of one): SYNTAX_COMPLETE when the empty
 * line was read, SYNTAX_PARTIAL when every octet so far may begin a valid head,
 * SYNTAX_ERROR with *why at the first octet that cannot. Fills *h as it goes. */
static enum syntax syntax(const uint8_t *b, size_t n, struct head *h, enum reject *why)
{
    size_t i = 0;
#define NEED(k)                                                                                \
    do {                                                                                       \
        if (i + (k) > n) return SYNTAX_PARTIAL;                                                \
    } while (0)
#define FAIL(r)                                                                                \
    do {                                                                                       \
        *why = (r);                                                                            \
        return SYNTAX_ERROR;                                                                   \
    } while (0)
    memset(h, 0, sizeof *h);
    /* A lone CR: the first octet of a CRLF empty line (scan_head refused any other). */
    if (n > 0 && b[0] == '\r') {
        NEED(2);
    }
    /* Method: a token, then one SP. */
    NEED(1);
    if (!is_tchar(b[0])) FAIL(REJECT_BAD_REQUEST);
    for (i = 1;; i++) {
        NEED(1);
        if (b[i] == ' ') break;
        if (!is_tchar(b[i])) FAIL(REJECT_BAD_REQUEST);
    }
    h->method = (struct span){b, i};
    i++;
    /* Target: at least one octet, then one SP; visible ASCII only (rule 3). */
    size_t target_start = i;
    while (i < n && is_target_octet(b[i])) i++;
    NEED(1);
    if (b[i] != ' ' || i == target_start) FAIL(REJECT_BAD_REQUEST);
    h->target = (struct span){b + target_start, i - target_start};
    for (size_t k = 0; k < h->target.len; k++)
        if (h->target.at[k] > 0x7e) FAIL(REJECT_BAD_REQUEST);
    i++;
    /* Version (rule 4): decided on eight octets, or on a prefix that cannot become
     * HTTP/1.x; then the line end. */
    if (n - i >= 8) {
        if (memcmp(b + i, "HTTP/1.0", 8) == 0)
            h->http10 = true;
        else if (memcmp(b + i, "HTTP/1.1", 8) != 0)
            FAIL(version_error(b, n));
        i += 8;
    } else {
        static const char prefix[] = "HTTP/1.";
        for (size_t k = 0; i + k < n; k++)
            if (b[i + k] != (uint8_t)prefix[k]) FAIL(version_error(b, n));
        return SYNTAX_PARTIAL;
    }
    NEED(1);
    if (b[i] == '\r') {
        i++;
        NEED(1);
        if (b[i] != '\n') FAIL(REJECT_BAD_REQUEST);
    } else if (b[i] != '\n') {
        FAIL(REJECT_BAD_REQUEST);
    }
    i++;
    /* Field lines (rule 5): name ":" OWS value OWS, until the empty line. */
    for (;;) {
        NEED(1);
        if (b[i] == '\r' || b[i] == '\n') {
            if (b[i] == '\r') {
                i++;
                NEED(1);
                if (b[i] != '\n') FAIL(REJECT_BAD_REQUEST);
            }
            return SYNTAX_COMPLETE;
        }
        /* A non-token first octet: obs-fold (SP, HTAB), an empty name, a control. */
        size_t name_start = i;
        while (i < n && is_tchar(b[i])) i++;
        NEED(1);
        if (b[i] != ':' || i == name_start) FAIL(REJECT_BAD_REQUEST);
        struct span name = {b + name_start, i - name_start};
        i++;
        while (i < n && (b[i] == ' ' || b[i] == '\t')) i++;
        size_t value_start = i;
        while (i < n && is_value_octet(b[i])) i++;
        NEED(1);
        struct span value = {b + value_start, i - value_start};
        if (b[i] == '\r') {
            i++;
            NEED(1);
            if (b[i] != '\n') FAIL(REJECT_BAD_REQUEST);
        } else if (b[i] != '\n') {
            FAIL(REJECT_BAD_REQUEST); /* NUL, another control octet, DEL */
        }
        i++;
        note_field(h, name, trim_ows(value));
    }
#undef NEED
#undef FAIL
}

/* Record what rules 7, 8 and §7.1 need from one field line. */
static void note_field(struct head *h, struct span name, struct span value)
{
    if (equals_word(name.at, name.len, "host")) {
        h->host_lines++;
        if (!is_valid_host(value)) h->host_invalid = true;
    } else if (equals_word(name.at, name.len, "content-length")) {
        h->content_length_lines++;
        h->content_length = value;
    } else if (equals_word(name.at, name.len, "transfer-encoding")) {
        h->transfer_encoding_lines++;
        h->transfer_encoding = value;
    } else if (equals_word(name.at, name.len, "connection")) {
        size_t start = 0;
        for (size_t k = 0; k <= value.len; k++) {
            if (k < value.len && value.at[k] != ',') continue;
            struct span token = trim_ows((struct span){value.at + start, k - start});
            if (equals_word(token.at, token.len, "close")) h->close = true;
            if (equals_word(token.at, token.len, "keep-alive")) h->keep_alive_token = true;
            start = k + 1;
        }
    } else if (equals_word(name.at, name.len, "expect")) {
        h->expect_continue = equals_word(value.at, value.len, "100-continue");
    }
}

/* ---- pass 3: rules 7-9 ---- */

/* RFC 3986 unreserved / sub-delims. */
static bool is_unreserved_or_sub_delim(uint8_t b)
{
    static const char extra[] = "-._~!$&'()*+,;=";
    return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') ||
           (b != 0 && memchr(extra, b, sizeof extra - 1) != NULL);
}

/* Rule 7: empty, or host [":" port], host a reg-name/IPv4 or an IP-literal in brackets. */
static bool is_valid_host(struct span v)
{
    if (v.len == 0) return true;
    size_t i = 0;
    if (v.at[0] == '[') {
        const uint8_t *close = memchr(v.at, ']', v.len);
        if (!close || close == v.at + 1) return false;
        for (i = 1; v.at + i < close; i++)
            if (!is_unreserved_or_sub_delim(v.at[i]) && v.at[i] != ':') return false;
        i++;
    } else {
        while (i < v.len && v.at[i] != ':') {
            if (!is_unreserved_or_sub_delim(v.at[i]) && v.at[i] != '%') return false;
            i++;
        }
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

/* Rule 8 on a Transfer-Encoding value: 0 when it is exactly chunked; else the refusal. */
static int check_transfer_codings(struct span v, enum reject *why)
{
    size_t start = 0, count = 0;
    struct span last = {v.at, 0};
    for (size_t k = 0; k <= v.len; k++) {
        if (k < v.len && v.at[k] != ',') continue;
        struct span coding = trim_ows((struct span){v.at + start, k - start});
        if (coding.len == 0) {
            *why = REJECT_BAD_REQUEST;
            return -1;
        }
        count++;
        last = coding;
        start = k + 1;
    }
    if (!equals_word(last.at, last.len, "chunked")) {
        *why = REJECT_BAD_REQUEST;
        return -1;
    }
    if (count > 1) {
        *why = REJECT_NOT_IMPLEMENTED;
        return -1;
    }
    return 0;
}

/* The path and path-and-query of an origin-form or absolute-form target (SPEC §2);
 * false for any other form. An absolute-form target without a path has the path "/". */
static bool split_target(struct span target, struct span *path, struct span *path_and_query)
{
    struct span pq = target;
    if (target.len == 0 || target.at[0] != '/') {
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
    const uint8_t *q = memchr(pq.at, '?', pq.len);
    *path = (struct span){pq.at, q ? (size_t)(q - pq.at) : pq.len};
    if (path->len == 0) *path = (struct span){(const uint8_t *)"/", 1};
    *path_and_query = pq;
    return true;
}

/* Rules 7-9 on a head that passed rules 1-6; 0 and *req, or -1 and *why. */
static int interpret(const struct head *h, struct request *req, enum reject *why)
{
    *why = REJECT_BAD_REQUEST;
    if (h->host_invalid || h->host_lines > 1 || (!h->http10 && h->host_lines == 0)) return -1;
    uint64_t content_length = 0;
    if (h->content_length_lines > 1) return -1;
    if (h->content_length_lines == 1 && !parse_content_length(h->content_length, &content_length))
        return -1;
    bool chunked = false;
    if (h->transfer_encoding_lines > 0) {
        if (h->content_length_lines > 0 || h->http10 || h->transfer_encoding_lines > 1) return -1;
        if (check_transfer_codings(h->transfer_encoding, why) != 0) return -1;
        chunked = true;
    }
    struct span path, path_and_query;
    if (!split_target(h->target, &path, &path_and_query)) return -1;
    bool get = h->method.len == 3 && memcmp(h->method.at, "GET", 3) == 0;
    bool head = h->method.len == 4 && memcmp(h->method.at, "HEAD", 4) == 0;
    bool root = path.len == 1 && path.at[0] == '/';
    bool health = path.len == 8 && memcmp(path.at, "/healthz", 8) == 0;
    req->seeded = false;
    if (root && (get || head)) {
        req->route = ROUTE_REDIRECT;
        req->seeded = seed_hash(path_and_query.at, path_and_query.len, &req->seed_hash);
    } else if (health && (get || head)) {
        req->route = ROUTE_HEALTH;
    } else if (root || health) {
        req->route = ROUTE_METHOD_NOT_ALLOWED;
    } else {
        req->route = ROUTE_NOT_FOUND;
    }
    req->head_method = head;
    req->http10 = h->http10;
    req->keep_alive = !h->close && (!h->http10 || h->keep_alive_token);
    req->content_length = content_length;
    req->chunked = chunked;
    req->expect_continue = h->expect_continue && !h->http10 && content_length > 0;
    return 0;
}

/* Octets of CRLF or LF empty lines at the start of b (rule 1); a lone trailing CR stays. */
static size_t leading_empty_lines(const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (;;) {
        if (i < n && b[i] == '\n')
            i += 1;
        else if (i + 1 < n && b[i] == '\r' && b[i + 1] == '\n')
            i += 2;
        else
            return i;
    }
}

/* Bytes of a head past the rule 6 limits that are still checked for rules 3-5. */
#define OVERSIZED_CHECK (MAX_REQUEST_LINE + 2 + MAX_FIELD_SECTION + 1)

struct parse parse_request(const uint8_t *in, size_t len)
{
    struct parse p = {.outcome = PARSE_ERROR};
    struct head h;
    size_t start = leading_empty_lines(in, len), head_end = 0;
    const uint8_t *b = in + start;
    size_t n = len - start;
    switch (scan_head(b, n, &head_end, &p.reject)) {
    case SHAPE_ERROR:
        return p;
    case SHAPE_INCOMPLETE:
        /* What has come may already break rules 3-5: refuse it now, not at the deadline. */
        if (syntax(b, n, &h, &p.reject) == SYNTAX_ERROR) return p;
        p.outcome = PARSE_PARTIAL;
        p.empty_lines = start;
        return p;
    case SHAPE_OVERSIZED:
        /* Rules 3-5 come before rule 6. */
        if (syntax(b, n < OVERSIZED_CHECK ? n : OVERSIZED_CHECK, &h, &p.reject) != SYNTAX_ERROR)
            p.reject = REJECT_FIELDS_TOO_LARGE;
        return p;
    case SHAPE_HEAD:
        if (syntax(b, head_end, &h, &p.reject) == SYNTAX_ERROR) return p;
        if (interpret(&h, &p.request, &p.reject) != 0) return p;
        p.request.head_len = start + head_end;
        p.outcome = PARSE_COMPLETE;
        return p;
    }
    return p;
}
