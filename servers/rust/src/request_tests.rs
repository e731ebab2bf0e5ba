//! One line per rule of SPEC §5–§7.1, each named after what it proves.

use super::*;
use std::cell::Cell;

thread_local! {
    /// Octets the class table was asked about (the parser's per-octet work).
    pub static LOOKS: Cell<usize> = const { Cell::new(0) };
}

/// Feed `input` one octet more at a time, as a client dripping it would, keeping what the
/// caller keeps (dropping leading empty lines); the outcome of the last call.
fn dripped(input: &[u8]) -> Parse {
    let mut progress = Progress::default();
    let mut start = 0;
    for end in 1..=input.len() {
        match parse_more(&input[start..end], &mut progress) {
            Parse::Partial { empty_lines } => start += empty_lines,
            Parse::Complete(r) => return Parse::Complete(Request { head_len: start + r.head_len, ..r }),
            error => return error,
        }
    }
    Parse::Partial { empty_lines: 0 }
}

/// The status the head gets: 302/200/404/405 for a route (`/metrics` as without
/// `--metrics`: 404), the refusal's status, or 0 for "need more input".
fn status(input: &[u8]) -> u16 {
    match parse(input) {
        Parse::Complete(r) => match r.route {
            Route::Redirect { .. } => 302,
            Route::Health => 200,
            Route::NotFound | Route::Metrics { .. } => 404,
            Route::MethodNotAllowed => 405,
        },
        Parse::Partial { .. } => 0,
        Parse::Error(Reject::BadRequest) => 400,
        Parse::Error(Reject::Timeout) => 408,
        Parse::Error(Reject::UriTooLong) => 414,
        Parse::Error(Reject::FieldsTooLarge) => 431,
        Parse::Error(Reject::NotImplemented) => 501,
        Parse::Error(Reject::VersionNotSupported) => 505,
    }
}

fn complete(input: &[u8]) -> Request {
    match parse(input) {
        Parse::Complete(r) => r,
        other => panic!("expected a complete request, got {other:?}"),
    }
}

