"""Tests that need no server: the reference decoder and FNV, seeds.json, the runner's own
response parser and judge, the chi-square p-value, and the schema of the vector files."""

from __future__ import annotations

import functools
import json
import re

import pytest

from renard_conformance import conformance, judge, reference, stats, vectors, wire

VECTORS = vectors.VECTORS_DIR
SEEDS = json.loads((VECTORS / "seeds.json").read_text(encoding="utf-8"))
CASES = conformance.load_cases()
HTTP_CASES = [c for c in CASES if c.group != "seeds"]
TARGET = conformance.Target("127.0.0.1", 1)


# --- FNV-1a-64 -----------------------------------------------------------------------------


def fnv1a64_independent(data: bytes) -> int:
    """FNV-1a written differently (reduce, explicit modulus) to cross-check reference.fnv1a64."""
    return functools.reduce(lambda h, b: ((h ^ b) * 1099511628211) % 2**64, data, 14695981039346656037)


@pytest.mark.parametrize(
    "data, expected",
    [
        (b"", 0xCBF29CE484222325),  # the offset basis
        (b"a", 0xAF63DC4C8601EC8C),  # published FNV-1a 64 test values
        (b"foobar", 0x85944171F73967E8),
    ],
)
def test_fnv1a64_known_values(data, expected):
    assert reference.fnv1a64(data) == expected == fnv1a64_independent(data)


@pytest.mark.parametrize("data", [b"renard", bytes(range(256)), b"\xff" * 1024, "café".encode()])
def test_fnv1a64_agrees_with_independent_version(data):
    assert reference.fnv1a64(data) == fnv1a64_independent(data)


def test_pick_of_empty_seed_is_offset_basis_mod_n_plus_1():
    assert reference.pick(b"", 21) == 0xCBF29CE484222325 % 21 + 1


# --- form decoding and seed finding (SPEC §3.1) ---------------------------------------------


@pytest.mark.parametrize(
    "encoded, decoded",
    [
        (b"", b""),
        (b"abc", b"abc"),
        (b"a+b", b"a b"),
        (b"a%20b", b"a b"),
        (b"%2B", b"+"),
        (b"%c3%a9", b"\xc3\xa9"),
        (b"%C3%A9", b"\xc3\xa9"),
        (b"%aB", b"\xab"),
        (b"%", b"%"),
        (b"%4", b"%4"),
        (b"ab%4", b"ab%4"),
        (b"%zz", b"%zz"),
        (b"%%41", b"%A"),
        (b"%2", b"%2"),
        (b"%g1", b"%g1"),
        (b"%00", b"\x00"),
        (b"%25", b"%"),
        (b"%2525", b"%25"),
    ],
)
def test_decode_form_component(encoded, decoded):
    assert reference.decode_form_component(encoded) == decoded


@pytest.mark.parametrize(
    "query, seed",
    [
        (None, None),
        ("", None),
        ("r=7", None),
        ("seeds=a", None),
        ("xseed=a", None),
        ("SEED=a", None),
        ("seed=", b""),
        ("seed", b""),
        ("seed=a&seed=b", b"a"),
        ("x=1&seed=b", b"b"),
        ("se%65d=c", b"c"),
        ("seed=a;b", b"a;b"),
        ("x;seed=a", None),
        ("seed=a=b", b"a=b"),
        ("&&seed=z", b"z"),
    ],
)
def test_find_seed(query, seed):
    assert reference.find_seed(query) == seed


@pytest.mark.parametrize("vector", SEEDS["vectors"], ids=lambda v: v["name"])
def test_seeds_json_vector_matches_reference(vector):
    seed = reference.find_seed(vector["query"])
    assert (None if seed is None else seed.hex()) == vector["seed_hex"]
    if seed is not None:
        assert vector["k"] == fnv1a64_independent(seed) % vector["n"] + 1 == reference.pick(seed, vector["n"])
    else:
        assert vector["k"] is None


