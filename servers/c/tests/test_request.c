/* One row per rule of SPEC §2 and §5-§7.1, each named after what it proves. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "request.h"
#include "seed.h"

/* The status a head gets: 302/200/404/405 for a route, the refusal's status, or 0 for
 * "need more input". */
static int status_of(const uint8_t *in, size_t len)
{
    static const int refused[] = {[REJECT_BAD_REQUEST] = 400, [REJECT_TIMEOUT] = 408, [REJECT_URI_TOO_LONG] = 414,
                                  [REJECT_FIELDS_TOO_LARGE] = 431, [REJECT_NOT_IMPLEMENTED] = 501,
                                  [REJECT_VERSION] = 505};
    static const int routed[] = {[ROUTE_REDIRECT] = 302, [ROUTE_HEALTH] = 200, [ROUTE_NOT_FOUND] = 404,
                                 [ROUTE_METHOD_NOT_ALLOWED] = 405};
    struct parse p = parse_request(in, len);
    switch (p.outcome) {
    case PARSE_COMPLETE: return routed[p.request.route];
    case PARSE_PARTIAL: return 0;
    case PARSE_ERROR: return refused[p.reject];
    }
    return -1;
}

/* A head, possibly built: prefix, then `fill` octets 'a', then suffix; or `fields`
 * field lines (Host and X-1.. X-(fields-1)). */
struct row {
    const char *name;
    const char *input;
    size_t len; /* 0: strlen(input) */
    int status;
    const char *suffix;
    size_t fill;
    int fields;
};

#define ROW(n, in, st) {.name = n, .input = in, .status = st}
#define BIN(n, in, st) {.name = n, .input = in, .len = sizeof in - 1, .status = st}
#define BIG(n, pre, fill_, suf, st) {.name = n, .input = pre, .fill = fill_, .suffix = suf, .status = st}
#define FIELDS(n, count, st) {.name = n, .fields = count, .status = st}

