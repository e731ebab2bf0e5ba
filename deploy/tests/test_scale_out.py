"""Three renards behind one nginx upstream (HTTPS in front): one instance stopped (SIGTERM) and another
killed (SIGKILL), each restarted, under load, and not one visitor's request fails."""

import collections
import re
import signal
import threading
import time

import pytest

from http_client import Client
from stack import Stack

CLIENTS = 4
LOAD_S = 6.0  # the whole load, bounded in time ...
MAX_REQUESTS = 50_000  # ... and in count, per client
K_RE = re.compile(r"/Renard-(\d+)\.svg$")


def load(stack: Stack, stop: threading.Event, ks: collections.Counter, failures: list) -> None:
    client = Client(stack.port, tls=stack.tls())
    for _ in range(MAX_REQUESTS):
        if stop.is_set():
            break
        try:
            answer = client.get("/")
        except OSError as e:
            failures.append(repr(e))
            client.close()
            continue
        match = K_RE.search(answer.headers.get("location", ""))
        if answer.status != 302 or not match:
            failures.append(f"{answer.status} {answer.body[:80]!r}")
            continue
        ks[int(match.group(1))] += 1
    client.close()


@pytest.fixture
def three(renard, tmp_path):
    with Stack(renard, tmp_path, instances=3) as s:
        yield s


def test_no_request_fails_while_instances_stop_and_restart(three, chi_square):
    stop, failures = threading.Event(), []
    counters = [collections.Counter() for _ in range(CLIENTS)]
    threads = [threading.Thread(target=load, args=(three, stop, c, failures)) for c in counters]
    for t in threads:
        t.start()
    try:
        time.sleep(1.0)
        assert three.stop_instance(1, signal.SIGTERM) == 0  # a graceful stop (SPEC §7.6)
        time.sleep(1.0)
        three.start_instance(1)
        time.sleep(1.0)
        three.stop_instance(2, signal.SIGKILL)  # a crash
        time.sleep(1.0)
        three.start_instance(2)
        time.sleep(max(0.0, LOAD_S - 4.0))
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
    ks = sum(counters, collections.Counter())
    total = sum(ks.values())
    assert failures == [], f"{len(failures)} of {total + len(failures)} requests failed: {failures[:5]}"
    assert total >= 1000, f"only {total} answers in {LOAD_S} s"
    _, _, p = chi_square([ks[k] for k in range(1, 22)], [total / 21] * 21)
    assert p > 1e-4, f"k is not uniform (p = {p:.2g}): {sorted(ks.items())}"
