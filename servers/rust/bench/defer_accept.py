"""What Linux's TCP_DEFER_ACCEPT does to a connection, on this kernel (SPEC §7.5, §7.6 rest on
it): a listener with the option and a client on loopback; the listener is never renard, so
what is seen is the kernel's. Prints one line per case, about 10 s in all.

    python3 bench/defer_accept.py
"""

import select
import socket
import time

REQUEST = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"


def listener(defer_s: int | None) -> socket.socket:
    """A listening socket on 127.0.0.1, with TCP_DEFER_ACCEPT = defer_s unless None."""
    sock = socket.socket()
    if defer_s is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, defer_s)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    return sock


def acceptable_within(sock: socket.socket, limit_s: float) -> float | None:
    """Seconds until sock has a connection to accept, None if none within limit_s."""
    started = time.monotonic()
    ready, _, _ = select.select([sock], [], [], limit_s)
    return time.monotonic() - started if ready else None


def silent(defer_s: int) -> str:
    """A client that sends nothing: how long the kernel holds it before accept sees it."""
    with listener(defer_s) as sock, socket.create_connection(sock.getsockname()):
        waited = acceptable_within(sock, 30)
        stored = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT)
        return f"silent client, deferral {defer_s} s (stored as {stored}): acceptable after {waited:.2f} s"


def one_octet(after_s: float) -> str:
    """A client that sends one octet after after_s: acceptable when it arrives."""
    with listener(1) as sock, socket.create_connection(sock.getsockname()) as client:
        time.sleep(after_s)
        held = acceptable_within(sock, 0) is None
        client.send(b"G")
        waited = acceptable_within(sock, 5)
        accepted, _ = sock.accept()
        with accepted:
            octet = accepted.recv(1)
        return (
            f"one octet {after_s} s after the connect, deferral 1 s: held until then {held}; "
            f"acceptable {waited * 1000:.2f} ms after it, read at the accept: {octet!r}"
        )


def listener_closes(defer_s: int | None, sends_first: bool) -> str:
    """The listener closes while the client's connection waits, unaccepted: what the
    client sees (for 2 s, then when it sends a request)."""
    sock = listener(defer_s)
    with socket.create_connection(sock.getsockname()) as client:
        if sends_first:
            client.send(REQUEST)
        time.sleep(0.2)
        queued = acceptable_within(sock, 0) is not None
        sock.close()
        client.settimeout(2)
        try:
            seen = f"read {client.recv(100)!r}"
        except TimeoutError:
            seen = "nothing for 2 s"
        except OSError as err:
            seen = err.strerror
        try:
            client.send(REQUEST)
            time.sleep(0.2)
            then = f"read {client.recv(100)!r}"
        except OSError as err:
            then = err.strerror
    where = "queued" if queued else "held by the kernel"
    sent = "sent its request" if sends_first else "sent nothing"
    return f"listener closed, deferral {defer_s}, client {sent} ({where}): {seen}; sends a request: {then}"


if __name__ == "__main__":
    for defer_s in (1, 5):
        print(silent(defer_s))
    for after_s in (0.0, 0.5):
        print(one_octet(after_s))
    for defer_s, sends_first in ((1, False), (1, True), (None, False)):
        print(listener_closes(defer_s, sends_first))
