"""A `then: open` case against small servers on loopback: the probes after the expected
responses prove the connection open, and an extra response fails the case however late it
comes (the runner reads to the EOF the second probe asks for, not for a fixed time)."""

import socket
import threading
import time
from email.utils import formatdate

import pytest

from renard_conformance import conformance
from renard_conformance.vectors import Case

LINGER_S = 2.0  # a closing server reads what the client still sends for this long (SPEC §7.4)
EXTRA_AFTER_S = 0.3  # an extra response this late escaped the runner's old 50 ms wait

GET_ROOT_THEN_OPEN = Case(
    name="get-root-then-open",
    group="test",
    rule="SPEC §7.1",
    send=["GET / HTTP/1.1\r\nHost: renard.test\r\n\r\n"],
    expect={"responses": [{"status": 302, "headers": {"location": "{location}"}}], "then": "open"},
)


def answer(status: int, close: bool) -> bytes:
    """SPEC §4's bytes for a 302 to Renard-7 or a /healthz answer (200 or 404)."""
    fields = {
        302: b"Location: https://avatar.example.org/Renard-7.png\r\nCache-Control: no-store\r\n",
        200: b"Content-Type: text/plain\r\nCache-Control: no-store\r\n",
        404: b"",
    }[status]
    body = b"ok\n" if status == 200 else b""
    reason = {302: b"Found", 200: b"OK", 404: b"Not Found"}[status]
    return b"HTTP/1.1 %d %s\r\n%sDate: %s\r\nContent-Length: %d\r\n%s\r\n%s" % (
        status,
        reason,
        fields,
        formatdate(usegmt=True).encode(),
        len(body),
        b"Connection: close\r\n" if close else b"",
        body,
    )


def close_politely(client: socket.socket) -> None:
    """Half-close, then read until the client closes (bounded): no reset loses our answers."""
    client.shutdown(socket.SHUT_WR)
    client.settimeout(LINGER_S)
    try:
        while client.recv(65536):
            pass
    except OSError:
        pass


def serve(listener, healthz_status=200, extra_after_s=None, extra_closes=False, close_after_first=False, drops=False):
    """One connection: every request answered in order (a 302 for /, healthz_status for
    /healthz), closing after one that asks to; after the first answer, optionally an
    extra 302 extra_after_s later (then closing if extra_closes), or a close. drops: the rest
    of a read after its first request is dropped, as cpp-httplib 0.11 does."""
    client, _ = listener.accept()
    with client:
        pending, answered = b"", 0
        while True:
            while b"\r\n\r\n" in pending:
                head, pending = pending.split(b"\r\n\r\n", 1)
                closing = b"connection: close" in head.lower()
                status = healthz_status if head.startswith(b"GET /healthz ") else 302
                client.sendall(answer(status, closing))
                answered += 1
                if closing or (answered == 1 and close_after_first):
                    return close_politely(client)
                if answered == 1 and extra_after_s is not None:
                    time.sleep(extra_after_s)
                    client.sendall(answer(302, extra_closes))
                    if extra_closes:
                        return close_politely(client)
                if drops:
                    pending = b""
            data = client.recv(65536)
            if not data:
                return
            pending += data


def replay_against(pipelined=True, **behaviour) -> conformance.Outcome:
    listener = socket.create_server(("127.0.0.1", 0))
    server = threading.Thread(target=serve, args=(listener,), kwargs=behaviour, daemon=True)
    server.start()
    try:
        target = conformance.Target("127.0.0.1", listener.getsockname()[1], pipelined=pipelined)
        return conformance.replay(GET_ROOT_THEN_OPEN, target)
    finally:
        server.join(LINGER_S + 5)
        listener.close()


@pytest.mark.parametrize("healthz_status", [200, 404])
def test_an_open_connection_passes_and_the_probes_answers_are_not_counted(healthz_status):
    outcome = replay_against(healthz_status=healthz_status)
    assert (outcome.verdict, outcome.detail) == ("pass", "")


def test_an_extra_response_fails_the_case_however_late_it_comes():
    outcome = replay_against(extra_after_s=EXTRA_AFTER_S)
    assert outcome.verdict == "fail"
    assert "expected 1 response(s) [302], got 2 [302 302]" in outcome.detail, outcome.detail


def test_an_extra_response_then_a_close_fails_the_case():
    outcome = replay_against(extra_after_s=EXTRA_AFTER_S, extra_closes=True)
    assert outcome.verdict == "fail"
    assert "got 2 [302 302]; connection closed" in outcome.detail, outcome.detail


def test_a_close_after_the_response_fails_an_open_case():
    outcome = replay_against(close_after_first=True)
    assert outcome.verdict == "fail"
    assert "expected the connection to stay open" in outcome.detail, outcome.detail


@pytest.mark.parametrize("pipelined", [True, False])
def test_a_target_that_does_not_pipeline_gets_its_probes_one_per_write(pipelined):
    """A server that drops what a read holds after its first request answers one of two
    pipelined probes; sent one per write (Target.pipelined False), it answers both."""
    outcome = replay_against(pipelined=pipelined, drops=True)
    assert outcome.verdict == ("fail" if pipelined else "pass"), outcome.detail
