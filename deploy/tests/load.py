"""Visitors in threads, each on its own keep-alive HTTPS connection through nginx, counting
every answer: for the tests that restart renard under load."""

import collections
import re
import threading

from http_client import Client
from stack import Stack

MAX_REQUESTS = 50_000  # per client: every load is bounded in count as well as in time
K_RE = re.compile(r"/Renard-(\d+)\.(?:svg|png)$")


class Load:
    """`clients` visitors asking GET / until stopped: the k of each answer in `ks`, and every
    failure (an error, or an answer other than a 302 to an image) in `failures`."""

    def __init__(self, stack: Stack, clients: int = 4):
        self.stack, self.stop = stack, threading.Event()
        self.failures: list[str] = []
        self.counters = [collections.Counter() for _ in range(clients)]
        self.threads = [threading.Thread(target=self.visit, args=(c,)) for c in self.counters]

    def visit(self, ks: collections.Counter) -> None:
        client = Client(self.stack.port, tls=self.stack.tls())
        for _ in range(MAX_REQUESTS):
            if self.stop.is_set():
                break
            try:
                answer = client.get("/")
            except OSError as e:
                self.failures.append(repr(e))
                client.close()
                continue
            match = K_RE.search(answer.headers.get("location", ""))
            if answer.status != 302 or not match:
                self.failures.append(f"{answer.status} {answer.body[:80]!r}")
                continue
            ks[int(match.group(1))] += 1
        client.close()

    def __enter__(self) -> "Load":
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=30)

    def ks(self) -> collections.Counter:
        return sum(self.counters, collections.Counter())