def test_seeds_json_has_required_coverage():
    vectors = SEEDS["vectors"]
    queries = [v["query"] for v in vectors]
    assert SEEDS["schema"] == 1 and len(vectors) >= 40
    assert len({v["name"] for v in vectors}) == len(vectors)
    assert {1, 21, 1_000_000} <= {v["n"] for v in vectors}
    assert all(re.fullmatch(r"[\x21-\x7e]*", q) for q in queries), "queries are sent as visible ASCII"
    for needed in [
        "seed=",
        "seed",
        "seed=a+b",
        "seed=a%20b",
        "seed=%zz",
        "seed=ab%4",
        "seed=%",
        "se%65d=abc",
        "seeds=abc",
        "xseed=abc",
        "seed=a;b=c",
        "seed=first&seed=second",
    ]:
        assert needed in queries, needed
    assert any(len(v["seed_hex"] or "") >= 2048 for v in vectors), "a 1 KiB seed"


# --- the response parser: complete, need more, malformed -------------------------------------

REDIRECT = (
    b"HTTP/1.1 302 Found\r\nLocation: https://avatar.example.org/Renard-7.png\r\n"
    b"Cache-Control: no-store\r\nDate: Sun, 22 Nov 2026 00:00:00 GMT\r\nContent-Length: 0\r\n\r\n"
)
HEALTHZ = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n"
    b"Date: Sun, 22 Nov 2026 00:00:00 GMT\r\nContent-Length: 3\r\n\r\nok\n"
)


def test_parse_complete_redirect():
    response, used = wire.parse_response(REDIRECT + b"extra", False, False)
    assert (used, response.status, response.reason, response.version) == (len(REDIRECT), 302, "Found", "HTTP/1.1")
    assert response.names() == ["Location", "Cache-Control", "Date", "Content-Length"]
    assert response.values("LOCATION") == ["https://avatar.example.org/Renard-7.png"]


def test_parse_body_by_content_length():
    response, used = wire.parse_response(HEALTHZ + REDIRECT, False, False)
    assert (response.body, used) == (b"ok\n", len(HEALTHZ))


def test_parse_head_response_has_no_body():
    head = HEALTHZ[:-3]
    response, used = wire.parse_response(head + REDIRECT, True, False)
    assert (response.body, used) == (b"", len(head))


@pytest.mark.parametrize("cut", range(0, len(HEALTHZ)))
def test_parse_every_prefix_needs_more(cut):
    assert wire.parse_response(HEALTHZ[:cut], False, False) is wire.NEED_MORE


@pytest.mark.parametrize("cut", [1, 30, len(HEALTHZ) - 1])
def test_parse_prefix_at_eof_is_malformed(cut):
    with pytest.raises(wire.MalformedResponse):
        wire.parse_response(HEALTHZ[:cut], False, True)


def test_parse_empty_at_eof_needs_more():
    assert wire.parse_response(b"", False, True) is wire.NEED_MORE


def test_parse_chunked_body():
    raw = b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n"
    response, used = wire.parse_response(raw + b"HTTP", False, False)
    assert (response.body, used, response.framing) == (b"abcde", len(raw), "chunked")


def test_parse_body_until_close():
    raw = b"HTTP/1.0 400 Bad Request\r\nServer: x\r\n\r\n<html>"
    assert wire.parse_response(raw, False, False) is wire.NEED_MORE
    response, used = wire.parse_response(raw, False, True)
    assert (response.body, response.framing) == (b"<html>", "close")


def test_parse_interim_100_continue():
    response, used = wire.parse_response(b"HTTP/1.1 100 Continue\r\n\r\n" + REDIRECT, False, False)
    assert (response.status, used) == (100, 25)


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/1.1 302 Found\nLocation: x\r\n\r\n",  # bare LF
        b"HTTP/1.1 302 Found\r\nLocation: x\n\n",  # bare LF, no CRLFCRLF
        b"HTTP/1.1 302\r\nDate: x\r\n\r\n",  # no SP before the reason
        b"HTTP/1.1 30 Found\r\n\r\n",  # two-digit status
        b"HTTP/1.1 302 Found\r\nLocation x\r\n\r\n",  # no colon
        b"HTTP/1.1 302 Found\r\nLocation : x\r\n\r\n",  # space before colon
        b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",  # bad Content-Length
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
        b"<html>\n<body>400</body>\n",  # HTTP/0.9-style answer
        b"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n",  # bare CR
    ],
)
def test_parse_malformed(raw):
    with pytest.raises(wire.MalformedResponse):
        wire.parse_response(raw, False, False)