macro_rules! cases {
    ($($name:ident: $input:expr => $status:expr;)*) => {
        $(#[test] fn $name() { assert_eq!(status($input.as_ref()), $status); })*
    };
}

fn big(prefix: &str, fill: usize, suffix: &str) -> Vec<u8> {
    let mut v = prefix.as_bytes().to_vec();
    v.extend(std::iter::repeat_n(b'a', fill));
    v.extend_from_slice(suffix.as_bytes());
    v
}

fn many_fields(count: usize) -> Vec<u8> {
    let mut v = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
    for i in 1..count {
        v.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
    }
    v.extend_from_slice(b"\r\n");
    v
}

cases! {
    // §2 routing
    get_root_redirects: "GET / HTTP/1.1\r\nHost: a\r\n\r\n" => 302;
    head_root_redirects: "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n" => 302;
    get_healthz_is_ok: "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n" => 200;
    post_root_is_405: "POST / HTTP/1.1\r\nHost: a\r\n\r\n" => 405;
    lowercase_get_is_unknown_method: "get / HTTP/1.1\r\nHost: a\r\n\r\n" => 405;
    delete_healthz_is_405: "DELETE /healthz HTTP/1.1\r\nHost: a\r\n\r\n" => 405;
    other_path_is_404: "GET /x HTTP/1.1\r\nHost: a\r\n\r\n" => 404;
    post_other_path_is_404: "POST /x HTTP/1.1\r\nHost: a\r\n\r\n" => 404;
    encoded_slash_is_not_root: "GET /%2F HTTP/1.1\r\nHost: a\r\n\r\n" => 404;
    double_slash_is_not_root: "GET // HTTP/1.1\r\nHost: a\r\n\r\n" => 404;
    index_html_is_not_root: "GET /index.html HTTP/1.1\r\nHost: a\r\n\r\n" => 404;
    query_keeps_root: "GET /?r=7 HTTP/1.1\r\nHost: a\r\n\r\n" => 302;
    healthz_with_query_is_ok: "GET /healthz?x HTTP/1.1\r\nHost: a\r\n\r\n" => 200;
    absolute_form_root_redirects: "GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n" => 302;
    absolute_form_scheme_is_case_insensitive: "GET HTTP://a/healthz HTTP/1.1\r\nHost: a\r\n\r\n" => 200;
    absolute_form_without_path_is_root: "GET http://a HTTP/1.1\r\nHost: a\r\n\r\n" => 302;
    absolute_form_without_path_keeps_query: "GET http://a?seed=x HTTP/1.1\r\nHost: a\r\n\r\n" => 302;
    absolute_form_other_path_is_404: "GET http://a/x HTTP/1.1\r\nHost: a\r\n\r\n" => 404;
    asterisk_form_is_400: "GET * HTTP/1.1\r\nHost: a\r\n\r\n" => 400;
    authority_form_is_400: "GET a:80 HTTP/1.1\r\nHost: a\r\n\r\n" => 400;
    relative_path_is_400: "GET index.html HTTP/1.1\r\nHost: a\r\n\r\n" => 400;
    method_not_a_token_is_400: "G(T / HTTP/1.1\r\nHost: a\r\n\r\n" => 400;
    // rule 1
    leading_crlf_is_ignored: "\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n" => 302;
    leading_lf_is_ignored: "\n\nGET / HTTP/1.1\r\nHost: a\r\n\r\n" => 302;
    only_empty_lines_need_more: "\r\n\r\n" => 0;
    // rule 2
    bare_lf_line_ends_are_accepted: "GET / HTTP/1.1\nHost: a\n\n" => 302;
    mixed_line_ends_are_accepted: "GET / HTTP/1.1\r\nHost: a\n\r\n" => 302;
    bare_cr_in_field_is_400: "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n" => 400;
    cr_cr_lf_head_end_is_400: "GET / HTTP/1.1\r\nHost: a\r\n\rX" => 400;
    bare_cr_in_request_line_is_400: "GET /\r HTTP/1.1\r\nHost: a\r\n\r\n" => 400;
    trailing_cr_needs_more: "GET / HTTP/1.1\r\nHost: a\r\n\r" => 0;
    // rule 3
    request_line_of_8192_is_served: big("GET /", 8192 - 14, " HTTP/1.1\r\nHost: a\r\n\r\n") => 404;
    request_line_of_8193_is_414: big("GET /", 8193 - 14, " HTTP/1.1\r\nHost: a\r\n\r\n") => 414;
    unterminated_long_request_line_is_414: big("GET /", 9000, "") => 414;
    double_space_is_400: "GET  / HTTP/1.1\r\nHost: a\r\n\r\n" => 400;
    trailing_space_is_400: "GET / HTTP/1.1 \r\nHost: a\r\n\r\n" => 400;
    missing_target_is_400: "GET HTTP/1.1\r\nHost: a\r\n\r\n" => 400;
    non_ascii_target_is_400: b"GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n" => 400;
    control_in_target_is_400: b"GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n" => 400;
    del_in_target_is_400: b"GET /\x7f HTTP/1.1\r\nHost: a\r\n\r\n" => 400;
    tab_in_request_line_is_400: "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n" => 400;
    // rule 4
    http10_is_served: "GET / HTTP/1.0\r\n\r\n" => 302;
    http20_is_505: "GET / HTTP/2.0\r\nHost: a\r\n\r\n" => 505;
    http12_is_505: "GET / HTTP/1.2\r\nHost: a\r\n\r\n" => 505;
    h2_preface_is_505: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" => 505;
    version_without_minor_is_400: "GET / HTTP/1\r\nHost: a\r\n\r\n" => 400;
    version_with_leading_zero_is_400: "GET / HTTP/01.1\r\nHost: a\r\n\r\n" => 400;
    huge_version_is_400: "GET / HTTP/4294967295.255\r\nHost: a\r\n\r\n" => 400;
    lowercase_version_is_400: "GET / http/1.1\r\nHost: a\r\n\r\n" => 400;
    missing_version_is_400: "GET /\r\nHost: a\r\n\r\n" => 400;
    bad_target_before_bad_version_is_400: b"GET /\xff HTTP/2.0\r\n\r\n" => 400;
    // rule 5
    space_before_colon_is_400: "GET / HTTP/1.1\r\nHost : a\r\n\r\n" => 400;
    tab_before_colon_is_400: "GET / HTTP/1.1\r\nHost\t: a\r\n\r\n" => 400;
    obs_fold_is_400: "GET / HTTP/1.1\r\nHost: a\r\nX: b\r\n c\r\n\r\n" => 400;
    obs_fold_with_tab_is_400: "GET / HTTP/1.1\r\nHost: a\r\nX: b\r\n\tc\r\n\r\n" => 400;
    leading_space_first_field_is_400: "GET / HTTP/1.1\r\n Host: a\r\n\r\n" => 400;
    empty_field_name_is_400: "GET / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n" => 400;
    field_without_colon_is_400: "GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n" => 400;
    nul_in_value_is_400: b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n" => 400;
    control_in_value_is_400: b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b\r\n\r\n" => 400;
    del_in_value_is_400: b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x7fb\r\n\r\n" => 400;
    tab_in_value_is_accepted: "GET / HTTP/1.1\r\nHost: a\r\nX: a\tb\r\n\r\n" => 302;
    obs_text_in_value_is_accepted: b"GET / HTTP/1.1\r\nHost: a\r\nX: \xe9\xff\r\n\r\n" => 302;
    // rule 6
    field_section_of_16384_is_served: big("GET / HTTP/1.1\r\nHost: a\r\nX: ", 16384 - 16, "\r\n\r\n") => 302;
    field_section_of_16385_is_431: big("GET / HTTP/1.1\r\nHost: a\r\nX: ", 16385 - 16, "\r\n\r\n") => 431;
    unterminated_long_field_section_is_431: big("GET / HTTP/1.1\r\nHost: a\r\nX: ", 17000, "") => 431;
    hundred_field_lines_are_served: many_fields(100) => 302;
    hundred_and_one_field_lines_are_431: many_fields(101) => 431;
    syntax_error_beats_431: big("GET / HTTP/1.1\r\nHost : a\r\nX: ", 17000, "") => 400;
    // rule 7
    missing_host_is_400: "GET / HTTP/1.1\r\n\r\n" => 400;
    two_identical_hosts_are_400: "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n" => 400;
    uppercase_host_name_counts: "GET / HTTP/1.1\r\nHOST: a\r\n\r\n" => 302;
    empty_host_is_served: "GET / HTTP/1.1\r\nHost:\r\n\r\n" => 302;
    host_with_port_is_served: "GET / HTTP/1.1\r\nHost: a.example:8080\r\n\r\n" => 302;
    ipv6_host_is_served: "GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n" => 302;
    host_with_slash_is_400: "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n" => 400;
    host_with_space_is_400: "GET / HTTP/1.1\r\nHost: a b\r\n\r\n" => 400;
    host_with_letters_in_port_is_400: "GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n" => 400;
    host_with_userinfo_is_400: "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n" => 400;
    unclosed_ip_literal_is_400: "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n" => 400;
    http10_with_two_hosts_is_400: "GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n" => 400;
    host_with_empty_port_is_served: "GET / HTTP/1.1\r\nHost: a:\r\n\r\n" => 302;
    http10_without_host_is_served: "GET / HTTP/1.0\r\n\r\n" => 302;
    // rule 8
    content_length_is_served: "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n" => 404;
    content_length_of_18_digits_is_served: "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 000000000000000001\r\n\r\n" => 302;
    content_length_of_19_digits_is_400: "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000000000000000\r\n\r\n" => 400;
    signed_content_length_is_400: "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n" => 400;
    negative_content_length_is_400: "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n" => 400;
    underscore_content_length_is_400: "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1_0\r\n\r\n" => 400;
    empty_content_length_is_400: "GET / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n" => 400;
    listed_content_length_is_400: "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n" => 400;
    two_content_lengths_are_400: "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n" => 400;
    te_with_content_length_is_400: "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" => 400;
    te_on_http10_is_400: "GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n" => 400;
    two_te_lines_are_400: "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n" => 400;
    te_not_ending_in_chunked_is_400: "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n" => 400;
    te_with_empty_element_is_400: "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: , chunked\r\n\r\n" => 400;
    empty_te_is_400: "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n\r\n" => 400;
    gzip_then_chunked_is_501: "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" => 501;
    chunked_is_answered: "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n" => 302;
    host_error_beats_framing_error: "GET / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" => 400;
    // partial input
    empty_input_needs_more: "" => 0;
    partial_request_line_needs_more: "GET / HT" => 0;
    partial_fields_need_more: "GET / HTTP/1.1\r\nHost: a\r\n" => 0;
}

#[test]
fn head_len_covers_leading_empty_lines_and_head_only() {
    assert_eq!(complete(b"\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\nBODY").head_len, 29);
}

#[test]
fn partial_reports_droppable_empty_lines() {
    assert_eq!(parse(b"\r\n\nGE"), Parse::Partial { empty_lines: 3 });
}

#[test]
fn seed_is_read_from_origin_form_query() {
    assert_eq!(
        complete(b"GET /?seed=a HTTP/1.1\r\nHost: a\r\n\r\n").route,
        Route::Redirect { seed: Some(seed::fnv1a(b"a")) }
    );
}

#[test]
fn seed_is_read_from_absolute_form_query() {
    assert_eq!(
        complete(b"GET http://h/?seed=a HTTP/1.1\r\nHost: a\r\n\r\n").route,
        Route::Redirect { seed: Some(seed::fnv1a(b"a")) }
    );
}

#[test]
fn http11_keeps_alive_by_default() {
    assert!(complete(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").keep_alive)
}
#[test]
fn connection_close_ends_http11() {
    assert!(!complete(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, Close\r\n\r\n").keep_alive)
}
#[test]
fn http10_closes_by_default() {
    assert!(!complete(b"GET / HTTP/1.0\r\n\r\n").keep_alive)
}
#[test]
fn http10_keep_alive_token_persists() {
    assert!(complete(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keep_alive)
}
#[test]
fn content_length_is_reported() {
    assert_eq!(complete(b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\n").content_length, 12)
}
#[test]
fn chunked_is_reported() {
    assert!(complete(b"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n").chunked)
}
#[test]
fn expect_continue_with_body_is_reported() {
    assert!(complete(b"GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n").expect_continue)
}
#[test]
fn expect_continue_without_body_is_ignored() {
    assert!(!complete(b"GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n").expect_continue)
}
#[test]
fn expect_continue_on_http10_is_ignored() {
    assert!(!complete(b"GET / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n").expect_continue)
}
#[test]
fn head_method_is_reported() {
    assert!(complete(b"HEAD / HTTP/1.1\r\nHost: a\r\n\r\n").head_method)
}

cases! {
    binary_request_line_is_400_before_head_ends: b"\xcd\x07,\xd8 / HTTP/1.1\r\n" => 400;
    bad_version_is_505_before_head_ends: "GET / HTTP/2.0\r\nHost: a\r\n" => 505;
    bad_field_is_400_before_head_ends: "GET / HTTP/1.1\r\nHost : a\r\n" => 400;
    partial_version_needs_more: "GET / HTTP/1." => 0;
    bare_cr_after_version_is_400_before_505: "GET / HTTP/2.0\rX" => 400;
    cr_after_version_waits_for_its_lf: "GET / HTTP/2.0\r" => 0;
    mixed_case_field_names_are_recognised: "GET / HTTP/1.1\r\nhOsT: a\r\ncOnTeNt-LeNgTh: x\r\n\r\n" => 400;
    field_value_with_del_is_400: "GET / HTTP/1.1\r\nHost: a\r\nX: abcdefgh\x7fijklmnop\r\n\r\n" => 400;
    field_value_with_tab_inside_a_word_is_served: "GET / HTTP/1.1\r\nHost: a\r\nX: abc\tdefghijklmnop\r\n\r\n" => 302;
    partial_field_value_needs_more: "GET / HTTP/1.1\r\nHost: a" => 0;
}

/// A head dripped octet by octet costs O(n) in all: each octet is looked at about once,
/// not once per read (which would be n²/2 = 50 million here).
#[test]
fn dripped_head_is_looked_at_once() {
    let head = big("GET / HTTP/1.1\r\nHost: a\r\nX: ", 10_000, "\r\n\r\n");
    LOOKS.with(|looks| looks.set(0));
    assert!(matches!(dripped(&head), Parse::Complete(r) if r.head_len == head.len()));
    let looks = LOOKS.with(Cell::get);
    assert!(looks <= 2 * head.len(), "{looks} looks for {} octets", head.len());
}

/// Dripped or whole, a head gets the same outcome (the resumed pass forgets nothing).
#[test]
fn dripped_heads_agree_with_whole_heads() {
    let heads: &[&[u8]] = &[
        b"\r\n\nGET /?seed=x HTTP/1.0\r\nConnection: keep-alive\r\nHost: [::1]:80\r\n\r\n",
        b"POST /x HTTP/1.1\nHost: a\nContent-Length: 5\nTransfer-Encoding: chunked\n\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\nExpect: 100-continue\r\n\r\n",
        b"GET / HTTP/2.0\r\nHost: a\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\n\rX",
        b"GET / HTTP/1.1\r\nHost : a\r\n\r\n",
    ];
    for head in heads {
        assert_eq!(dripped(head), parse(head), "{}", head.escape_ascii());
    }
}

/// The eight-at-a-time scan of field values stops exactly where the octet-by-octet
/// definition does, for every octet in every position of a word.
#[test]
fn field_value_scan_agrees_with_the_class_table() {
    for b in 0..=255u8 {
        for at in 0..12 {
            let mut value = vec![b'v'; 20];
            value[at] = b;
            let expected = value.iter().position(|&o| !is(o, FIELD_VALUE)).unwrap_or(value.len());
            assert_eq!(skip_field_value(&value, 0), expected, "octet {b:#04x} at {at}");
        }
    }
}

/// Mutated valid heads (fixed seed, bounded count): parse never panics and a complete
/// head lies within its input. The real fuzzing is `fuzz/` (cargo fuzz).
#[test]
fn mutated_heads_never_panic() {
    let base: &[&[u8]] = &[
        b"GET /?seed=a%41+b HTTP/1.1\r\nHost: a:80\r\nContent-Length: 3\r\nConnection: close\r\n\r\n",
        b"\r\nHEAD http://h/healthz HTTP/1.0\nTransfer-Encoding: gzip, chunked\n\n",
    ];
    let mut rng = fastrand::Rng::with_seed(7);
    for round in 0..20_000 {
        let mut input = base[round % base.len()].to_vec();
        for _ in 0..rng.usize(1..4) {
            let at = rng.usize(..input.len());
            match rng.u8(..3) {
                0 => input[at] = rng.u8(..),
                1 => {
                    input.remove(at);
                }
                _ => input.insert(at, *b"\r\n :,%\x00\x7f".get(rng.usize(..8)).unwrap()),
            }
        }
        let whole = parse(&input);
        if let Parse::Complete(r) = whole {
            assert!(r.head_len <= input.len());
        }
        if round % 10 == 0 && !matches!(whole, Parse::Partial { .. }) {
            assert_eq!(dripped(&input), whole, "{}", input.escape_ascii());
        }
    }
}

/// A Host value remembered from an earlier request of the connection passes unchecked
/// only when it is the same octets; any other is checked as ever.
#[test]
fn remembered_host_admits_only_itself() {
    let mut progress = Progress::default();
    let mut next = |head: &[u8]| {
        let outcome = parse_more(head, &mut progress);
        progress.next_request();
        outcome
    };
    assert!(matches!(next(b"GET / HTTP/1.1\r\nHost: a:80\r\n\r\n"), Parse::Complete(_)));
    assert!(matches!(next(b"GET / HTTP/1.1\r\nHost: a:80\r\n\r\n"), Parse::Complete(_)));
    assert_eq!(next(b"GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n"), Parse::Error(Reject::BadRequest));
    assert_eq!(next(b"GET / HTTP/1.1\r\nHost: a:80\r\nHost: a:80\r\n\r\n"), Parse::Error(Reject::BadRequest));
    assert!(matches!(next(b"GET / HTTP/1.1\r\nHost: a:8\r\n\r\n"), Parse::Complete(_)));
    // Longer values, compared a word at a time: one octet differs, anywhere.
    let host = b"renard.example.org:8080";
    assert!(matches!(next(&[b"GET / HTTP/1.1\r\nHost: ", &host[..], b"\r\n\r\n"].concat()), Parse::Complete(_)));
    for at in 0..host.len() {
        let mut other = host.to_vec();
        other[at] = b'/';
        let head = [b"GET / HTTP/1.1\r\nHost: ", &other[..], b"\r\n\r\n"].concat();
        assert_eq!(next(&head), Parse::Error(Reject::BadRequest), "octet {at}");
        assert!(matches!(next(&[b"GET / HTTP/1.1\r\nHost: ", &host[..], b"\r\n\r\n"].concat()), Parse::Complete(_)));
    }
}

/// A remembered Host value is taken as it stands only from the value's first octet: a
/// value whose scan resumes after a pause, and whose rest is the remembered one, is
/// still checked whole (and so is an empty rest, when nothing is remembered).
#[test]
fn remembered_host_is_matched_only_from_the_value_start() {
    let mut progress = Progress::default();
    assert!(matches!(parse_more(b"GET / HTTP/1.1\r\nHost: a:80\r\n\r\n", &mut progress), Parse::Complete(_)));
    progress.next_request();
    let head = b"GET / HTTP/1.1\r\nHost: /a:80\r\n\r\n";
    let paused = head.windows(7).position(|w| w == b"Host: /").unwrap() + 7; // in the value, after `/`
    assert_eq!(parse_more(&head[..paused], &mut progress), Parse::Partial { empty_lines: 0 });
    assert_eq!(parse_more(head, &mut progress), Parse::Error(Reject::BadRequest));
    let mut fresh = Progress::default();
    let head = b"GET / HTTP/1.1\r\nHost: a:%80\r\n\r\n";
    assert_eq!(parse_more(&head[..head.len() - 4], &mut fresh), Parse::Partial { empty_lines: 0 });
    assert_eq!(parse_more(head, &mut fresh), Parse::Error(Reject::BadRequest));
}
