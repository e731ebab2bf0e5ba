/* Response bytes (SPEC §4). Everything that does not change is rendered once: the 302
 * status and Location lines per k when N is small (else template pieces and digits), the
 * fixed lines of every other status, and the Date line once per second. */
#ifndef RENARD_RESPONSE_H
#define RENARD_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "request.h"

/* The Connection field a response carries (SPEC §4, §7). */
enum persistence {
    KEEP_OPEN,  /* HTTP/1.1 kept open: no field */
    KEEP_ALIVE, /* HTTP/1.0 kept open: Connection: keep-alive */
    CLOSE,      /* the server closes after it: Connection: close */
};

/* What to answer. */
enum status { STATUS_REDIRECT, STATUS_HEALTH, STATUS_NOT_FOUND, STATUS_METHOD_NOT_ALLOWED, STATUS_REFUSED };

/* The 302 heads ("HTTP/1.1 302 Found\r\nLocation: ...\r\n") for k = 1..count. */
struct redirects {
    uint32_t count;
    char *prerendered; /* every head, concatenated; NULL when rendered per request */
    uint32_t *ends;    /* ends[k-1]: where k's head ends in prerendered */
    const char *template;
    size_t template_len;
    size_t placeholders; /* occurrences of {n} */
};

/* Render the heads for template (1-2048 octets with {n}) and count (1..1000000). Returns
 * 0, or -1 when out of memory. */
int redirects_init(struct redirects *r, const char *template, uint32_t count);

/* The longest response any status can produce, in octets. */
size_t redirects_max_response(const struct redirects *r);

/* The Date line, "Date: <IMF-fixdate>\r\n", re-rendered when the second changes. */
#define DATE_LINE_LEN 37
struct date_line {
    time_t second;
    char line[DATE_LINE_LEN];
};

/* Show the UTC time `now` (seconds since the epoch); renders only when it changed. */
void date_update(struct date_line *d, time_t now);

/* Append the whole response to out (room for redirects_max_response octets is the caller's)
 * and return the octets written. k and seeded: STATUS_REDIRECT; reject: STATUS_REFUSED. */
size_t response_write(char *out, enum status status, uint32_t k, bool seeded, enum reject reject,
                      bool head_method, enum persistence persistence, const struct redirects *r,
                      const struct date_line *date);

#endif
