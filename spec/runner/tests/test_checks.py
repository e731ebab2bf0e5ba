"""The runner's one-request checks send one well-formed request: a stray line after an empty
one is a second, broken request, which a strict server answers 400 for the whole buffer
(uvicorn did, and the check failed a correct server)."""

import socket
import threading

from renard_conformance.conformance import DEFAULT_LOCATION, Target, check_redirect


def test_check_redirect_sends_one_head_that_asks_to_close_and_nothing_after_it():
    listener = socket.create_server(("127.0.0.1", 0))
    received = bytearray()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(5)
            while b"\r\n\r\n" not in received:
                received.extend(conn.recv(4096))
            answer = f"HTTP/1.1 302 Found\r\nLocation: {DEFAULT_LOCATION.replace('{n}', '1')}\r\n"
            conn.sendall(answer.encode() + b"Content-Length: 0\r\nConnection: close\r\n\r\n")
            conn.settimeout(0.5)
            try:
                while data := conn.recv(4096):  # what the client sent after its head, until it closes
                    received.extend(data)
            except TimeoutError:
                pass

    server = threading.Thread(target=serve)
    server.start()
    try:
        assert check_redirect(Target("127.0.0.1", listener.getsockname()[1])) == ""
    finally:
        server.join(10)
        listener.close()
    head, _, after = bytes(received).partition(b"\r\n\r\n")
    assert after == b"", f"octets after the head: {after!r}"
    assert b"\r\nConnection: close" in head and head.startswith(b"GET / HTTP/1.1\r\n"), head
