"""SPEC §7.6 across workers: a worker's drain answers nothing until every worker's listener
is closed, so that a client told `Connection: close` cannot reconnect to a sibling that still
listens; its own listener refuses at once. On a real loop and a real listening socket."""

import asyncio
import socket
import threading
import time

import pytest

from renard_py import config, worker
from renard_py.worker import LocalCounter, Worker


def test_the_drain_answers_nothing_until_every_listener_is_closed(monkeypatch):
    monkeypatch.setattr(worker, "LISTENERS_WAIT_S", 30.0)  # the wait, not its bound
    listening = LocalCounter()
    listening.add(2)  # this worker's listener and a sibling's
    w = Worker(config.parse([], {}, cpus=1), LocalCounter(), listening=listening)
    loop = asyncio.new_event_loop()
    sock = socket.create_server(("127.0.0.1", 0))
    sock.setblocking(False)
    port = sock.getsockname()[1]
    w.loop, w.sock = loop, sock
    w.server = loop.run_until_complete(loop.create_server(w.new_connection, sock=sock))
    order = []

    def sibling_closes_its_listener():
        time.sleep(0.05)
        order.append("sibling closed")
        listening.add(-1)

    sibling = threading.Thread(target=sibling_closes_its_listener)
    sibling.start()
    try:
        w.shutdown()  # returns when the loop may answer again, now with Connection: close
        order.append("drain answers")
        assert order == ["sibling closed", "drain answers"]
        assert w.shutting_down and listening.add(0) == 0
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
    finally:
        sibling.join(5)
        w.server.close()
        loop.run_until_complete(w.server.wait_closed())
        loop.close()
        sock.close()