def test_escape_shows_control_octets():
    assert wire.escape(b"a\r\n\x00\xff") == "a\\r\\n\\x00\\xff"
    assert wire.escape(b"x" * 300).endswith("...")


# --- the judge: pass, alt, fail on canned transcripts ----------------------------------------


def transcript_of(raw: bytes, state: str = "open", heads=()) -> judge.Transcript:
    transcript, offset = judge.Transcript(state=state), 0
    while offset < len(raw):
        response, used = wire.parse_response(raw[offset:], len(transcript.responses) in heads, True)
        transcript.responses.append(response)
        offset += used
    return transcript


def with_date_now(raw: bytes) -> bytes:
    import email.utils

    return raw.replace(b"Sun, 22 Nov 2026 00:00:00 GMT", email.utils.formatdate(usegmt=True).encode())


EXPECT_REDIRECT = {
    "responses": [{"status": 302, "headers": {"location": "{location}", "cache-control": "no-store"}, "body": ""}],
    "then": "open",
}


def test_judge_exact_redirect_passes():
    assert judge.match(EXPECT_REDIRECT, transcript_of(with_date_now(REDIRECT)), TARGET) == ("pass", "")


def test_judge_extra_server_field_is_alt():
    raw = with_date_now(REDIRECT).replace(b"\r\n\r\n", b"\r\nServer: nginx\r\n\r\n")
    verdict, detail = judge.match(EXPECT_REDIRECT, transcript_of(raw), TARGET)
    assert verdict == "alt" and "Server" in detail


def test_judge_reordered_fields_is_alt():
    raw = (
        with_date_now(REDIRECT)
        .replace(b"Cache-Control: no-store\r\n", b"")
        .replace(b"Content-Length: 0\r\n", b"Content-Length: 0\r\nCache-Control: no-store\r\n")
    )
    assert judge.match(EXPECT_REDIRECT, transcript_of(raw), TARGET)[0] == "alt"


@pytest.mark.parametrize(
    "change",
    [
        (b"302 Found", b"301 Moved Permanently"),  # wrong status
        (b"Renard-7.png", b"Renard-22.png"),  # k out of 1..21
        (b"Renard-7.png", b"Renard-07.png"),  # leading zero
        (b"no-store", b"public, max-age=86400"),  # seeded cache policy
        (b"Date: ", b"X-Date: "),  # no Date
    ],
)
def test_judge_wrong_redirect_fails(change):
    raw = with_date_now(REDIRECT).replace(*change)
    assert judge.match(EXPECT_REDIRECT, transcript_of(raw), TARGET)[0] == "fail"


def test_judge_closed_when_open_expected_fails():
    transcript = transcript_of(with_date_now(REDIRECT), state="closed")
    verdict, detail = judge.match(EXPECT_REDIRECT, transcript, TARGET)
    assert verdict == "fail" and "closed" in detail


def test_judge_extra_response_fails():
    transcript = transcript_of(with_date_now(REDIRECT + REDIRECT))
    assert judge.match(EXPECT_REDIRECT, transcript, TARGET)[0] == "fail"


def test_judge_seeded_location_computed_for_target_count():
    k = reference.pick(b"fox", 1000)
    target = conformance.Target("127.0.0.1", 1, count=1000, location="http://x/{n}/{n}.png")
    raw = (
        with_date_now(REDIRECT)
        .replace(b"https://avatar.example.org/Renard-7.png", f"http://x/{k}/{k}.png".encode())
        .replace(b"no-store", b"public, max-age=86400")
    )
    expect = {
        "responses": [
            {
                "status": 302,
                "headers": {"location": {"seed_of_query": "seed=fox"}, "cache-control": "public, max-age=86400"},
            }
        ],
        "then": "open",
    }
    assert judge.match(expect, transcript_of(raw), target) == ("pass", "")


@pytest.mark.parametrize(
    "template, value, k",
    [
        ("https://a.test/{n}.png", "https://a.test/5.png", 5),
        ("https://a.test/{n}/{n}.png?x=(1)", "https://a.test/5/5.png?x=(1)", 5),
        ("https://a.test/{n}/{n}.png", "https://a.test/5/6.png", None),  # {n} differs
        ("https://a.test/{n}.png", "https://a.test/0.png", None),  # k = 0
        ("https://a.test/{n}.png", "https://a.test/22.png", None),  # k > N
    ],
)
def test_location_k(template, value, k):
    assert judge.location_k(value, conformance.Target("h", 1, count=21, location=template)) == k


