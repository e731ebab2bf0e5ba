"""SPEC §2, §5, §6, §7.1: the parser's three outcomes, case by case, and every raw HTTP
vector of spec/vectors/http whose first answer is decided by its first head alone."""

import json

import pytest
from conftest import VECTORS

from renard_py.request import (
    COMPLETE,
    ERROR,
    HEALTH,
    METHOD_NOT_ALLOWED,
    NOT_FOUND,
    PARTIAL,
    REDIRECT,
    parse,
)
from renard_py.seed import fnv1a64

ROUTE_STATUS = {REDIRECT: 302, HEALTH: 200, NOT_FOUND: 404, METHOD_NOT_ALLOWED: 405}


def status(head: bytes) -> int:
    """What the head gets: a route's status, the refusal's status, or 0 (need more)."""
    outcome, value, _ = parse(head)
    if outcome == COMPLETE:
        return ROUTE_STATUS[value[0]]
    return value if outcome == ERROR else 0


def fields(count: int) -> bytes:
    return b"".join(b"X-F%d: 1\r\n" % i for i in range(count))


CASES = [
    # rule 1-2: empty lines, line ends, bare CR
    ("leading-empty-lines-skipped", b"\r\n\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", 302),
    ("bare-lf-line-ends", b"GET / HTTP/1.1\nHost: a\n\n", 302),
    ("mixed-line-ends", b"GET / HTTP/1.1\r\nHost: a\n\r\n", 302),
    ("bare-cr-in-value", b"GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400),
    ("cr-lf-cr-x-header-end", b"GET / HTTP/1.1\r\nHost: a\r\n\rX", 400),
    ("bare-cr-decided-before-line-end", b"GET /\rX", 400),
    ("trailing-cr-waits", b"GET / HTTP/1.1\r", 0),
    # rule 3: request line
    ("custom-method-is-405", b"FOO / HTTP/1.1\r\nHost: a\r\n\r\n", 405),
    ("lowercase-get-is-unknown-method", b"get / HTTP/1.1\r\nHost: a\r\n\r\n", 405),
    ("method-not-token", b"G@T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("non-tchar-decided-at-once", b"G(", 400),
    ("double-space", b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("trailing-space", b"GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400),
    ("missing-version", b"GET /\r\nHost: a\r\n\r\n", 400),
    ("non-ascii-target", b"GET /\xe9 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("control-in-target", b"GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("hash-in-target-is-path", b"GET /#x HTTP/1.1\r\nHost: a\r\n\r\n", 404),
    ("request-line-8192", b"GET /" + b"a" * 8178 + b" HTTP/1.1\r\nHost: a\r\n\r\n", 404),
    ("request-line-8193", b"GET /" + b"a" * 8179 + b" HTTP/1.1\r\nHost: a\r\n\r\n", 414),
    ("long-line-decided-before-its-end", b"GET /" + b"a" * 9000, 414),
    # rule 4: version
    ("http10-served", b"GET / HTTP/1.0\r\n\r\n", 302),
    ("http2-is-505", b"GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
    ("http12-is-505", b"GET / HTTP/1.2\r\nHost: a\r\n\r\n", 505),
    ("h2-preface-is-505", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505),
    ("version-without-minor", b"GET / HTTP/1\r\nHost: a\r\n\r\n", 400),
    ("version-leading-zero", b"GET / HTTP/01.1\r\nHost: a\r\n\r\n", 400),
    ("version-huge", b"GET / HTTP/4294967295.255\r\nHost: a\r\n\r\n", 400),
    ("version-lowercase", b"GET / http/1.1\r\nHost: a\r\n\r\n", 400),
    ("bad-target-then-other-version", b"GET /\xe9 HTTP/2.0\r\n\r\n", 400),
    # rule 5: field lines
    ("space-before-colon", b"GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
    ("obs-fold", b"GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n", 400),
    ("empty-name", b"GET / HTTP/1.1\r\n: a\r\nHost: a\r\n\r\n", 400),
    ("nul-in-value", b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n", 400),
    ("del-in-value", b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x7fb\r\n\r\n", 400),
    ("htab-and-obs-text-in-value", b"GET / HTTP/1.1\r\nHost: a\r\nX: a\t\xffb\r\n\r\n", 302),
    ("bad-field-decided-before-head-end", b"GET / HTTP/1.1\r\nHo st", 400),
    ("request-line-error-before-field-error", b"GET / HTTP/3.0\r\nHo st: a\r\n\r\n", 505),
    # rule 6: size
    ("100-field-lines", b"GET / HTTP/1.1\r\nHost: a\r\n" + fields(99) + b"\r\n", 302),
    ("101-field-lines", b"GET / HTTP/1.1\r\nHost: a\r\n" + fields(100) + b"\r\n", 431),
    ("field-section-too-long", b"GET / HTTP/1.1\r\nHost: a\r\nX: " + b"a" * 16400 + b"\r\n\r\n",
     431),
    ("syntax-before-size", b"GET / HTTP/1.1\r\nHost: a\r\nX : 1\r\n" + fields(120) + b"\r\n", 400),
    # rule 7: Host
    ("no-host-http11", b"GET / HTTP/1.1\r\n\r\n", 400),
    ("two-identical-hosts", b"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400),
    ("two-hosts-http10", b"GET / HTTP/1.0\r\nHost: a\r\nhost: b\r\n\r\n", 400),
    ("empty-host", b"GET / HTTP/1.1\r\nHost:\r\n\r\n", 302),
    ("host-with-port-and-ows", b"GET / HTTP/1.1\r\nHost: \t a.b:8080 \r\n\r\n", 302),
    ("host-ipv6-literal", b"GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", 302),
    ("host-with-path", b"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
    ("host-with-userinfo", b"GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", 400),
    ("host-port-not-digits", b"GET / HTTP/1.1\r\nHost: a:b\r\n\r\n", 400),
    ("host-empty-literal", b"GET / HTTP/1.1\r\nHost: []\r\n\r\n", 400),
    ("uppercase-host-name-counts", b"GET / HTTP/1.1\r\nHOST: a\r\n\r\n", 302),
    # rule 8: framing
    ("content-length-18-digits", b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0" + b"0" * 17
     + b"\r\n\r\n", 302),
    ("content-length-19-digits", b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: " + b"1" * 19
     + b"\r\n\r\n", 400),
    ("content-length-signed", b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n", 400),
    ("content-length-list", b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n", 400),
    ("content-length-empty", b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", 400),
    ("content-length-twice", b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n"
     b"Content-Length: 1\r\n\r\nxy", 400),
    ("te-and-cl", b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n"
     b"Transfer-Encoding: chunked\r\n\r\n", 400),
    ("te-on-http10", b"GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
    ("te-twice", b"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
     b"Transfer-Encoding: chunked\r\n\r\n", 400),
    ("te-gzip-chunked", b"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
     501),
    ("te-chunked-gzip", b"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
     400),
    ("te-empty-element", b"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: , chunked\r\n\r\n",
     400),
    ("te-chunked-any-case", b"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ChUnKeD\r\n\r\n",
     302),
    ("host-rule-before-framing", b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400),
    # rule 9: route
    ("healthz", b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 200),
    ("post-root-is-405", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", 405),
    ("index-is-404", b"GET /index.html HTTP/1.1\r\nHost: a\r\n\r\n", 404),
    ("double-slash-is-404", b"GET // HTTP/1.1\r\nHost: a\r\n\r\n", 404),
    ("encoded-slash-is-404", b"GET /%2F HTTP/1.1\r\nHost: a\r\n\r\n", 404),
    ("absolute-form", b"GET http://a/healthz HTTP/1.1\r\nHost: a\r\n\r\n", 200),
    ("absolute-form-scheme-any-case", b"GET HTTPS://a HTTP/1.1\r\nHost: a\r\n\r\n", 302),
    ("absolute-form-empty-authority", b"GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("asterisk-form", b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("authority-form", b"CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("other-scheme", b"GET ftp://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    # partial input
    ("partial-request-line", b"GET / HTT", 0),
    ("partial-version-http2-waits", b"GET / HTTP/2", 0),
    ("version-decided-at-its-line-end", b"GET / HTTP/9.1\r\nH\nost:\ra\r\n\r\n", 505),
    ("partial-version-bad-octet", b"GET / HTTPS", 400),
    ("partial-fields", b"GET / HTTP/1.1\r\nHost: a\r\n", 0),
    ("partial-non-ascii-target-decided-at-once", b"GET /\xe9", 400),
    ("long-value-decided-before-its-bad-octet", b"GET / HTTP/1.1\r\nX: " + b"a" * 16400
     + b"\x00", 431),
    ("bad-octet-before-the-section-limit", b"GET / HTTP/1.1\r\nX: a\x00" + b"a" * 16400, 400),
    ("only-empty-lines", b"\r\n\r\n", 0),
]


@pytest.mark.parametrize("head, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_head_gets_its_status(head, expected):
    assert status(head) == expected


def test_partial_reports_droppable_empty_lines():
    assert parse(b"\r\n\nGE") == (PARTIAL, None, 3)


def test_complete_ends_after_the_head_only():
    outcome, _, end = parse(b"\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\nBODY")
    assert (outcome, end) == (COMPLETE, 29)


def test_pipelined_heads_parse_from_an_offset():
    data = b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"
    _, first, end = parse(data)
    _, second, _ = parse(data, end)
    assert (first[0], second[0]) == (HEALTH, REDIRECT)


def request(head: bytes) -> tuple:
    outcome, value, _ = parse(head)
    assert outcome == COMPLETE
    return value


def test_persistence_follows_version_and_connection_tokens():
    assert request(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")[4]
    assert not request(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, Close\r\n\r\n")[4]
    assert not request(b"GET / HTTP/1.0\r\n\r\n")[4]
    assert request(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")[4]


def test_body_chunked_and_expect_are_reported():
    assert request(b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\n")[5] == 12
    assert request(b"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n")[6]
    assert request(b"GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n"
                   b"Content-Length: 3\r\n\r\n")[7]
    assert not request(b"GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n")[7]
    assert not request(b"GET / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")[7]


def test_seed_from_origin_and_absolute_form():
    assert request(b"GET /?seed=a HTTP/1.1\r\nHost: a\r\n\r\n")[1] == fnv1a64(b"a")
    assert request(b"GET http://h?seed=a HTTP/1.1\r\nHost: a\r\n\r\n")[1] == fnv1a64(b"a")
    assert request(b"HEAD / HTTP/1.1\r\nHost: a\r\n\r\n")[2]


def vector_cases():
    """(name, input, status) for each vector whose input has no pause and whose first
    expected response is decided by the first head."""
    for path in sorted((VECTORS / "http").glob("*.json")):
        for case in json.loads(path.read_text())["cases"]:
            if not case["responses"] or any(isinstance(s, dict) and "hex" not in s
                                             and "repeat" not in s for s in case["send"]):
                continue
            data = b"".join(s.encode("latin-1") if isinstance(s, str) else
                            bytes.fromhex(s["hex"]) if "hex" in s else
                            s["repeat"].encode("latin-1") * s["times"] for s in case["send"])
            expected = case["responses"][0]["status"]
            if case.get("slow"):  # decided by the clock, not by the octets
                continue
            yield case["name"], data, expected[0] if isinstance(expected, list) else expected


VECTOR_CASES = list(vector_cases())


@pytest.mark.parametrize("data, expected", [c[1:] for c in VECTOR_CASES],
                         ids=[c[0] for c in VECTOR_CASES])
def test_vector_first_answer(data, expected):
    assert status(data) == expected


def test_resuming_from_a_checkpoint_equals_parsing_from_scratch():
    resumed = 0
    for _, head, _ in CASES:
        for cut in range(1, min(len(head), 400)):
            outcome, checkpoint, drop = parse(head[:cut])
            if outcome == PARTIAL and checkpoint is not None:
                rest = head[drop:]
                assert parse(rest, 0, checkpoint) == parse(rest), (head, cut)
                resumed += 1
    assert resumed > 1000