static const struct row ROWS[] = {
    /* §2 routing */
    ROW("get_root_redirects", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 302),
    ROW("head_root_redirects", "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n", 302),
    ROW("get_healthz_is_ok", "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 200),
    ROW("post_root_is_405", "POST / HTTP/1.1\r\nHost: a\r\n\r\n", 405),
    ROW("lowercase_get_is_unknown_method", "get / HTTP/1.1\r\nHost: a\r\n\r\n", 405),
    ROW("delete_healthz_is_405", "DELETE /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 405),
    ROW("other_path_is_404", "GET /x HTTP/1.1\r\nHost: a\r\n\r\n", 404),
    ROW("post_other_path_is_404", "POST /x HTTP/1.1\r\nHost: a\r\n\r\n", 404),
    ROW("encoded_slash_is_not_root", "GET /%2F HTTP/1.1\r\nHost: a\r\n\r\n", 404),
    ROW("double_slash_is_not_root", "GET // HTTP/1.1\r\nHost: a\r\n\r\n", 404),
    ROW("index_html_is_not_root", "GET /index.html HTTP/1.1\r\nHost: a\r\n\r\n", 404),
    ROW("hash_belongs_to_the_path", "GET /# HTTP/1.1\r\nHost: a\r\n\r\n", 404),
    ROW("query_keeps_root", "GET /?r=7 HTTP/1.1\r\nHost: a\r\n\r\n", 302),
    ROW("healthz_with_query_is_ok", "GET /healthz?x HTTP/1.1\r\nHost: a\r\n\r\n", 200),
    ROW("absolute_form_root_redirects", "GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 302),
    ROW("absolute_form_https_redirects", "GET https://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 302),
    ROW("absolute_form_scheme_is_case_insensitive", "GET HTTP://a/healthz HTTP/1.1\r\nHost: a\r\n\r\n", 200),
    ROW("absolute_form_without_path_is_root", "GET http://a HTTP/1.1\r\nHost: a\r\n\r\n", 302),
    ROW("absolute_form_without_path_keeps_query", "GET http://a?seed=x HTTP/1.1\r\nHost: a\r\n\r\n", 302),
    ROW("absolute_form_other_path_is_404", "GET http://a/x HTTP/1.1\r\nHost: a\r\n\r\n", 404),
    ROW("absolute_form_without_authority_is_400", "GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ROW("other_scheme_is_400", "GET ftp://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ROW("asterisk_form_is_400", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ROW("authority_form_is_400", "GET a:80 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ROW("relative_path_is_400", "GET index.html HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ROW("method_not_a_token_is_400", "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    /* rule 1 */
    ROW("leading_crlf_is_ignored", "\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", 302),
    ROW("leading_lf_is_ignored", "\n\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", 302),
    ROW("only_empty_lines_need_more", "\r\n\r\n", 0),
    ROW("lone_cr_needs_more", "\r", 0),
    /* rule 2 */
    ROW("bare_lf_line_ends_are_accepted", "GET / HTTP/1.1\nHost: a\n\n", 302),
    ROW("mixed_line_ends_are_accepted", "GET / HTTP/1.1\r\nHost: a\n\r\n", 302),
    ROW("bare_cr_in_field_is_400", "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400),
    ROW("cr_cr_lf_head_end_is_400", "GET / HTTP/1.1\r\nHost: a\r\n\rX", 400),
    ROW("bare_cr_in_request_line_is_400", "GET /\r HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ROW("leading_cr_not_followed_by_lf_is_400", "\rGET / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ROW("trailing_cr_needs_more", "GET / HTTP/1.1\r\nHost: a\r\n\r", 0),
    /* rule 3 */
    BIG("request_line_of_8192_is_served", "GET /", 8192 - 14, " HTTP/1.1\r\nHost: a\r\n\r\n", 404),
    BIG("request_line_of_8193_is_414", "GET /", 8193 - 14, " HTTP/1.1\r\nHost: a\r\n\r\n", 414),
    BIG("unterminated_long_request_line_is_414", "GET /", 9000, "", 414),
    ROW("double_space_is_400", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ROW("trailing_space_is_400", "GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400),
    ROW("missing_target_is_400", "GET HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    BIN("non_ascii_target_is_400", "GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    BIN("non_utf8_target_is_400", "GET /\xff HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    BIN("control_in_target_is_400", "GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    BIN("del_in_target_is_400", "GET /\x7f HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ROW("tab_in_request_line_is_400", "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ROW("leading_space_is_400", " GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    /* rule 4 */
    ROW("http10_is_served", "GET / HTTP/1.0\r\n\r\n", 302),
    ROW("http20_is_505", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
    ROW("http12_is_505", "GET / HTTP/1.2\r\nHost: a\r\n\r\n", 505),
    ROW("h2_preface_is_505", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505),
    ROW("version_without_minor_is_400", "GET / HTTP/1\r\nHost: a\r\n\r\n", 400),
    ROW("version_with_leading_zero_is_400", "GET / HTTP/01.1\r\nHost: a\r\n\r\n", 400),
    ROW("huge_version_is_400", "GET / HTTP/4294967295.255\r\nHost: a\r\n\r\n", 400),
    ROW("lowercase_version_is_400", "GET / http/1.1\r\nHost: a\r\n\r\n", 400),
    ROW("missing_version_is_400", "GET /\r\nHost: a\r\n\r\n", 400),
    ROW("text_after_version_is_400", "GET / HTTP/1.1x\r\nHost: a\r\n\r\n", 400),
    ROW("text_after_unsupported_version_is_400", "GET / HTTP/2.0x\r\nHost: a\r\n\r\n", 400),
    BIN("bad_target_before_bad_version_is_400", "GET /\xff HTTP/2.0\r\n\r\n", 400),
    /* rule 5 */
    ROW("space_before_colon_is_400", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
    ROW("tab_before_colon_is_400", "GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", 400),
    ROW("obs_fold_is_400", "GET / HTTP/1.1\r\nHost: a\r\nX: b\r\n c\r\n\r\n", 400),
    ROW("obs_fold_with_tab_is_400", "GET / HTTP/1.1\r\nHost: a\r\nX: b\r\n\tc\r\n\r\n", 400),
    ROW("leading_space_first_field_is_400", "GET / HTTP/1.1\r\n Host: a\r\n\r\n", 400),
    ROW("empty_field_name_is_400", "GET / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n", 400),
    ROW("field_without_colon_is_400", "GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", 400),
    BIN("nul_in_value_is_400", "GET / HTTP/1.1\r\nHost: a\r\nX: a\x00" "b\r\n\r\n", 400),
    BIN("control_in_value_is_400", "GET / HTTP/1.1\r\nHost: a\r\nX: a\x01" "b\r\n\r\n", 400),
    BIN("del_in_value_is_400", "GET / HTTP/1.1\r\nHost: a\r\nX: a\x7f" "b\r\n\r\n", 400),
    ROW("tab_in_value_is_accepted", "GET / HTTP/1.1\r\nHost: a\r\nX: a\tb\r\n\r\n", 302),
    BIN("obs_text_in_value_is_accepted", "GET / HTTP/1.1\r\nHost: a\r\nX: \xe9\xff\r\n\r\n", 302),
    /* rule 6 */
    BIG("field_section_of_16384_is_served", "GET / HTTP/1.1\r\nHost: a\r\nX: ", 16384 - 16, "\r\n\r\n", 302),
    BIG("field_section_of_16385_is_431", "GET / HTTP/1.1\r\nHost: a\r\nX: ", 16385 - 16, "\r\n\r\n", 431),
    BIG("unterminated_long_field_section_is_431", "GET / HTTP/1.1\r\nHost: a\r\nX: ", 17000, "", 431),
    FIELDS("hundred_field_lines_are_served", 100, 302),
    FIELDS("hundred_and_one_field_lines_are_431", 101, 431),
    BIG("syntax_error_beats_431", "GET / HTTP/1.1\r\nHost : a\r\nX: ", 17000, "", 400),
    BIG("unsupported_version_beats_431", "GET / HTTP/2.0\r\nHost: a\r\nX: ", 17000, "", 505),
    /* rule 7 */
    ROW("missing_host_is_400", "GET / HTTP/1.1\r\n\r\n", 400),
    ROW("two_identical_hosts_are_400", "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400),
    ROW("uppercase_host_name_counts", "GET / HTTP/1.1\r\nHOST: a\r\n\r\n", 302),
    ROW("empty_host_is_served", "GET / HTTP/1.1\r\nHost:\r\n\r\n", 302),
    ROW("host_with_port_is_served", "GET / HTTP/1.1\r\nHost: a.example:8080\r\n\r\n", 302),
    ROW("ipv6_host_is_served", "GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", 302),
    ROW("host_with_slash_is_400", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
    ROW("host_with_space_is_400", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
    ROW("host_with_letters_in_port_is_400", "GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n", 400),
    ROW("host_with_userinfo_is_400", "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", 400),
    ROW("unclosed_ip_literal_is_400", "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400),
    ROW("empty_ip_literal_is_400", "GET / HTTP/1.1\r\nHost: []\r\n\r\n", 400),
    ROW("http10_with_two_hosts_is_400", "GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", 400),
    ROW("host_with_empty_port_is_served", "GET / HTTP/1.1\r\nHost: a:\r\n\r\n", 302),
    ROW("http10_without_host_is_served", "GET / HTTP/1.0\r\n\r\n", 302),
    /* rule 8 */
    ROW("content_length_is_served", "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n", 404),
    ROW("content_length_of_18_digits_is_served", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 000000000000000001\r\n\r\n", 302),
    ROW("content_length_of_19_digits_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000000000000000\r\n\r\n", 400),
    ROW("signed_content_length_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n", 400),
    ROW("negative_content_length_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
    ROW("underscore_content_length_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1_0\r\n\r\n", 400),
    ROW("empty_content_length_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", 400),
    ROW("listed_content_length_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n", 400),
    ROW("two_content_lengths_are_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 400),
    ROW("te_with_content_length_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
    ROW("te_on_http10_is_400", "GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
    ROW("two_te_lines_are_400", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
    ROW("te_not_ending_in_chunked_is_400", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
    ROW("te_with_empty_element_is_400", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: , chunked\r\n\r\n", 400),
    ROW("empty_te_is_400", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n\r\n", 400),
    ROW("gzip_then_chunked_is_501", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
    ROW("chunked_is_answered", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n", 302),
    ROW("host_error_beats_framing_error", "GET / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 400),
    ROW("framing_501_beats_target_form_400", "GET * HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
    /* partial input, and refusals decided before the head ends */
    ROW("empty_input_needs_more", "", 0),
    ROW("partial_request_line_needs_more", "GET / HT", 0),
    ROW("partial_fields_need_more", "GET / HTTP/1.1\r\nHost: a\r\n", 0),
    ROW("partial_version_needs_more", "GET / HTTP/1.", 0),
    ROW("partial_field_value_needs_more", "GET / HTTP/1.1\r\nHost: a", 0),
    BIN("binary_request_line_is_400_before_head_ends", "\xcd\x07,\xd8 / HTTP/1.1\r\n", 400),
    ROW("bad_version_is_505_before_head_ends", "GET / HTTP/2.0\r\nHost: a\r\n", 505),
    ROW("partial_unsupported_version_needs_more", "GET / HTTP/2", 0),
    ROW("unsupported_version_beats_a_later_bare_cr", "GET / HTTP/2.0\r\nX: a\rb\r\n\r\n", 505),
    BIG("bad_octet_in_a_long_method_is_400", "G@T", 9000, "", 400),
    BIG("long_method_is_414", "GET", 9000, "@", 414),
    ROW("bad_field_is_400_before_head_ends", "GET / HTTP/1.1\r\nHost : a\r\n", 400),
};

/* Build a row's input into a fresh allocation, exactly sized so that ASan catches a read
 * past its end. */
static uint8_t *build(const struct row *r, size_t *len)
{
    size_t cap = 64 + (r->len ? r->len : r->input ? strlen(r->input) : 0) + r->fill + (r->suffix ? strlen(r->suffix) : 0) +
                 (size_t)r->fields * 16;
    char *b = malloc(cap);
    size_t n;
    if (r->fields) {
        n = (size_t)sprintf(b, "GET / HTTP/1.1\r\nHost: a\r\n");
        for (int i = 1; i < r->fields; i++) n += (size_t)sprintf(b + n, "X-%d: v\r\n", i);
        n += (size_t)sprintf(b + n, "\r\n");
    } else {
        n = r->len ? r->len : strlen(r->input);
        memcpy(b, r->input, n);
        memset(b + n, 'a', r->fill);
        n += r->fill;
        if (r->suffix) n += (size_t)sprintf(b + n, "%s", r->suffix);
    }
    uint8_t *exact = malloc(n ? n : 1);
    memcpy(exact, b, n);
    free(b);
    *len = n;
    return exact;
}

/* The row's status, whole; and the same status when the head arrives in two reads
 * split anywhere (the second read resumes where the first stopped). */
static void run_row(void **state)
{
    const struct row *r = *state;
    size_t len;
    uint8_t *in = build(r, &len);
    assert_int_equal(status_of(in, len), r->status);
    for (size_t split = 0; split < len; split += 1 + len / 64) {
        struct progress p = {0};
        struct parse first = parse_more(in, split, &p);
        if (first.outcome != PARSE_PARTIAL) continue; /* decided by the first read alone */
        size_t dropped = first.empty_lines;
        struct parse whole = parse_request(in, len), resumed = parse_more(in + dropped, len - dropped, &p);
        assert_int_equal(resumed.outcome, whole.outcome);
        if (whole.outcome == PARSE_ERROR) assert_int_equal(resumed.reject, whole.reject);
        if (whole.outcome == PARSE_COMPLETE) assert_int_equal(resumed.request.head_len + dropped, whole.request.head_len);
    }
    free(in);
}

/* A complete head's request, from a literal. */
static struct request complete(const char *head)
{
    struct parse p = parse_request((const uint8_t *)head, strlen(head));
    assert_int_equal(p.outcome, PARSE_COMPLETE);
    return p.request;
}

static void head_len_covers_leading_empty_lines_and_head_only(void **s)
{
    assert_int_equal(complete("\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\nBODY").head_len, 29);
}
static void partial_reports_droppable_empty_lines(void **s)
{
    struct parse p = parse_request((const uint8_t *)"\r\n\nGE", 5);
    assert_int_equal(p.outcome, PARSE_PARTIAL);
    assert_int_equal(p.empty_lines, 3);
}
static void seed_is_read_from_origin_form_query(void **s)
{
    struct request r = complete("GET /?seed=a HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_true(r.seeded);
    assert_int_equal(r.seed_hash, fnv1a((const uint8_t *)"a", 1));
}
static void seed_is_read_from_absolute_form_query(void **s)
{
    struct request r = complete("GET http://h/?seed=a HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_true(r.seeded);
    assert_int_equal(r.seed_hash, fnv1a((const uint8_t *)"a", 1));
}
static void query_without_seed_draws(void **s) { assert_false(complete("GET /?r=7 HTTP/1.1\r\nHost: a\r\n\r\n").seeded); }
static void http11_keeps_alive_by_default(void **s) { assert_true(complete("GET / HTTP/1.1\r\nHost: a\r\n\r\n").keep_alive); }
static void connection_close_ends_http11(void **s)
{
    assert_false(complete("GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, Close\r\n\r\n").keep_alive);
}
static void http10_closes_by_default(void **s) { assert_false(complete("GET / HTTP/1.0\r\n\r\n").keep_alive); }
static void http10_keep_alive_token_persists(void **s)
{
    assert_true(complete("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keep_alive);
}
static void content_length_is_reported(void **s)
{
    assert_int_equal(complete("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\n").content_length, 12);
}
static void chunked_is_reported(void **s)
{
    assert_true(complete("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n").chunked);
}
static void expect_continue_with_body_is_reported(void **s)
{
    assert_true(complete("GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n").expect_continue);
}
static void expect_continue_without_body_is_ignored(void **s)
{
    assert_false(complete("GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n").expect_continue);
}
static void expect_continue_on_http10_is_ignored(void **s)
{
    assert_false(complete("GET / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n").expect_continue);
}
static void head_method_is_reported(void **s) { assert_true(complete("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n").head_method); }

/* Mutated valid heads (fixed seed, bounded count): parse never crashes (ASan, UBSan) and
 * a complete head lies within its input. The real fuzzing is fuzz/. */
static void mutated_heads_stay_in_bounds(void **s)
{
    static const char *const base[] = {
        "GET /?seed=a%41+b HTTP/1.1\r\nHost: a:80\r\nContent-Length: 3\r\nConnection: close\r\n\r\n",
        "\r\nHEAD http://h/healthz HTTP/1.0\nTransfer-Encoding: gzip, chunked\n\n",
    };
    static const char inserts[] = "\r\n :,%\0\x7f";
    uint64_t rng = 7;
    for (int round = 0; round < 20000; round++) {
        uint8_t in[256];
        size_t n = strlen(base[round % 2]);
        memcpy(in, base[round % 2], n);
        int edits = 1 + (int)((rng = rng * 6364136223846793005ULL + 1442695040888963407ULL) >> 62) % 3;
        for (int e = 0; e < edits && n > 1; e++) {
            rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t at = (size_t)(rng >> 33) % n;
            switch ((rng >> 20) % 3) {
            case 0: in[at] = (uint8_t)(rng >> 40); break;
            case 1: memmove(in + at, in + at + 1, n - at - 1), n--; break;
            default: memmove(in + at + 1, in + at, n - at), in[at] = (uint8_t)inserts[(rng >> 45) % 8], n++;
            }
        }
        uint8_t *exact = malloc(n);
        memcpy(exact, in, n);
        struct parse p = parse_request(exact, n);
        if (p.outcome == PARSE_COMPLETE) assert_true(p.request.head_len <= n);
        free(exact);
    }
}

size_t request_tests(struct CMUnitTest *t, size_t n)
{
    for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++)
        t[n++] = (struct CMUnitTest){.name = ROWS[i].name, .test_func = run_row, .initial_state = (void *)&ROWS[i]};
    const struct CMUnitTest more[] = {
        cmocka_unit_test(head_len_covers_leading_empty_lines_and_head_only),
        cmocka_unit_test(partial_reports_droppable_empty_lines),
        cmocka_unit_test(seed_is_read_from_origin_form_query),
        cmocka_unit_test(seed_is_read_from_absolute_form_query),
        cmocka_unit_test(query_without_seed_draws),
        cmocka_unit_test(http11_keeps_alive_by_default),
        cmocka_unit_test(connection_close_ends_http11),
        cmocka_unit_test(http10_closes_by_default),
        cmocka_unit_test(http10_keep_alive_token_persists),
        cmocka_unit_test(content_length_is_reported),
        cmocka_unit_test(chunked_is_reported),
        cmocka_unit_test(expect_continue_with_body_is_reported),
        cmocka_unit_test(expect_continue_without_body_is_ignored),
        cmocka_unit_test(expect_continue_on_http10_is_ignored),
        cmocka_unit_test(head_method_is_reported),
        cmocka_unit_test(mutated_heads_stay_in_bounds),
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) t[n++] = more[i];
    return n;
}