# --- statistics ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "statistic, degrees, p",
    [
        (3.841, 1, 0.05),
        (31.410, 20, 0.05),
        (29.588, 10, 0.001),
        (20.0, 20, 0.4579),
        (0.0, 5, 1.0),
    ],
)
def test_chi_square_p_value_known_quantiles(statistic, degrees, p):
    assert stats.chi_square_p_value(statistic, degrees) == pytest.approx(p, abs=2e-4)


def test_uniform_check_rejects_a_biased_generator():
    ks = [1 + (i % 20) for i in range(21000)]  # k = 21 never drawn
    assert conformance._uniform_outcome(ks, conformance.Target("h", 1)).verdict == "fail"
    assert conformance._reachable_outcome(ks, conformance.Target("h", 1)).verdict == "fail"


def uniform_sample(seed: int) -> list[int]:
    import random

    generator = random.Random(seed)
    return [generator.randint(1, 21) for _ in range(21000)]


def suspect_sample() -> list[int]:
    """21 000 draws with k = 1 a third more often than each other k: chi-square 94.5, p < 1e-10."""
    return [1] * 1300 + [k for k in range(2, 22) for _ in range(985)]


def test_a_suspect_sample_alone_is_retested_and_a_fresh_uniform_one_passes():
    samples = iter([suspect_sample(), uniform_sample(7)])
    outcome, ks = conformance.judge_uniform(lambda: next(samples), conformance.Target("h", 1, count=21))
    assert outcome.verdict == "pass" and len(ks) == 42000
    assert outcome.detail.startswith("first sample suspect (chi-square ") and "a fresh one passed" in outcome.detail


def test_a_biased_server_fails_both_samples_and_the_detail_gives_both():
    outcome, ks = conformance.judge_uniform(suspect_sample, conformance.Target("h", 1, count=21))
    assert outcome.verdict == "fail" and len(ks) == 42000
    assert outcome.detail.count("chi-square") == 2 and outcome.detail.startswith("two samples suspect")


def test_a_uniform_first_sample_is_not_retested():
    draws = []
    outcome, _ = conformance.judge_uniform(lambda: draws.append(1) or uniform_sample(7), conformance.Target("h", 1))
    assert outcome.verdict == "pass" and outcome.detail == "" and draws == [1]


def test_uniform_check_accepts_a_uniform_sequence():
    import random

    generator = random.Random(7)
    ks = [generator.randint(1, 21) for _ in range(21000)]
    assert conformance._uniform_outcome(ks, conformance.Target("h", 1)).verdict == "pass"


def test_uniform_check_bins_a_large_n():
    import random

    generator = random.Random(8)
    target = conformance.Target("h", 1, count=1_000_000)
    ks = [generator.randint(1, 1_000_000) for _ in range(21000)]
    assert conformance._uniform_outcome(ks, target).verdict == "pass"
    assert conformance._uniform_outcome([k // 2 + 1 for k in ks], target).verdict == "fail"


# --- the vector files ------------------------------------------------------------------------


def test_vectors_load_with_unique_names():
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))


def test_enough_http_cases():
    assert len(HTTP_CASES) >= 60


@pytest.mark.parametrize("case", HTTP_CASES, ids=lambda c: c.name)
def test_case_is_well_formed(case):
    steps = vectors.compile_send(case.send, conformance.Target("h", 1, header_timeout=2, idle_timeout=3))
    assert all(isinstance(s, (bytes, float)) for s in steps)
    for expectation in [case.expect] + case.alternatives:
        for response in expectation["responses"]:
            statuses = response["status"] if isinstance(response["status"], list) else [response["status"]]
            assert all(type(s) is int for s in statuses)
            assert len(set(statuses)) == len(statuses)
    if case.slow:
        assert case.wait or any(isinstance(s, dict) and "pause" in s for s in case.send), (
            "slow cases wait for a timeout"
        )
    if case.expect["then"] == "close" and case.expect["responses"]:
        last = case.expect["responses"][-1]
        assert "connection" in last.get("headers", {}) or case.timing, "a close is announced"


