#include "response.h"

#include <stdlib.h>
#include <string.h>

/* Most k whose head is rendered ahead, and most octets spent on them. */
#define PRERENDER_MAX_COUNT 256
#define PRERENDER_MAX_BYTES (64 * 1024)

#define LIT(s) s, sizeof s - 1

static const char REDIRECT_START[] = "HTTP/1.1 302 Found\r\nLocation: ";

/* Decimal k (no sign, no leading zeros) into out; returns its length (at most 10). */
static size_t put_decimal(char *out, uint32_t k)
{
    char digits[10];
    size_t n = 0;
    do digits[n++] = (char)('0' + k % 10), k /= 10;
    while (k > 0);
    for (size_t i = 0; i < n; i++) out[i] = digits[n - 1 - i];
    return n;
}

/* The head for k, rendered from the template; returns its length. */
static size_t render_head(char *out, const struct redirects *r, uint32_t k)
{
    char *p = out;
    memcpy(p, LIT(REDIRECT_START));
    p += sizeof REDIRECT_START - 1;
    char digits[10];
    size_t digits_len = put_decimal(digits, k);
    const char *t = r->template, *end = t + r->template_len;
    while (t < end) {
        if (end - t >= 3 && t[0] == '{' && t[1] == 'n' && t[2] == '}') {
            memcpy(p, digits, digits_len);
            p += digits_len;
            t += 3;
        } else {
            *p++ = *t++;
        }
    }
    memcpy(p, "\r\n", 2);
    return (size_t)(p + 2 - out);
}

int redirects_init(struct redirects *r, const char *template, uint32_t count)
{
    *r = (struct redirects){.count = count, .template = template, .template_len = strlen(template)};
    for (const char *t = strstr(template, "{n}"); t; t = strstr(t + 3, "{n}")) r->placeholders++;
    size_t per_k = sizeof REDIRECT_START - 1 + r->template_len + 2 * 7;
    if (count > PRERENDER_MAX_COUNT || per_k * count > PRERENDER_MAX_BYTES) return 0;
    r->prerendered = malloc(per_k * count);
    r->ends = malloc(sizeof *r->ends * count);
    if (!r->prerendered || !r->ends) return -1;
    size_t at = 0;
    for (uint32_t k = 1; k <= count; k++) {
        at += render_head(r->prerendered + at, r, k);
        r->ends[k - 1] = (uint32_t)at;
    }
    return 0;
}

size_t redirects_max_response(const struct redirects *r)
{
    /* Seven digits for k <= 1 000 000 in place of each 3-octet {n}; 192 covers every other
     * line of any response. */
    return sizeof REDIRECT_START - 1 + r->template_len + 4 * r->placeholders + 2 + 192;
}

void date_update(struct date_line *d, time_t now)
{
    static const char days[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    if (now == d->second && d->line[0] == 'D') return;
    d->second = now;
    struct tm tm;
    gmtime_r(&now, &tm);
    char *p = d->line;
    memcpy(p, "Date: ", 6), p += 6;
    memcpy(p, days[tm.tm_wday], 3), p += 3;
    *p++ = ',', *p++ = ' ';
    *p++ = (char)('0' + tm.tm_mday / 10), *p++ = (char)('0' + tm.tm_mday % 10), *p++ = ' ';
    memcpy(p, months[tm.tm_mon], 3), p += 3;
    *p++ = ' ';
    int year = tm.tm_year + 1900;
    for (int div = 1000; div > 0; div /= 10) *p++ = (char)('0' + year / div % 10);
    *p++ = ' ';
    int hms[3] = {tm.tm_hour, tm.tm_min, tm.tm_sec};
    for (int i = 0; i < 3; i++) {
        *p++ = (char)('0' + hms[i] / 10), *p++ = (char)('0' + hms[i] % 10);
        *p++ = i < 2 ? ':' : ' ';
    }
    memcpy(p, "GMT\r\n", 5);
}

/* Append s[0..n) at *p. */
static inline void put(char **p, const char *s, size_t n)
{
    memcpy(*p, s, n);
    *p += n;
}

size_t response_write(char *out, enum status status, uint32_t k, bool seeded, enum reject reject,
                      bool head_method, enum persistence persistence, const struct redirects *r,
                      const struct date_line *date)
{
    char *p = out;
    bool body = false;
    switch (status) {
    case STATUS_REDIRECT:
        if (r->prerendered) {
            uint32_t start = k == 1 ? 0 : r->ends[k - 2];
            put(&p, r->prerendered + start, r->ends[k - 1] - start);
        } else {
            p += render_head(p, r, k);
        }
        if (seeded)
            put(&p, LIT("Cache-Control: public, max-age=86400\r\n"));
        else
            put(&p, LIT("Cache-Control: no-store\r\n"));
        break;
    case STATUS_HEALTH:
        put(&p, LIT("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n"));
        body = true;
        break;
    case STATUS_NOT_FOUND:
        put(&p, LIT("HTTP/1.1 404 Not Found\r\n"));
        break;
    case STATUS_METHOD_NOT_ALLOWED:
        put(&p, LIT("HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n"));
        break;
    case STATUS_REFUSED:
        switch (reject) {
        case REJECT_BAD_REQUEST: put(&p, LIT("HTTP/1.1 400 Bad Request\r\n")); break;
        case REJECT_TIMEOUT: put(&p, LIT("HTTP/1.1 408 Request Timeout\r\n")); break;
        case REJECT_URI_TOO_LONG: put(&p, LIT("HTTP/1.1 414 URI Too Long\r\n")); break;
        case REJECT_FIELDS_TOO_LARGE: put(&p, LIT("HTTP/1.1 431 Request Header Fields Too Large\r\n")); break;
        case REJECT_NOT_IMPLEMENTED: put(&p, LIT("HTTP/1.1 501 Not Implemented\r\n")); break;
        case REJECT_VERSION: put(&p, LIT("HTTP/1.1 505 HTTP Version Not Supported\r\n")); break;
        }
        break;
    }
    put(&p, date->line, DATE_LINE_LEN);
    put(&p, body ? "Content-Length: 3\r\n" : "Content-Length: 0\r\n", 19);
    if (persistence == KEEP_ALIVE) put(&p, LIT("Connection: keep-alive\r\n"));
    if (persistence == CLOSE) put(&p, LIT("Connection: close\r\n"));
    put(&p, "\r\n", 2);
    if (body && !head_method) put(&p, "ok\n", 3);
    return (size_t)(p - out);
}
