"""The differential's own tests, no renard needed: the normalisation masks the Date value and
the k of unseeded draws and nothing else, the inputs are the same for the same seed, and two
small socket servers that answer one input differently are told apart (with the input in hex
and both answers), while two that agree are not."""

from __future__ import annotations

import contextlib
import socket
import threading

from renard_conformance import differential

LOCATION = "https://x.test/a-{n}/b-{n}.png"
DATE = b"Date: Mon, 23 Nov 2026 01:02:03 GMT"


def response(location: bytes, cache: bytes, date: bytes = DATE) -> bytes:
    return (
        b"HTTP/1.1 302 Found\r\nLocation: " + location + b"\r\nCache-Control: " + cache + b"\r\n" + date + b"\r\n"
        b"Content-Length: 0\r\n\r\n"
    )


def test_normalise_masks_the_date_value_and_the_k_of_unseeded_draws():
    one = response(b"https://x.test/a-7/b-7.png", b"no-store")
    other = response(b"https://x.test/a-12/b-12.png", b"no-store", b"Date: Tue, 24 Nov 2026 23:59:59 GMT")
    assert differential.normalise(one, LOCATION) == differential.normalise(other, LOCATION)
    assert b"<k>" in differential.normalise(one, LOCATION)


def test_normalise_keeps_the_k_of_seeded_draws_and_a_malformed_date():
    seeded = [response(b"https://x.test/a-%d/b-%d.png" % (k, k), b"public, max-age=86400") for k in (7, 8)]
    assert differential.normalise(seeded[0], LOCATION) != differential.normalise(seeded[1], LOCATION)
    bad_date = response(b"https://x.test/a-7/b-7.png", b"no-store", b"Date: Mon, 23 Nov 2026 1:02:03 GMT")
    assert b"<date>" not in differential.normalise(bad_date, LOCATION)
    other_host = response(b"https://y.test/a-7/b-7.png", b"no-store")
    assert b"<k>" not in differential.normalise(other_host, LOCATION)


def test_inputs_are_the_same_for_the_same_seed_and_start_with_the_bases():
    first, again = differential.inputs(400, seed=5), differential.inputs(400, seed=5)
    assert first == again
    assert first != differential.inputs(400, seed=6)
    assert [i.data for i in first[: len(differential.HAND_BASES)]] == differential.HAND_BASES
    assert any(i.cuts for i in first) and any(not i.cuts for i in first)
    for item in first:
        assert b"".join(item.pieces()) == item.data
        assert all(0 < cut < len(item.data) for cut in item.cuts)


@contextlib.contextmanager
def toy_server(answer):
    """A loopback server: per connection reads to EOF, writes answer(received), closes."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            received = b""
            with contextlib.suppress(OSError):
                while chunk := conn.recv(65536):
                    received += chunk
                conn.sendall(answer(received))

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[:2]
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def test_compare_reports_the_input_in_hex_and_both_answers_where_servers_differ():
    def flagship(data: bytes) -> bytes:
        return b"HTTP/1.1 400 Bad Request\r\n\r\n" if b"\x00" in data else b"HTTP/1.1 200 OK\r\n\r\n"

    def entry(data: bytes) -> bytes:
        return b"HTTP/1.1 200 OK\r\n\r\n"

    sent = [
        differential.Input(0, b"GET / HTTP/1.1\r\n\r\n"),
        differential.Input(1, b"GET /\x00 HTTP/1.1\r\n\r\n", (3,)),
    ]
    with toy_server(flagship) as a, toy_server(entry) as b:
        result = differential.compare(differential.Pair(a, b, close_within_s=3), sent)
    assert result.inputs == 2 and not result.unstable
    [difference] = result.differences
    assert difference.input.index == 1 and difference.repeated
    report = difference.report()
    assert sent[1].data.hex() in report and "400 Bad Request" in report and "200 OK" in report
    assert difference.figures()["input_hex"] == sent[1].data.hex()


def test_compare_finds_nothing_between_servers_that_agree_up_to_date_and_k():
    def answer(data: bytes) -> bytes:
        k = threading.get_ident() % 1000
        return response(b"https://x.test/a-%d/b-%d.png" % (k, k), b"no-store")

    with toy_server(answer) as a, toy_server(answer) as b:
        result = differential.compare(differential.Pair(a, b, LOCATION, 3), differential.inputs(30))
    assert result.inputs == 30 and not result.differences and not result.unstable