@pytest.mark.parametrize(
    "section",
    [
        "§2",
        "§3",
        "§3.1",
        "§4",
        "§5 rule 1",
        "§5 rule 2",
        "§5 rule 3",
        "§5 rule 4",
        "§5 rule 5",
        "§5 rule 6",
        "§5 rule 7",
        "§5 rule 8",
        "§6",
        "§7.1",
        "§7.2",
        "§7.3",
        "§7.4",
        "§7.5",
    ],
)
def test_every_spec_section_has_a_case(section):
    assert any(section in case.rule for case in HTTP_CASES), section


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"rule": "SPEC §2", "send": [], "responses": [], "then": "close"}, "missing key 'name'"),
        ({"name": "x", "rule": "SPEC §2", "send": [], "responses": [{"status": "302"}], "then": "open"}, "status"),
        ({"name": "x", "rule": "SPEC §2", "send": [], "responses": [], "then": "maybe"}, "then"),
        ({"name": "x", "rule": "SPEC §2", "send": [{"bogus": 1}], "responses": [], "then": "open"}, "bad segment"),
        ({"name": "x", "rule": "SPEC §2", "send": [], "responses": [], "then": "open", "extra": 1}, "unknown keys"),
        ({"name": "X", "rule": "SPEC §2", "send": [], "responses": [], "then": "open"}, "name"),
    ],
)
def test_validate_case_rejects(bad, message):
    with pytest.raises(vectors.VectorError, match=message):
        vectors.validate_case(bad, "test")


# --- the boundary cases measure what their names say ------------------------------------------


def sent_octets(name: str) -> bytes:
    case = next(c for c in CASES if c.name == name)
    return b"".join(s for s in vectors.compile_send(case.send, TARGET) if isinstance(s, bytes))


@pytest.mark.parametrize(
    "name, length",
    [
        ("request-line-8000-served", 8000),
        ("request-line-8000-seeded", 8000),
        ("request-line-8192-served", 8192),
        ("request-line-8193-414", 8193),
        ("request-line-100k-414", 100000),
    ],
)
def test_request_line_length(name, length):
    assert sent_octets(name).index(b"\r\n") == length


@pytest.mark.parametrize(
    "name, octets, lines",
    [
        ("header-section-16384-served", 16384, 2),
        ("header-section-16385-431", 16385, 2),
        ("field-lines-100-served", None, 100),
        ("field-lines-101-431", None, 101),
    ],
)
def test_field_section_size(name, octets, lines):
    data = sent_octets(name)
    start = data.index(b"\r\n") + 2
    end = data.index(b"\r\n\r\n", start - 2) + 4
    assert octets is None or end - start == octets
    assert data[start:end].count(b"\r\n") - 1 == lines


# --- the draw survives a server that caps requests per connection ---------------------------


def serve_capped(listener, cap: int, connections: int) -> None:
    """Answers `connections` clients, each with at most `cap` redirects (k cycling 1..21),
    the last with `Connection: close`, then closes: nginx's keepalive_requests in miniature."""
    import socket as socketlib

    for _ in range(connections):
        try:
            client, _ = listener.accept()
        except OSError:  # the test closed the listener: done
            return
        with client:
            pending, answered = b"", 0
            while answered < cap:
                data = client.recv(65536)
                if not data:
                    break
                pending += data
                while b"\r\n\r\n" in pending and answered < cap:
                    _, pending = pending.split(b"\r\n\r\n", 1)
                    answered += 1
                    close = b"Connection: close\r\n" if answered == cap else b""
                    client.sendall(
                        b"HTTP/1.1 302 Found\r\nLocation: https://avatar.example.org/Renard-%d.png\r\n"
                        b"Content-Length: 0\r\n%s\r\n" % (answered % 21 + 1, close)
                    )
            client.shutdown(socketlib.SHUT_WR)


def test_draw_reconnects_when_the_server_closes_a_connection():
    import socket as socketlib
    import threading

    listener = socketlib.create_server(("127.0.0.1", 0))
    target = conformance.Target("127.0.0.1", listener.getsockname()[1])
    thread = threading.Thread(target=serve_capped, args=(listener, 7, 30), daemon=True)
    thread.start()
    try:
        ks = conformance.draw_unseeded(target, total=100, connections=1, batch=5)
    finally:
        listener.close()
    assert len(ks) == 100 and set(ks) <= set(range(1, 22))


