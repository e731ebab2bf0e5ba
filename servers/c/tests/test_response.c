/* SPEC §4: responses byte by byte. */
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "response.h"

#define TEMPLATE "https://avatar.example.org/Renard-{n}.png"
#define DATE "Date: Sun, 22 Nov 2026 00:00:00 GMT\r\n"
#define MIDNIGHT 1795305600 /* 2026-11-22 00:00:00 UTC */

/* The response as a string (static buffer). */
static const char *render(enum status status, uint32_t k, bool seeded, enum reject reject, bool head,
                          enum persistence persistence, const char *template, uint32_t count)
{
    static char out[16384];
    struct redirects r;
    struct date_line date = {0};
    assert_int_equal(redirects_init(&r, template, count), 0);
    date_update(&date, MIDNIGHT);
    size_t n = response_write(out, status, k, seeded, reject, head, persistence, &r, &date);
    assert_true(n <= redirects_max_response(&r));
    out[n] = '\0';
    free(r.prerendered);
    free(r.ends);
    return out;
}

static void redirect_is_byte_exact(void **s)
{
    assert_string_equal(render(STATUS_REDIRECT, 7, false, 0, false, KEEP_OPEN, TEMPLATE, 21),
                        "HTTP/1.1 302 Found\r\nLocation: https://avatar.example.org/Renard-7.png\r\n"
                        "Cache-Control: no-store\r\n" DATE "Content-Length: 0\r\n\r\n");
}
static void seeded_redirect_is_cacheable(void **s)
{
    assert_non_null(strstr(render(STATUS_REDIRECT, 1, true, 0, false, KEEP_OPEN, TEMPLATE, 21),
                           "\r\nCache-Control: public, max-age=86400\r\nDate: "));
}
static void large_count_renders_from_pieces_like_prerendered(void **s)
{
    char small[1024];
    strcpy(small, render(STATUS_REDIRECT, 21, false, 0, false, KEEP_OPEN, TEMPLATE, 21));
    assert_string_equal(render(STATUS_REDIRECT, 21, false, 0, false, KEEP_OPEN, TEMPLATE, 1000000), small);
}
static void every_placeholder_is_replaced(void **s)
{
    assert_non_null(strstr(render(STATUS_REDIRECT, 5, false, 0, false, KEEP_OPEN, "/{n}/{n}x{n}", 5),
                           "HTTP/1.1 302 Found\r\nLocation: /5/5x5\r\n"));
}
static void last_k_of_million_is_rendered(void **s)
{
    assert_non_null(strstr(render(STATUS_REDIRECT, 1000000, false, 0, false, KEEP_OPEN, "{n}", 1000000),
                           "Location: 1000000\r\n"));
}
static void longest_template_fits_max_response(void **s)
{
    char template[2049];
    for (int i = 0; i < 2048; i += 3) memcpy(template + i, i + 3 <= 2048 ? "{n}" : "xx", i + 3 <= 2048 ? 3 : 2);
    template[2048] = '\0';
    render(STATUS_REDIRECT, 1000000, false, 0, false, CLOSE, template, 1000000); /* asserts the bound */
}
static void health_has_type_cache_and_body(void **s)
{
    assert_string_equal(render(STATUS_HEALTH, 0, false, 0, false, KEEP_OPEN, TEMPLATE, 21),
                        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n" DATE
                        "Content-Length: 3\r\n\r\nok\n");
}
static void head_health_keeps_length_drops_body(void **s)
{
    const char *r = render(STATUS_HEALTH, 0, false, 0, true, KEEP_OPEN, TEMPLATE, 21);
    assert_string_equal(r + strlen(r) - 21, "Content-Length: 3\r\n\r\n");
}
static void method_not_allowed_carries_allow(void **s)
{
    assert_string_equal(render(STATUS_METHOD_NOT_ALLOWED, 0, false, 0, false, KEEP_OPEN, TEMPLATE, 21),
                        "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n" DATE "Content-Length: 0\r\n\r\n");
}
static void refusal_closes(void **s)
{
    assert_string_equal(render(STATUS_REFUSED, 0, false, REJECT_FIELDS_TOO_LARGE, false, CLOSE, TEMPLATE, 21),
                        "HTTP/1.1 431 Request Header Fields Too Large\r\n" DATE
                        "Content-Length: 0\r\nConnection: close\r\n\r\n");
}
static void every_refusal_has_its_status_line(void **s)
{
    static const char *const lines[] = {
        [REJECT_BAD_REQUEST] = "HTTP/1.1 400 Bad Request\r\n", [REJECT_TIMEOUT] = "HTTP/1.1 408 Request Timeout\r\n",
        [REJECT_URI_TOO_LONG] = "HTTP/1.1 414 URI Too Long\r\n",
        [REJECT_FIELDS_TOO_LARGE] = "HTTP/1.1 431 Request Header Fields Too Large\r\n",
        [REJECT_NOT_IMPLEMENTED] = "HTTP/1.1 501 Not Implemented\r\n",
        [REJECT_VERSION] = "HTTP/1.1 505 HTTP Version Not Supported\r\n"};
    for (int r = REJECT_BAD_REQUEST; r <= REJECT_VERSION; r++) {
        const char *out = render(STATUS_REFUSED, 0, false, (enum reject)r, false, CLOSE, TEMPLATE, 21);
        assert_memory_equal(out, lines[r], strlen(lines[r]));
        assert_string_equal(out + strlen(lines[r]), DATE "Content-Length: 0\r\nConnection: close\r\n\r\n");
    }
}
static void http10_keep_alive_is_announced(void **s)
{
    assert_string_equal(render(STATUS_NOT_FOUND, 0, false, 0, false, KEEP_ALIVE, TEMPLATE, 21),
                        "HTTP/1.1 404 Not Found\r\n" DATE "Content-Length: 0\r\nConnection: keep-alive\r\n\r\n");
}
static void date_line_changes_only_with_the_second(void **s)
{
    struct date_line d = {0};
    date_update(&d, MIDNIGHT);
    assert_memory_equal(d.line, DATE, DATE_LINE_LEN);
    date_update(&d, MIDNIGHT + 1);
    assert_memory_equal(d.line, "Date: Sun, 22 Nov 2026 00:00:01 GMT\r\n", DATE_LINE_LEN);
    date_update(&d, 951782400); /* 2000-02-29, a leap day */
    assert_memory_equal(d.line, "Date: Tue, 29 Feb 2000 00:00:00 GMT\r\n", DATE_LINE_LEN);
}

size_t response_tests(struct CMUnitTest *t, size_t n)
{
    const struct CMUnitTest more[] = {
        cmocka_unit_test(redirect_is_byte_exact),
        cmocka_unit_test(seeded_redirect_is_cacheable),
        cmocka_unit_test(large_count_renders_from_pieces_like_prerendered),
        cmocka_unit_test(every_placeholder_is_replaced),
        cmocka_unit_test(last_k_of_million_is_rendered),
        cmocka_unit_test(longest_template_fits_max_response),
        cmocka_unit_test(health_has_type_cache_and_body),
        cmocka_unit_test(head_health_keeps_length_drops_body),
        cmocka_unit_test(method_not_allowed_carries_allow),
        cmocka_unit_test(refusal_closes),
        cmocka_unit_test(every_refusal_has_its_status_line),
        cmocka_unit_test(http10_keep_alive_is_announced),
        cmocka_unit_test(date_line_changes_only_with_the_second),
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) t[n++] = more[i];
    return n;
}