# --- a server that answers one request per read (cpp-httplib's, which drops the rest) ------


def serve_first_of_each_read(listener) -> None:
    """Answers the first request of every read with a redirect (k cycling 1..21) and drops the
    rest of that read, as cpp-httplib 0.11 does (a fresh read buffer per request)."""
    import threading

    def serve(client):
        with client:
            answered = 0
            while data := client.recv(65536):
                if b"\r\n\r\n" in data:
                    answered += 1
                    client.sendall(
                        b"HTTP/1.1 302 Found\r\nLocation: https://avatar.example.org/Renard-%d.png\r\n"
                        b"Content-Length: 0\r\n\r\n" % (answered % 21 + 1)
                    )

    while True:
        try:
            client, _ = listener.accept()
        except OSError:  # the test closed the listener: done
            return
        client.settimeout(5)
        threading.Thread(target=serve, args=(client,), daemon=True).start()


@pytest.mark.parametrize("pipelined", [True, False])
def test_draw_sends_one_request_per_write_to_a_target_that_does_not_pipeline(pipelined):
    import socket as socketlib
    import threading

    listener = socketlib.create_server(("127.0.0.1", 0))
    target = conformance.Target("127.0.0.1", listener.getsockname()[1], pipelined=pipelined)
    threading.Thread(target=serve_first_of_each_read, args=(listener,), daemon=True).start()
    try:
        if pipelined:  # ten in a write, one answer: the draw says so
            with pytest.raises(conformance.CheckError, match="of 10 responses"):
                conformance.draw_unseeded(target, total=10, connections=1, batch=10)
        else:
            ks = conformance.draw_unseeded(target, total=60, connections=2, batch=10)
            assert len(ks) == 60 and set(ks) == set(range(1, 22))
    finally:
        listener.close()


# --- the one-answer check the arena uses (check_redirect) -----------------------------------


def answer_once(response: bytes) -> int:
    """A one-shot server that reads a request head, sends `response` and closes; its port."""
    import socket as socketlib
    import threading

    srv = socketlib.create_server(("127.0.0.1", 0))

    def serve():
        conn, _ = srv.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(1024)
            conn.sendall(response)
        srv.close()

    threading.Thread(target=serve, daemon=True).start()
    return srv.getsockname()[1]


LOC = "https://a.example/R-{n}.png"


@pytest.mark.parametrize(
    "response,ok",
    [
        (b"HTTP/1.1 302 Found\r\nLocation: https://a.example/R-7.png\r\n\r\n", True),
        (b"HTTP/1.1 302 Found\r\nLocation: https://a.example/R-22.png\r\n\r\n", False),  # k > count
        (b"HTTP/1.1 302 Found\r\nLocation: https://a.example/R-0.png\r\n\r\n", False),  # k < 1
        (b"HTTP/1.1 200 OK\r\nLocation: https://a.example/R-7.png\r\n\r\n", False),  # not 302
        (b"HTTP/1.1 302 Found\r\n\r\n", False),  # no Location
        (b"HTTP/1.1 302 Found\r\nLocation: https://b.example/R-7.png\r\n\r\n", False),  # other template
    ],
)
def test_check_redirect_wants_302_with_templated_location(response, ok):
    target = conformance.Target("127.0.0.1", answer_once(response), count=21, location=LOC)
    problem = conformance.check_redirect(target)
    assert (problem == "") is ok, problem


def test_check_redirect_cannot_connect_raises_oserror():
    import socket as socketlib

    with socketlib.create_server(("127.0.0.1", 0)) as srv:
        port = srv.getsockname()[1]
    with pytest.raises(OSError):
        conformance.check_redirect(conformance.Target("127.0.0.1", port))


@pytest.mark.parametrize("value, k", [("/3/x3", 3), ("/3/x4", None)])
def test_location_requires_the_same_k_for_every_placeholder(value, k):
    assert judge.location_k(value, conformance.Target("h", 1, location="/{n}/x{n}")) == k
